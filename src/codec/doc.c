/* The document model shared by the JSON and YAML codecs: node builders,
 * lookup and deep equality. Every node lives in a caller-owned arena. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec_int.h"

dra_doc *codec_node(dra_arena *a, dra_doc_kind kind, int line, int col)
{
    dra_doc *d = dra_arena_zalloc(a, sizeof *d);
    if (d) {
        d->kind = kind;
        d->line = line;
        d->col = col;
    }
    return d;
}

/* Arrays made here carry their capacity in hidden slots just before the
 * first entry, tagged with the address of this marker. Arrays built by
 * hand (other modules fill u.map.m themselves) lack the tag and are
 * treated as full, so growing them copies instead of overrunning. */
static const char cap_tag[] = "dra_doc capacity";

dra_doc **codec_items(dra_arena *a, size_t n)
{
    const void **blk;
    if (n > SIZE_MAX / sizeof(void *) - 2)
        return NULL;
    blk = dra_arena_array(a, n + 2, sizeof(void *));
    if (!blk)
        return NULL;
    blk[0] = cap_tag;
    ((size_t *)blk)[1] = n;
    return (dra_doc **)(blk + 2);
}

dra_doc_member *codec_members(dra_arena *a, size_t n)
{
    dra_doc_member *m;
    if (n == SIZE_MAX)
        return NULL;
    m = dra_arena_array(a, n + 1, sizeof *m);
    if (!m)
        return NULL;
    m[0].key = cap_tag;
    m[0].keylen = n;
    return m + 1;
}

static size_t items_cap(const dra_doc *l)
{
    const void *const *blk = (const void *const *)l->u.list.items;
    if (!blk || blk[-2] != (const void *)cap_tag)
        return l->u.list.n;
    return ((const size_t *)blk)[-1];
}

static size_t members_cap(const dra_doc *m)
{
    if (!m->u.map.m || m->u.map.m[-1].key != cap_tag)
        return m->u.map.n;
    return m->u.map.m[-1].keylen;
}

dra_doc *dra_doc_new_null(dra_arena *a)
{
    return codec_node(a, DRA_DOC_NULL, 0, 0);
}

dra_doc *dra_doc_new_bool(dra_arena *a, int b)
{
    dra_doc *d = codec_node(a, DRA_DOC_BOOL, 0, 0);
    if (d)
        d->u.b = b != 0;
    return d;
}

dra_doc *dra_doc_new_int(dra_arena *a, int64_t i)
{
    dra_doc *d = codec_node(a, DRA_DOC_INT, 0, 0);
    if (d)
        d->u.i = i;
    return d;
}

dra_doc *dra_doc_new_float(dra_arena *a, double f)
{
    dra_doc *d = codec_node(a, DRA_DOC_FLOAT, 0, 0);
    if (d)
        d->u.f.f = f;
    return d;
}

dra_doc *dra_doc_new_string(dra_arena *a, const char *s, size_t len)
{
    dra_doc *d = codec_node(a, DRA_DOC_STRING, 0, 0);
    char *p;
    if (!d)
        return NULL;
    p = dra_arena_strndup(a, s, len);
    if (!p)
        return NULL;
    d->u.str.s = p;
    d->u.str.len = len;
    return d;
}

dra_doc *dra_doc_new_list(dra_arena *a, size_t cap)
{
    dra_doc *d = codec_node(a, DRA_DOC_LIST, 0, 0);
    if (!d)
        return NULL;
    if (cap && !(d->u.list.items = codec_items(a, cap)))
        return NULL;
    return d;
}

dra_doc *dra_doc_new_map(dra_arena *a, size_t cap)
{
    dra_doc *d = codec_node(a, DRA_DOC_MAP, 0, 0);
    if (!d)
        return NULL;
    if (cap && !(d->u.map.m = codec_members(a, cap)))
        return NULL;
    return d;
}

dra_err dra_doc_list_push(dra_arena *a, dra_doc *list, dra_doc *item)
{
    size_t n;
    if (!list || list->kind != DRA_DOC_LIST || !item)
        return DRA_EINVAL;
    n = list->u.list.n;
    if (n == items_cap(list)) {
        dra_doc **v = codec_items(a, n ? n * 2 : 4);
        if (!v)
            return DRA_ENOMEM;
        if (n)
            memcpy(v, list->u.list.items, n * sizeof *v);
        list->u.list.items = v;
    }
    list->u.list.items[n] = item;
    list->u.list.n = n + 1;
    return DRA_OK;
}

