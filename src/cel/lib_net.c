/*
 * lib_net.c: the Kubernetes IP and CIDR libraries (apiserver
 * pkg/cel/library/ip.go and cidr.go, in the environment since 1.30):
 * opaque types net.IP and net.CIDR, parsed like Go's net/netip
 * (ParseAddr, ParsePrefix) with Kubernetes' extra rules (no zones, no
 * IPv4-mapped IPv6), printed in canonical form (RFC 5952 for IPv6).
 */
#include <stdio.h>

#include "lib_common.h"

typedef struct net_ip {
    uint8_t b[16]; /* IPv4 in b[0..3] */
    int is4;
} net_ip;

typedef struct net_cidr {
    net_ip ip;
    int bits;
} net_cidr;

static int ip_equal(const cel_opaque *a, const cel_opaque *b)
{
    const net_ip *x = a->data, *y = b->data;
    return x->is4 == y->is4 && memcmp(x->b, y->b, x->is4 ? 4 : 16) == 0;
}

static int cidr_equal(const cel_opaque *a, const cel_opaque *b)
{
    const net_cidr *x = a->data, *y = b->data;
    return x->bits == y->bits && x->ip.is4 == y->ip.is4 &&
           memcmp(x->ip.b, y->ip.b, x->ip.is4 ? 4 : 16) == 0;
}

static const cel_opaque_type ip_type = {"net.IP", ip_equal};
static const cel_opaque_type cidr_type = {"net.CIDR", cidr_equal};

/* ---- parsing, as Go's net/netip ---------------------------------------------
 * Errors go to |why| in Go's words: ParseAddr("in"): msg (at "rest"). */

static void go_quote(dra_buf *b, const char *s, size_t n)
{
    dra_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            dra_buf_putc(b, '\\');
        if (c < 0x20 || c == 0x7f)
            dra_buf_printf(b, "\\x%02x", c);
        else
            dra_buf_putc(b, (char)c);
    }
    dra_buf_putc(b, '"');
}

static int addr_err(dra_buf *why, const char *in, size_t n, const char *msg,
                    const char *at, size_t atn)
{
    dra_buf_puts(why, "ParseAddr(");
    go_quote(why, in, n);
    dra_buf_printf(why, "): %s", msg);
    if (at && atn) {
        dra_buf_puts(why, " (at ");
        go_quote(why, at, atn);
        dra_buf_putc(why, ')');
    }
    return -1;
}

static int parse_v4_fields(const char *in, size_t inlen, size_t off, size_t end,
                           uint8_t *f, dra_buf *why)
{
    const char *s = in + off;
    size_t n = end - off;
    int val = 0, pos = 0, dig = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            if (dig == 1 && val == 0)
                return addr_err(why, in, inlen, "IPv4 field has octet with leading zero", NULL, 0);
            val = val * 10 + (s[i] - '0');
            dig++;
            if (val > 255)
                return addr_err(why, in, inlen, "IPv4 field has value >255", NULL, 0);
        } else if (s[i] == '.') {
            if (i == 0 || i == n - 1 || s[i - 1] == '.')
                return addr_err(why, in, inlen, "IPv4 field must have at least one digit",
                                s + i, n - i);
            if (pos == 3)
                return addr_err(why, in, inlen, "IPv4 address too long", NULL, 0);
            f[pos++] = (uint8_t)val;
            val = 0;
            dig = 0;
        } else {
            return addr_err(why, in, inlen, "unexpected character", s + i, n - i);
        }
    }
    if (pos < 3)
        return addr_err(why, in, inlen, "IPv4 address too short", NULL, 0);
    f[3] = (uint8_t)val;
    return 0;
}

