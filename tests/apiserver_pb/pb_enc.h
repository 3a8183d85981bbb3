/* pb_enc.h: a tiny protobuf encoder for hand-made request bodies in the
 * tests of tests/apiserver_pb (bytes exactly as a test wants them,
 * malformed ones included). */
#ifndef DRA_TEST_PB_ENC_H
#define DRA_TEST_PB_ENC_H

#include "dra_test.h"

typedef struct pbuf {
    unsigned char b[4096];
    size_t n;
} pbuf;

static inline void put(pbuf *p, const void *src, size_t n)
{
    assert_true(p->n + n <= sizeof p->b);
    memcpy(p->b + p->n, src, n);
    p->n += n;
}

static inline void put_varint(pbuf *p, uint64_t v)
{
    do {
        unsigned char c = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            c |= 0x80;
        put(p, &c, 1);
    } while (v);
}

static inline void put_tag(pbuf *p, uint32_t num, unsigned wt)
{
    put_varint(p, ((uint64_t)num << 3) | wt);
}

static inline void put_bytes(pbuf *p, uint32_t num, const void *s, size_t n)
{
    put_tag(p, num, 2);
    put_varint(p, n);
    put(p, s, n);
}

static inline void put_str(pbuf *p, uint32_t num, const char *s)
{
    put_bytes(p, num, s, strlen(s));
}

static inline void put_msg(pbuf *p, uint32_t num, const pbuf *m)
{
    put_bytes(p, num, m->b, m->n);
}

/* "k8s\0" + Unknown{typeMeta{av, kind}, raw} */
static inline void envelope(pbuf *out, const char *av, const char *kind, const pbuf *raw)
{
    pbuf tm = {{0}, 0};
    out->n = 0;
    put(out, "k8s", 4);
    if (av)
        put_str(&tm, 1, av);
    if (kind)
        put_str(&tm, 2, kind);
    put_msg(out, 1, &tm);
    if (raw)
        put_msg(out, 2, raw);
}

#endif