dra_err dra_doc_map_set(dra_arena *a, dra_doc *map, const char *key, dra_doc *val)
{
    size_t n, klen;
    char *k;
    if (!map || map->kind != DRA_DOC_MAP || !key || !val)
        return DRA_EINVAL;
    klen = strlen(key);
    n = map->u.map.n;
    for (size_t i = 0; i < n; i++) {
        dra_doc_member *m = &map->u.map.m[i];
        if (m->keylen == klen && memcmp(m->key, key, klen) == 0) {
            m->val = val;
            return DRA_OK;
        }
    }
    if (!(k = dra_arena_strndup(a, key, klen)))
        return DRA_ENOMEM;
    if (n == members_cap(map)) {
        dra_doc_member *m = codec_members(a, n ? n * 2 : 4);
        if (!m)
            return DRA_ENOMEM;
        if (n)
            memcpy(m, map->u.map.m, n * sizeof *m);
        map->u.map.m = m;
    }
    map->u.map.m[n].key = k;
    map->u.map.m[n].keylen = klen;
    map->u.map.m[n].val = val;
    map->u.map.n = n + 1;
    return DRA_OK;
}

/* Member |key| (|klen| bytes, not NUL-terminated) of |map|, or NULL. */
static const dra_doc *get_n(const dra_doc *map, const char *key, size_t klen)
{
    if (!map || map->kind != DRA_DOC_MAP)
        return NULL;
    for (size_t i = 0; i < map->u.map.n; i++) {
        const dra_doc_member *m = &map->u.map.m[i];
        if (m->keylen == klen && memcmp(m->key, key, klen) == 0)
            return m->val;
    }
    return NULL;
}

const dra_doc *dra_doc_get(const dra_doc *map, const char *key)
{
    return key ? get_n(map, key, strlen(key)) : NULL;
}

const dra_doc *dra_doc_at(const dra_doc *map, const char *dotted)
{
    const dra_doc *cur = map;
    const char *p = dotted;
    if (!dotted)
        return NULL;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n == 0 || (dot && dot[1] == '\0'))
            return NULL;
        cur = get_n(cur, p, n);
        p += n + (dot ? 1 : 0);
    }
    return cur;
}

static int num_equal(const dra_doc *x, const dra_doc *y)
{
    if (x->kind == DRA_DOC_INT && y->kind == DRA_DOC_INT)
        return x->u.i == y->u.i;
    if (x->kind == DRA_DOC_FLOAT && y->kind == DRA_DOC_FLOAT) {
        /* Numbers beyond double precision compare by their text when
         * both have one: 2^64 and 2^64+1 are different numbers. */
        if (x->u.f.num && y->u.f.num && x->u.f.f == y->u.f.f &&
            strchr(x->u.f.num, '.') == NULL && strchr(y->u.f.num, '.') == NULL &&
            strpbrk(x->u.f.num, "eE") == NULL && strpbrk(y->u.f.num, "eE") == NULL)
            return strcmp(x->u.f.num, y->u.f.num) == 0;
        return x->u.f.f == y->u.f.f;
    }
    if (x->kind == DRA_DOC_FLOAT) {
        const dra_doc *t = x;
        x = y;
        y = t;
    }
    /* x is INT, y is FLOAT. Compare as doubles: a float printed by its
     * shortest digits (7.041923886918632e+18 as 7041923886918632000) reads
     * back as a nearby int, and JSON numbers are doubles to most readers. */
    return (double)x->u.i == y->u.f.f;
}

static const dra_doc *member_find(const dra_doc *map, size_t hint,
                                  const char *key, size_t klen)
{
    const dra_doc_member *m = map->u.map.m;
    if (hint < map->u.map.n && m[hint].keylen == klen &&
        memcmp(m[hint].key, key, klen) == 0)
        return m[hint].val;
    for (size_t i = 0; i < map->u.map.n; i++)
        if (m[i].keylen == klen && memcmp(m[i].key, key, klen) == 0)
            return m[i].val;
    return NULL;
}