static int hexv(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* *zoned is set when a "%zone" suffix was present. */
static int parse_v6(const char *in, size_t inlen, net_ip *ip, int *zoned, dra_buf *why)
{
    const char *s = in, *pct = memchr(in, '%', inlen);
    size_t n = pct ? (size_t)(pct - in) : inlen, end = n;
    int ell = -1, i = 0;
    memset(ip, 0, sizeof *ip);
    *zoned = pct != NULL;
    if (pct && pct + 1 == in + inlen)
        return addr_err(why, in, inlen, "zone must be a non-empty string", NULL, 0);
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        ell = 0;
        s += 2;
        n -= 2;
        if (n == 0)
            return 0;
    }
    while (i < 16) {
        size_t off = 0;
        uint32_t acc = 0;
        for (; off < n && hexv((unsigned char)s[off]) >= 0; off++) {
            acc = (acc << 4) + (uint32_t)hexv((unsigned char)s[off]);
            if (off > 3)
                return addr_err(why, in, inlen, "each group must have 4 or less digits", s, n);
            if (acc > 0xffff)
                return addr_err(why, in, inlen, "IPv6 field has value >=2^16", s, n);
        }
        if (off == 0)
            return addr_err(why, in, inlen,
                            "each colon-separated field must have at least one digit", s, n);
        if (off < n && s[off] == '.') {
            if (ell < 0 && i != 12)
                return addr_err(why, in, inlen,
                                "embedded IPv4 address must replace the final 2 fields "
                                "of the address", s, n);
            if (i + 4 > 16)
                return addr_err(why, in, inlen,
                                "too many hex fields to fit an embedded IPv4 at the end "
                                "of the address", s, n);
            if (parse_v4_fields(in, inlen, end - n, end, ip->b + i, why) != 0)
                return -1;
            n = 0;
            i += 4;
            break;
        }
        ip->b[i] = (uint8_t)(acc >> 8);
        ip->b[i + 1] = (uint8_t)acc;
        i += 2;
        s += off;
        n -= off;
        if (n == 0)
            break;
        if (s[0] != ':')
            return addr_err(why, in, inlen, "unexpected character, want colon", s, n);
        if (n == 1)
            return addr_err(why, in, inlen, "colon must be followed by more characters", s, n);
        s++;
        n--;
        if (s[0] == ':') {
            if (ell >= 0)
                return addr_err(why, in, inlen, "multiple :: in address", s, n);
            ell = i;
            s++;
            n--;
            if (n == 0)
                break;
        }
    }
    if (n != 0)
        return addr_err(why, in, inlen, "trailing garbage after address", s, n);
    if (i < 16) {
        int k = 16 - i;
        if (ell < 0)
            return addr_err(why, in, inlen, "address string too short", NULL, 0);
        for (int j = i - 1; j >= ell; j--)
            ip->b[j + k] = ip->b[j];
        memset(ip->b + ell, 0, (size_t)k);
    } else if (ell >= 0) {
        return addr_err(why, in, inlen, "the :: must expand to at least one field of zeros",
                        s, n);
    }
    return 0;
}

static int is4in6(const net_ip *ip)
{
    static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !ip->is4 && memcmp(ip->b, pfx, 12) == 0;
}

/* Go's netip.ParseAddr; *zoned as for parse_v6. */
static int parse_addr(const char *s, size_t n, net_ip *ip, int *zoned, dra_buf *why)
{
    *zoned = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            memset(ip, 0, sizeof *ip);
            ip->is4 = 1;
            return parse_v4_fields(s, n, 0, n, ip->b, why);
        }
        if (s[i] == ':')
            return parse_v6(s, n, ip, zoned, why);
        if (s[i] == '%')
            return addr_err(why, s, n, "missing IPv6 address", NULL, 0);
    }
    return addr_err(why, s, n, "unable to parse IP", NULL, 0);
}

/* Kubernetes' parseIPAddr: ParseAddr, then no zone, no IPv4-mapped. */
static int k8s_parse_ip(const char *s, size_t n, net_ip *ip, dra_buf *why)
{
    dra_buf inner;
    int zoned, r;
    dra_buf_init(&inner, NULL);
    r = parse_addr(s, n, ip, &zoned, &inner);
    if (r != 0) {
        dra_buf_puts(why, "IP Address ");
        go_quote(why, s, n);
        dra_buf_printf(why, " parse error during conversion from string: %s",
                       inner.p ? inner.p : "");
    } else if (zoned) {
        dra_buf_puts(why, "IP address ");
        go_quote(why, s, n);
        dra_buf_puts(why, " with zone value is not allowed");
        r = -1;
    } else if (is4in6(ip)) {
        dra_buf_puts(why, "IPv4-mapped IPv6 address ");
        go_quote(why, s, n);
        dra_buf_puts(why, " is not allowed");
        r = -1;
    }
    dra_buf_fini(&inner);
    return r;
}

/* Go's netip.ParsePrefix plus Kubernetes' parseCIDR. */
static int k8s_parse_cidr(const char *s, size_t n, net_cidr *c, dra_buf *why)
{
    const char *slash = NULL, *bs;
    dra_buf inner;
    size_t bn;
    int zoned, r = -1;
    long bits = 0;
    for (size_t i = n; i-- > 0;)
        if (s[i] == '/') {
            slash = s + i;
            break;
        }
    dra_buf_init(&inner, NULL);
    if (!slash) {
        dra_buf_puts(&inner, "no '/'");
        goto fail;
    }
    if (parse_addr(s, (size_t)(slash - s), &c->ip, &zoned, &inner) != 0)
        goto fail;
    if (zoned) {
        dra_buf_reset(&inner);
        dra_buf_puts(&inner, c->ip.is4 ? "unexpected character" :
                                         "IPv6 zones cannot be present in a prefix");
        goto fail;
    }
    bs = slash + 1;
    bn = n - (size_t)(bs - s);
    for (size_t i = 0; i < bn; i++)
        if (bs[i] < '0' || bs[i] > '9' || bits > 1000)
            bits = -1;
        else
            bits = bits * 10 + (bs[i] - '0');
    if (bn == 0 || bits < 0 || (bn > 1 && bs[0] == '0')) {
        dra_buf_puts(&inner, "bad bits after slash: ");
        go_quote(&inner, bs, bn);
        goto fail;
    }
    if (bits > (c->ip.is4 ? 32 : 128)) {
        dra_buf_puts(&inner, "prefix length out of range");
        goto fail;
    }
    c->bits = (int)bits;
    if (is4in6(&c->ip)) {
        dra_buf_puts(why, "IPv4-mapped IPv6 address ");
        go_quote(why, s, n);
        dra_buf_puts(why, " is not allowed");
        dra_buf_fini(&inner);
        return -1;
    }
    dra_buf_fini(&inner);
    return 0;
fail:
    /* ParsePrefix wraps ParseAddr's text; Kubernetes wraps it once more. */
    dra_buf_puts(why, "network address parse error during conversion from string: "
                      "netip.ParsePrefix(");
    go_quote(why, s, n);
    dra_buf_printf(why, "): %s", inner.p ? inner.p : "");
    dra_buf_fini(&inner);
    return r;
}

/* ---- printing (netip String) ----------------------------------------------------- */

static void put_ip(dra_buf *b, const net_ip *ip)
{
    int zs = 255, ze = 255;
    if (ip->is4) {
        dra_buf_printf(b, "%u.%u.%u.%u", ip->b[0], ip->b[1], ip->b[2], ip->b[3]);
        return;
    }
    for (int i = 0; i < 8; i++) {
        int j = i;
        while (j < 8 && ip->b[2 * j] == 0 && ip->b[2 * j + 1] == 0)
            j++;
        if (j - i >= 2 && j - i > ze - zs) {
            zs = i;
            ze = j;
        }
    }
    for (int i = 0; i < 8; i++) {
        if (i == zs) {
            dra_buf_puts(b, "::");
            i = ze;
            if (i >= 8)
                break;
        } else if (i > 0) {
            dra_buf_putc(b, ':');
        }
        dra_buf_printf(b, "%x", (unsigned)(ip->b[2 * i] << 8 | ip->b[2 * i + 1]));
    }
}

/* ---- predicates ---------------------------------------------------------------------- */

static int ip_zero(const net_ip *ip)
{
    for (int i = 0; i < (ip->is4 ? 4 : 16); i++)
        if (ip->b[i])
            return 0;
    return 1;
}

static int ip_loopback(const net_ip *ip)
{
    static const uint8_t one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return ip->is4 ? ip->b[0] == 127 : memcmp(ip->b, one, 16) == 0;
}