int dra_doc_equal(const dra_doc *x, const dra_doc *y)
{
    int xnum, ynum;
    if (x == y)
        return 1;
    if (!x || !y)
        return 0;
    xnum = x->kind == DRA_DOC_INT || x->kind == DRA_DOC_FLOAT;
    ynum = y->kind == DRA_DOC_INT || y->kind == DRA_DOC_FLOAT;
    if (xnum && ynum)
        return num_equal(x, y);
    if (x->kind != y->kind)
        return 0;
    switch (x->kind) {
    case DRA_DOC_NULL:
        return 1;
    case DRA_DOC_BOOL:
        return !x->u.b == !y->u.b;
    case DRA_DOC_STRING:
        return x->u.str.len == y->u.str.len &&
               memcmp(x->u.str.s, y->u.str.s, x->u.str.len) == 0;
    case DRA_DOC_LIST:
        if (x->u.list.n != y->u.list.n)
            return 0;
        for (size_t i = 0; i < x->u.list.n; i++)
            if (!dra_doc_equal(x->u.list.items[i], y->u.list.items[i]))
                return 0;
        return 1;
    case DRA_DOC_MAP:
        if (x->u.map.n != y->u.map.n)
            return 0;
        /* Keys are unique within a map (the decoders reject duplicates,
         * map_set replaces), so equal sizes plus inclusion is equality. */
        for (size_t i = 0; i < x->u.map.n; i++) {
            const dra_doc_member *m = &x->u.map.m[i];
            const dra_doc *v = member_find(y, i, m->key, m->keylen);
            if (!v || !dra_doc_equal(m->val, v))
                return 0;
        }
        return 1;
    default:
        return 0;
    }
}

/* ---- key order ------------------------------------------------------------ */

static int cmp_bytes(const void *x, const void *y)
{
    const dra_doc_member *a = x, *b = y;
    size_t n = a->keylen < b->keylen ? a->keylen : b->keylen;
    int c = memcmp(a->key, b->key, n);
    if (c)
        return c;
    return a->keylen < b->keylen ? -1 : a->keylen > b->keylen;
}

/* Decodes the code point at s[*i] (invalid bytes count as themselves). */
static uint32_t next_cp(const char *s, size_t len, size_t *i)
{
    uint32_t cp;
    int w = (int)dra_utf8_decode((const unsigned char *)s + *i, len - *i, &cp);
    if (w <= 0) {
        cp = (unsigned char)s[*i];
        w = 1;
    }
    *i += (size_t)w;
    return cp;
}

/* unicode.IsLetter, exact for ASCII; other scripts count as letters
 * except the general punctuation and symbol blocks. */
static int is_letter(uint32_t c)
{
    if (c < 0x80)
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return !(c <= 0xBF || (c >= 0x2000 && c <= 0x2BFF) || (c >= 0x3000 && c <= 0x303F));
}

static int is_digit(uint32_t c) { return c >= '0' && c <= '9'; }

/* go-yaml v2's keyList.Less for string keys: other characters sort
 * before letters, and runs of digits compare as numbers ("a2" < "a10"). */
static int cmp_yaml(const void *x, const void *y)
{
    const dra_doc_member *a = x, *b = y;
    size_t i = 0, j = 0;
    uint32_t prev = 0;
    int prev_digit_nonzero = 0;
    while (i < a->keylen && j < b->keylen) {
        size_t i0 = i, j0 = j;
        uint32_t ca = next_cp(a->key, a->keylen, &i), cb = next_cp(b->key, b->keylen, &j);
        int al, bl;
        int64_t an = 0, bn = 0;
        size_t ai, bi;
        if (ca == cb) {
            if (is_digit(ca))
                prev_digit_nonzero = prev_digit_nonzero || ca != '0';
            else
                prev_digit_nonzero = 0;
            prev = ca;
            continue;
        }
        al = is_letter(ca), bl = is_letter(cb);
        if (al && bl)
            return ca < cb ? -1 : 1;
        if (al || bl)
            return bl ? -1 : 1; /* other characters sort before letters */
        /* A zero inside a number that started with a non-zero digit
         * keeps the numeric comparison going (go-yaml's an = bn = 1). */
        if ((ca == '0' || cb == '0') && is_digit(prev) && prev_digit_nonzero)
            an = bn = 1;
        /* Go's int64 arithmetic wraps on long digit runs; so does ours. */
        for (ai = i0; ai < a->keylen && is_digit((unsigned char)a->key[ai]); ai++)
            an = (int64_t)((uint64_t)an * 10u + (uint64_t)(a->key[ai] - '0'));
        for (bi = j0; bi < b->keylen && is_digit((unsigned char)b->key[bi]); bi++)
            bn = (int64_t)((uint64_t)bn * 10u + (uint64_t)(b->key[bi] - '0'));
        if (an != bn)
            return an < bn ? -1 : 1;
        if (ai - i0 != bi - j0)
            return ai - i0 < bi - j0 ? -1 : 1;
        return ca < cb ? -1 : 1;
    }
    (void)prev;
    return (a->keylen - i) == 0 && (b->keylen - j) != 0 ? -1
         : (a->keylen - i) != 0 && (b->keylen - j) == 0 ? 1 : 0;
}