static int ip_multicast(const net_ip *ip)
{
    return ip->is4 ? (ip->b[0] & 0xf0) == 0xe0 : ip->b[0] == 0xff;
}

static int ip_ll_multicast(const net_ip *ip)
{
    return ip->is4 ? ip->b[0] == 224 && ip->b[1] == 0 && ip->b[2] == 0
                   : ip->b[0] == 0xff && ip->b[1] == 0x02;
}

static int ip_ll_unicast(const net_ip *ip)
{
    return ip->is4 ? ip->b[0] == 169 && ip->b[1] == 254
                   : ip->b[0] == 0xfe && (ip->b[1] & 0xc0) == 0x80;
}

static int ip_global_unicast(const net_ip *ip)
{
    if (ip->is4 && (ip_zero(ip) || (ip->b[0] == 255 && ip->b[1] == 255 &&
                                    ip->b[2] == 255 && ip->b[3] == 255)))
        return 0;
    return !ip_zero(ip) && !ip_loopback(ip) && !ip_multicast(ip) && !ip_ll_unicast(ip);
}

static int cidr_contains_ip(const net_cidr *c, const net_ip *ip)
{
    int full = c->bits / 8, rest = c->bits % 8;
    if (c->ip.is4 != ip->is4)
        return 0;
    if (memcmp(c->ip.b, ip->b, (size_t)full) != 0)
        return 0;
    if (rest) {
        uint8_t m = (uint8_t)(0xff << (8 - rest));
        return (c->ip.b[full] & m) == (ip->b[full] & m);
    }
    return 1;
}

static net_cidr cidr_masked(const net_cidr *c)
{
    net_cidr r = *c;
    int len = c->ip.is4 ? 4 : 16;
    for (int i = 0; i < len; i++) {
        int keep = c->bits - i * 8;
        r.ip.b[i] &= keep >= 8 ? 0xff : keep <= 0 ? 0 : (uint8_t)(0xff << (8 - keep));
    }
    return r;
}

/* ---- overloads ------------------------------------------------------------------------- */

#define IPV(v) ((const net_ip *)(v).u.op->data)
#define CIDRV(v) ((const net_cidr *)(v).u.op->data)

static cel_value new_ip(cel_ctx *ctx, const net_ip *ip)
{
    net_ip *p = cel_alloc(ctx, sizeof *p);
    if (!p)
        return cel_error_value(&cel_e_nomem);
    *p = *ip;
    return cel_opaque_new(ctx, &ip_type, p);
}

static cel_value new_cidr(cel_ctx *ctx, const net_cidr *c)
{
    net_cidr *p = cel_alloc(ctx, sizeof *p);
    if (!p)
        return cel_error_value(&cel_e_nomem);
    *p = *c;
    return cel_opaque_new(ctx, &cidr_type, p);
}

static cel_value err_from(cel_ctx *ctx, dra_buf *why)
{
    cel_value e = cel_err(ctx, "%s", why->p ? why->p : "parse error");
    dra_buf_fini(why);
    return e;
}

static cel_value f_ip(cel_ctx *ctx, const cel_value *a, size_t n)
{
    net_ip ip;
    dra_buf why;
    (void)n;
    dra_buf_init(&why, NULL);
    if (k8s_parse_ip(a[0].u.s, a[0].n, &ip, &why) != 0)
        return err_from(ctx, &why);
    dra_buf_fini(&why);
    return new_ip(ctx, &ip);
}

static cel_value f_is_ip(cel_ctx *ctx, const cel_value *a, size_t n)
{
    net_ip ip;
    dra_buf why;
    int r;
    (void)ctx, (void)n;
    dra_buf_init(&why, NULL);
    r = k8s_parse_ip(a[0].u.s, a[0].n, &ip, &why);
    dra_buf_fini(&why);
    return cel_bool(r == 0);
}