/* In place, no allocation, and only bounded index moves whatever the
 * comparator answers (keys are unique, so stability does not matter). */
static void sift_down(dra_doc_member *m, size_t root, size_t n,
                      int (*cmp)(const void *, const void *))
{
    for (;;) {
        size_t child = 2 * root + 1, big = root;
        dra_doc_member t;
        if (child < n && cmp(&m[child], &m[big]) > 0)
            big = child;
        if (child + 1 < n && cmp(&m[child + 1], &m[big]) > 0)
            big = child + 1;
        if (big == root)
            return;
        t = m[root], m[root] = m[big], m[big] = t;
        root = big;
    }
}

static void heap_sort(dra_doc_member *m, size_t n,
                      int (*cmp)(const void *, const void *))
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(m, i, n, cmp);
    for (size_t end = n; end-- > 1;) {
        dra_doc_member t = m[0];
        m[0] = m[end], m[end] = t;
        sift_down(m, 0, end, cmp);
    }
}

static dra_err sort_rec(dra_doc *d, dra_doc_order order, int depth)
{
    dra_err err;
    if (depth > DRA_DOC_MAX_DEPTH)
        return DRA_ELIMIT;
    if (d->kind == DRA_DOC_LIST) {
        for (size_t i = 0; i < d->u.list.n; i++)
            if ((err = sort_rec(d->u.list.items[i], order, depth + 1)) != DRA_OK)
                return err;
    } else if (d->kind == DRA_DOC_MAP && d->u.map.n) {
        /* go-yaml's Less is not transitive ("0ct" < "1ead" < "00066x" <
         * "0ct"), so its result depends on the input order, and glibc's
         * qsort may misbehave on such a comparator. Sorting bytewise first
         * makes the input canonical: the result depends only on the key
         * set, so sorting twice changes nothing. */
        heap_sort(d->u.map.m, d->u.map.n, cmp_bytes);
        if (order == DRA_DOC_ORDER_YAML)
            heap_sort(d->u.map.m, d->u.map.n, cmp_yaml);
        for (size_t i = 0; i < d->u.map.n; i++)
            if ((err = sort_rec(d->u.map.m[i].val, order, depth + 1)) != DRA_OK)
                return err;
    }
    return DRA_OK;
}

dra_err dra_doc_sort_keys(dra_doc *doc, dra_doc_order order)
{
    if (!doc)
        return DRA_EINVAL;
    return sort_rec(doc, order, 0);
}

/* ---- the deferred-error builder ---------------------------------------- */

static dra_doc *docb_check(dra_docb *b, dra_doc *d)
{
    if (!d)
        b->oom = 1;
    return d;
}

dra_doc *dra_docb_map(dra_docb *b)
{
    return docb_check(b, dra_doc_new_map(b->a, 4));
}

dra_doc *dra_docb_list(dra_docb *b)
{
    return docb_check(b, dra_doc_new_list(b->a, 4));
}

dra_doc *dra_docb_str(dra_docb *b, const char *s)
{
    return dra_docb_strn(b, s ? s : "", s ? strlen(s) : 0);
}

dra_doc *dra_docb_strn(dra_docb *b, const char *s, size_t len)
{
    return docb_check(b, dra_doc_new_string(b->a, s, len));
}

dra_doc *dra_docb_int(dra_docb *b, int64_t v)
{
    return docb_check(b, dra_doc_new_int(b->a, v));
}

dra_doc *dra_docb_bool(dra_docb *b, int v)
{
    return docb_check(b, dra_doc_new_bool(b->a, v));
}

dra_doc *dra_docb_strs(dra_docb *b, const char *const *v, size_t n)
{
    dra_doc *l = dra_docb_list(b);
    for (size_t i = 0; i < n; i++)
        dra_docb_push(b, l, dra_docb_str(b, v[i]));
    return l;
}

void dra_docb_set(dra_docb *b, dra_doc *map, const char *key, dra_doc *v)
{
    if (!map || !v || dra_doc_map_set(b->a, map, key, v) != DRA_OK)
        b->oom = 1;
}

void dra_docb_set_str(dra_docb *b, dra_doc *map, const char *key, const char *s)
{
    dra_docb_set(b, map, key, dra_docb_str(b, s));
}

void dra_docb_push(dra_docb *b, dra_doc *list, dra_doc *v)
{
    if (!list || !v || dra_doc_list_push(b->a, list, v) != DRA_OK)
        b->oom = 1;
}