static cel_value f_ip_canonical(cel_ctx *ctx, const cel_value *a, size_t n)
{
    net_ip ip;
    dra_buf why, out;
    cel_value r;
    (void)n;
    dra_buf_init(&why, NULL);
    if (k8s_parse_ip(a[0].u.s, a[0].n, &ip, &why) != 0)
        return err_from(ctx, &why);
    dra_buf_fini(&why);
    dra_buf_init(&out, NULL);
    put_ip(&out, &ip);
    r = cel_bool(out.len == a[0].n && memcmp(out.p, a[0].u.s, out.len) == 0);
    dra_buf_fini(&out);
    return r;
}

static cel_value str_of(cel_ctx *ctx, dra_buf *b)
{
    cel_value r = b->oom ? cel_error_value(&cel_e_nomem)
                         : cel_str_new(ctx, b->p ? b->p : "", b->len);
    dra_buf_fini(b);
    return r;
}

static cel_value f_ip_string(cel_ctx *ctx, const cel_value *a, size_t n)
{
    dra_buf b;
    (void)n;
    dra_buf_init(&b, NULL);
    put_ip(&b, IPV(a[0]));
    return str_of(ctx, &b);
}

static cel_value f_family(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    return cel_int(IPV(a[0])->is4 ? 4 : 6);
}

#define IP_PRED(NAME, FN)                                                    \
    static cel_value NAME(cel_ctx *c, const cel_value *a, size_t n)          \
    {                                                                        \
        (void)c, (void)n;                                                    \
        return cel_bool(FN(IPV(a[0])));                                      \
    }
IP_PRED(f_unspecified, ip_zero)
IP_PRED(f_loopback, ip_loopback)
IP_PRED(f_ll_multicast, ip_ll_multicast)
IP_PRED(f_ll_unicast, ip_ll_unicast)
IP_PRED(f_global_unicast, ip_global_unicast)

static cel_value f_cidr(cel_ctx *ctx, const cel_value *a, size_t n)
{
    net_cidr c;
    dra_buf why;
    (void)n;
    dra_buf_init(&why, NULL);
    if (k8s_parse_cidr(a[0].u.s, a[0].n, &c, &why) != 0) {
        /* stringToCIDR adds the same prefix once more, as Kubernetes does. */
        cel_value e = cel_err(ctx, "network address parse error during conversion from "
                                   "string: %s", why.p ? why.p : "");
        dra_buf_fini(&why);
        return e;
    }
    dra_buf_fini(&why);
    return new_cidr(ctx, &c);
}

static cel_value f_is_cidr(cel_ctx *ctx, const cel_value *a, size_t n)
{
    net_cidr c;
    dra_buf why;
    int r;
    (void)ctx, (void)n;
    dra_buf_init(&why, NULL);
    r = k8s_parse_cidr(a[0].u.s, a[0].n, &c, &why);
    dra_buf_fini(&why);
    return cel_bool(r == 0);
}

static cel_value f_cidr_string(cel_ctx *ctx, const cel_value *a, size_t n)
{
    dra_buf b;
    (void)n;
    dra_buf_init(&b, NULL);
    put_ip(&b, &CIDRV(a[0])->ip);
    dra_buf_printf(&b, "/%d", CIDRV(a[0])->bits);
    return str_of(ctx, &b);
}

static cel_value f_contains_ip(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    if (a[1].kind == CEL_K_STRING) {
        cel_value ip = f_ip(ctx, a + 1, 1);
        if (ip.kind != CEL_K_OPAQUE)
            return ip;
        return cel_bool(cidr_contains_ip(CIDRV(a[0]), IPV(ip)));
    }
    return cel_bool(cidr_contains_ip(CIDRV(a[0]), IPV(a[1])));
}

static cel_value f_contains_cidr(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const net_cidr *outer = CIDRV(a[0]), *inner;
    cel_value other = a[1];
    net_cidr m1, m2;
    (void)n;
    if (other.kind == CEL_K_STRING) {
        other = f_cidr(ctx, a + 1, 1);
        if (other.kind != CEL_K_OPAQUE)
            return other;
    }
    inner = CIDRV(other);
    if (outer->ip.is4 != inner->ip.is4 || outer->bits > inner->bits)
        return cel_bool(0);
    m1 = cidr_masked(outer);
    m2 = *inner;
    m2.bits = outer->bits;
    m2 = cidr_masked(&m2);
    return cel_bool(memcmp(m1.ip.b, m2.ip.b, 16) == 0);
}

static cel_value f_cidr_ip(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return new_ip(ctx, &CIDRV(a[0])->ip);
}

static cel_value f_prefix_length(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    return cel_int(CIDRV(a[0])->bits);
}

static cel_value f_masked(cel_ctx *ctx, const cel_value *a, size_t n)
{
    net_cidr m = cidr_masked(CIDRV(a[0]));
    (void)n;
    return new_cidr(ctx, &m);
}

#define M CEL_OV_MEMBER
static const cel_overload net_ovs[] = {
    {.id = "string_to_ip", .name = "ip", .result = "net.IP", .args = {"string"}, .fn = f_ip},
    {.id = "ip_family", .name = "family", .flags = M, .result = "int",
     .args = {"net.IP"}, .fn = f_family},
    {.id = "ip_is_canonical", .name = "ip.isCanonical", .result = "bool",
     .args = {"string"}, .fn = f_ip_canonical},
    {.id = "ip_is_unspecified", .name = "isUnspecified", .flags = M, .result = "bool",
     .args = {"net.IP"}, .fn = f_unspecified},
    {.id = "ip_is_loopback", .name = "isLoopback", .flags = M, .result = "bool",
     .args = {"net.IP"}, .fn = f_loopback},
    {.id = "ip_is_link_local_multicast", .name = "isLinkLocalMulticast", .flags = M,
     .result = "bool", .args = {"net.IP"}, .fn = f_ll_multicast},
    {.id = "ip_is_link_local_unicast", .name = "isLinkLocalUnicast", .flags = M,
     .result = "bool", .args = {"net.IP"}, .fn = f_ll_unicast},
    {.id = "ip_is_global_unicast", .name = "isGlobalUnicast", .flags = M,
     .result = "bool", .args = {"net.IP"}, .fn = f_global_unicast},
    {.id = "is_ip", .name = "isIP", .result = "bool", .args = {"string"}, .fn = f_is_ip},
    {.id = "ip_to_string", .name = "string", .result = "string", .args = {"net.IP"},
     .fn = f_ip_string},
    {.id = "string_to_cidr", .name = "cidr", .result = "net.CIDR", .args = {"string"},
     .fn = f_cidr},
    {.id = "cidr_contains_ip_string", .name = "containsIP", .flags = M,
     .result = "bool", .args = {"net.CIDR", "string"}, .fn = f_contains_ip},
    {.id = "cidr_contains_ip_ip", .name = "containsIP", .flags = M, .result = "bool",
     .args = {"net.CIDR", "net.IP"}, .fn = f_contains_ip},
    {.id = "cidr_contains_cidr_string", .name = "containsCIDR", .flags = M,
     .result = "bool", .args = {"net.CIDR", "string"}, .fn = f_contains_cidr},
    {.id = "cidr_contains_cidr", .name = "containsCIDR", .flags = M, .result = "bool",
     .args = {"net.CIDR", "net.CIDR"}, .fn = f_contains_cidr},
    {.id = "cidr_ip", .name = "ip", .flags = M, .result = "net.IP",
     .args = {"net.CIDR"}, .fn = f_cidr_ip},
    {.id = "cidr_prefix_length", .name = "prefixLength", .flags = M, .result = "int",
     .args = {"net.CIDR"}, .fn = f_prefix_length},
    {.id = "cidr_masked", .name = "masked", .flags = M, .result = "net.CIDR",
     .args = {"net.CIDR"}, .fn = f_masked},
    {.id = "is_cidr", .name = "isCIDR", .result = "bool", .args = {"string"},
     .fn = f_is_cidr},
    {.id = "cidr_to_string", .name = "string", .result = "string",
     .args = {"net.CIDR"}, .fn = f_cidr_string},
};
#undef M

static const cel_opaque_type *const net_types[] = {&ip_type, &cidr_type};

const cel_lib cel_lib_k8s_net = {
    "kubernetes.net", net_ovs, sizeof net_ovs / sizeof net_ovs[0], net_types, 2,
    lib_k8s_enabled};
