/*
 * lib_tz.c: time zones for CEL's timestamp accessors. Parses TZif data
 * (RFC 8536) and POSIX TZ footer strings, answers "which UT offset applies
 * at instant t", and resolves cel-go's time zone arguments (IANA names or
 * "+hh:mm" offsets). Zone bytes come from a lib_zone_provider, so the only
 * file access is in the default provider at the bottom of this file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib_time.h"

/* ---- TZif ------------------------------------------------------------------ */

typedef struct tzif_rd {
    const unsigned char *p;
    size_t len, pos;
} tzif_rd;

static int rd_has(const tzif_rd *r, size_t n)
{
    return r->len - r->pos >= n;
}

static uint32_t rd_u32(tzif_rd *r)
{
    const unsigned char *b = r->p + r->pos;
    r->pos += 4;
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static int64_t rd_i64(tzif_rd *r)
{
    uint64_t hi = rd_u32(r), lo = rd_u32(r);
    return (int64_t)(hi << 32 | lo);
}

typedef struct tzif_hdr {
    int version;
    uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
} tzif_hdr;

static dra_err read_header(tzif_rd *r, tzif_hdr *h)
{
    if (!rd_has(r, 44) || memcmp(r->p + r->pos, "TZif", 4) != 0)
        return DRA_EPARSE;
    h->version = r->p[r->pos + 4] ? r->p[r->pos + 4] - '0' : 1;
    r->pos += 20;
    h->isutcnt = rd_u32(r);
    h->isstdcnt = rd_u32(r);
    h->leapcnt = rd_u32(r);
    h->timecnt = rd_u32(r);
    h->typecnt = rd_u32(r);
    h->charcnt = rd_u32(r);
    /* RFC 8536 3.1: typecnt must not be zero; counts are bounded by the
     * data that follows, checked by the caller. */
    if (h->typecnt == 0 || h->typecnt > 256 || h->timecnt > (1u << 20) ||
        h->leapcnt > (1u << 20) || h->charcnt > (1u << 20) ||
        h->isutcnt > 256 || h->isstdcnt > 256)
        return DRA_EPARSE;
    return DRA_OK;
}

static size_t block_size(const tzif_hdr *h, size_t tsize)
{
    return h->timecnt * tsize + h->timecnt + h->typecnt * 6 + h->charcnt +
           h->leapcnt * (tsize + 4) + h->isstdcnt + h->isutcnt;
}

/* Reads one data block (|tsize| 4 for v1, 8 for v2+) into |z|. */
static dra_err read_block(const dra_mem *mem, tzif_rd *r, const tzif_hdr *h,
                          size_t tsize, lib_tz *z)
{
    if (!rd_has(r, block_size(h, tsize)))
        return DRA_EPARSE;
    z->ntrans = h->timecnt;
    z->ntypes = h->typecnt;
    z->trans = dra_calloc(mem, h->timecnt + 1, sizeof *z->trans);
    z->trans_idx = dra_calloc(mem, h->timecnt + 1, 1);
    z->offs = dra_calloc(mem, h->typecnt, sizeof *z->offs);
    z->isdst = dra_calloc(mem, h->typecnt, 1);
    if (!z->trans || !z->trans_idx || !z->offs || !z->isdst)
        return DRA_ENOMEM;
    for (size_t i = 0; i < h->timecnt; i++) {
        z->trans[i] = tsize == 8 ? rd_i64(r) : (int64_t)(int32_t)rd_u32(r);
        if (i > 0 && z->trans[i] <= z->trans[i - 1])
            return DRA_EPARSE;
    }
    for (size_t i = 0; i < h->timecnt; i++) {
        z->trans_idx[i] = r->p[r->pos++];
        if (z->trans_idx[i] >= h->typecnt)
            return DRA_EPARSE;
    }
    for (size_t i = 0; i < h->typecnt; i++) {
        int32_t off = (int32_t)rd_u32(r);
        if (off == INT32_MIN || off < -89999 || off > 93599)
            return DRA_EPARSE;
        z->offs[i] = off;
        z->isdst[i] = r->p[r->pos] != 0;
        r->pos += 2;
    }
    r->pos += h->charcnt + h->leapcnt * (tsize + 4) + h->isstdcnt + h->isutcnt;
    return DRA_OK;
}

static void tz_arrays_free(const dra_mem *mem, lib_tz *z)
{
    dra_free(mem, z->trans);
    dra_free(mem, z->trans_idx);
    dra_free(mem, z->offs);
    dra_free(mem, z->isdst);
    z->trans = NULL;
    z->trans_idx = NULL;
    z->offs = NULL;
    z->isdst = NULL;
}

void lib_tz_free(const dra_mem *mem, lib_tz *z)
{
    if (!z)
        return;
    tz_arrays_free(mem, z);
    dra_free(mem, z->name);
    dra_free(mem, z);
}

static dra_err read_footer(tzif_rd *r, lib_tz *z)
{
    size_t start, end;
    if (!rd_has(r, 1) || r->p[r->pos] != '\n')
        return DRA_EPARSE;
    start = ++r->pos;
    end = start;
    while (end < r->len && r->p[end] != '\n')
        end++;
    if (end == r->len)
        return DRA_EPARSE;
    if (end == start)
        return DRA_OK; /* an empty footer: no rule beyond the table */
    return lib_tz_parse_posix((const char *)r->p + start, end - start,
                              &z->footer);
}

dra_err lib_tz_parse(const dra_mem *mem, const char *name,
                     const unsigned char *data, size_t len, lib_tz **out)
{
    tzif_rd r = {data, len, 0};
    tzif_hdr h;
    lib_tz *z;
    dra_err e;
    *out = NULL;
    if ((e = read_header(&r, &h)) != DRA_OK)
        return e;
    z = dra_calloc(mem, 1, sizeof *z);
    if (!z || !(z->name = dra_strdup(mem, name ? name : ""))) {
        dra_free(mem, z);
        return DRA_ENOMEM;
    }
    if ((e = read_block(mem, &r, &h, 4, z)) != DRA_OK)
        goto fail;
    if (h.version >= 2) {
        /* The 64-bit block supersedes the 32-bit one. */
        tz_arrays_free(mem, z);
        if ((e = read_header(&r, &h)) != DRA_OK ||
            (e = read_block(mem, &r, &h, 8, z)) != DRA_OK ||
            (e = read_footer(&r, z)) != DRA_OK)
            goto fail;
    }
    *out = z;
    return DRA_OK;
fail:
    lib_tz_free(mem, z);
    return e;
}

/* ---- POSIX TZ strings -------------------------------------------------------- */

typedef struct posix_rd {
    const char *s;
    size_t len, i;
} posix_rd;

static int prd_peek(const posix_rd *r)
{
    return r->i < r->len ? (unsigned char)r->s[r->i] : -1;
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static dra_err posix_name(posix_rd *r)
{
    size_t start = r->i;
    if (prd_peek(r) == '<') {
        r->i++;
        while (r->i < r->len && r->s[r->i] != '>')
            r->i++;
        if (r->i >= r->len || r->i == start + 1)
            return DRA_EPARSE;
        r->i++;
        return DRA_OK;
    }
    while (is_alpha(prd_peek(r)))
        r->i++;
    return r->i - start >= 3 ? DRA_OK : DRA_EPARSE;
}

static int posix_num(posix_rd *r, int maxv, int *out)
{
    int v = 0, n = 0;
    while (is_digit(prd_peek(r)) && n < 4) {
        v = v * 10 + (r->s[r->i++] - '0');
        n++;
    }
    if (n == 0 || v > maxv)
        return 0;
    *out = v;
    return 1;
}

/* [+-]hh[:mm[:ss]] in seconds; |maxh| bounds the hours (24 for offsets,
 * 167 for rule times per RFC 8536). */
static dra_err posix_hms(posix_rd *r, int maxh, int32_t *out)
{
    int sign = 1, h, m = 0, s = 0;
    if (prd_peek(r) == '+' || prd_peek(r) == '-')
        sign = r->s[r->i++] == '-' ? -1 : 1;
    if (!posix_num(r, maxh, &h))
        return DRA_EPARSE;
    if (prd_peek(r) == ':') {
        r->i++;
        if (!posix_num(r, 59, &m))
            return DRA_EPARSE;
        if (prd_peek(r) == ':') {
            r->i++;
            if (!posix_num(r, 59, &s))
                return DRA_EPARSE;
        }
    }
    *out = sign * (h * 3600 + m * 60 + s);
    return DRA_OK;
}

static dra_err posix_rule(posix_rd *r, lib_tz_rule *rule)
{
    int c = prd_peek(r);
    rule->time = 7200;
    if (c == 'J') {
        r->i++;
        rule->kind = 'J';
        if (!posix_num(r, 365, &rule->a) || rule->a < 1)
            return DRA_EPARSE;
    } else if (c == 'M') {
        r->i++;
        rule->kind = 'M';
        if (!posix_num(r, 12, &rule->a) || rule->a < 1 || prd_peek(r) != '.')
            return DRA_EPARSE;
        r->i++;
        if (!posix_num(r, 5, &rule->b) || rule->b < 1 || prd_peek(r) != '.')
            return DRA_EPARSE;
        r->i++;
        if (!posix_num(r, 6, &rule->c))
            return DRA_EPARSE;
    } else if (is_digit(c)) {
        rule->kind = 'D';
        if (!posix_num(r, 365, &rule->a))
            return DRA_EPARSE;
    } else {
        return DRA_EPARSE;
    }
    if (prd_peek(r) == '/') {
        r->i++;
        return posix_hms(r, 167, &rule->time);
    }
    return DRA_OK;
}

dra_err lib_tz_parse_posix(const char *s, size_t len, lib_tz_footer *f)
{
    posix_rd r = {s, len, 0};
    int32_t off;
    memset(f, 0, sizeof *f);
    if (posix_name(&r) != DRA_OK || posix_hms(&r, 24, &off) != DRA_OK)
        return DRA_EPARSE;
    f->std_off = -off; /* POSIX counts hours west of Greenwich */
    f->present = 1;
    if (r.i == len)
        return DRA_OK;
    if (posix_name(&r) != DRA_OK)
        return DRA_EPARSE;
    f->has_dst = 1;
    f->dst_off = f->std_off + 3600;
    if (prd_peek(&r) != ',' && r.i < len) {
        if (posix_hms(&r, 24, &off) != DRA_OK)
            return DRA_EPARSE;
        f->dst_off = -off;
    }
    if (r.i == len) {
        /* Go's default when the rules are omitted: the US rules. */
        f->start = (lib_tz_rule){'M', 3, 2, 0, 7200};
        f->end = (lib_tz_rule){'M', 11, 1, 0, 7200};
        return DRA_OK;
    }
    if (prd_peek(&r) != ',')
        return DRA_EPARSE;
    r.i++;
    if (posix_rule(&r, &f->start) != DRA_OK || prd_peek(&r) != ',')
        return DRA_EPARSE;
    r.i++;
    if (posix_rule(&r, &f->end) != DRA_OK || r.i != len)
        return DRA_EPARSE;
    return DRA_OK;
}

/* Days since the epoch of the day |rule| names in |year|. */
static int64_t rule_day(const lib_tz_rule *rule, int64_t year)
{
    int64_t jan1 = lib_days_from_civil(year, 1, 1), first, day;
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    int mdays;
    if (rule->kind == 'J')
        return jan1 + rule->a - 1 + (leap && rule->a >= 60);
    if (rule->kind == 'D')
        return jan1 + rule->a;
    first = lib_days_from_civil(year, rule->a, 1);
    mdays = (int)(lib_days_from_civil(year + (rule->a == 12),
                                      rule->a == 12 ? 1 : rule->a + 1, 1) -
                  first);
    day = (rule->c - ((first % 7 + 11) % 7) + 7) % 7 + (rule->b - 1) * 7;
    while (day >= mdays)
        day -= 7;
    return first + day;
}

static int32_t footer_offset(const lib_tz_footer *f, int64_t t)
{
    lib_civil c;
    int64_t start, end;
    int dst;
    if (!f->has_dst)
        return f->std_off;
    lib_civil_from_unix(t + f->std_off, &c);
    start = rule_day(&f->start, c.year) * 86400 + f->start.time - f->std_off;
    end = rule_day(&f->end, c.year) * 86400 + f->end.time - f->dst_off;
    if (start < end)
        dst = t >= start && t < end;
    else
        dst = !(t >= end && t < start);
    return dst ? f->dst_off : f->std_off;
}

/* Go's lookupFirstZone: the zone before the first transition. */
static int32_t first_offset(const lib_tz *z)
{
    int used = 0;
    for (size_t i = 0; i < z->ntrans; i++)
        used |= z->trans_idx[i] == 0;
    if (!used)
        return z->offs[0];
    for (size_t i = 0; i < z->ntypes; i++)
        if (!z->isdst[i])
            return z->offs[i];
    return z->offs[0];
}

int32_t lib_tz_offset(const lib_tz *z, int64_t t)
{
    size_t lo = 0, hi;
    if (z->ntrans == 0)
        return z->footer.present ? footer_offset(&z->footer, t) : z->offs[0];
    if (t < z->trans[0])
        return first_offset(z);
    hi = z->ntrans;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->trans[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    if (lo == z->ntrans - 1 && z->footer.present)
        return footer_offset(&z->footer, t);
    return z->offs[z->trans_idx[lo]];
}

/* ---- providers and the cache -------------------------------------------------- */

#define LIB_TZIF_MAX (1u << 20)

static dra_err files_load(void *ud, const char *name, const dra_mem *mem,
                          unsigned char **data, size_t *len)
{
    const char *dir = ud ? ud : "/usr/share/zoneinfo";
    char path[1024];
    unsigned char *buf;
    size_t n;
    long fsize;
    FILE *f;
    int w = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (w < 0 || (size_t)w >= sizeof path)
        return DRA_ENOTFOUND;
    f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT || errno == ENOTDIR || errno == EISDIR
                   ? DRA_ENOTFOUND : DRA_EIO;
    /* Size the buffer from the file (TZif files are a few KiB), with a
     * hard cap so a huge or special file cannot exhaust memory. */
    if (fseek(f, 0, SEEK_END) != 0 || (fsize = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return DRA_ENOTFOUND; /* a directory or a pipe: not a zone */
    }
    if ((unsigned long)fsize > LIB_TZIF_MAX)
        fsize = LIB_TZIF_MAX;
    buf = dra_malloc(mem, (size_t)fsize + 1);
    if (!buf) {
        fclose(f);
        return DRA_ENOMEM;
    }
    n = fread(buf, 1, (size_t)fsize, f);
    if (ferror(f)) {
        fclose(f);
        dra_free(mem, buf);
        return DRA_ENOTFOUND;
    }
    fclose(f);
    *data = buf;
    *len = n;
    return DRA_OK;
}

lib_zone_provider lib_zone_provider_files(const char *dir)
{
    lib_zone_provider p = {files_load, (void *)(uintptr_t)dir};
    return p;
}

void lib_zone_cache_init(lib_zone_cache *c, const dra_mem *mem,
                         const lib_zone_provider *provider)
{
    memset(c, 0, sizeof *c);
    c->mem = mem;
    c->provider = provider ? *provider : lib_zone_provider_files(NULL);
    pthread_mutex_init(&c->lock, NULL);
}

void lib_zone_cache_fini(lib_zone_cache *c)
{
    if (!c->provider.load)
        return;
    for (size_t i = 0; i < c->n; i++)
        lib_tz_free(c->mem, c->zones[i]);
    dra_free(c->mem, c->zones);
    pthread_mutex_destroy(&c->lock);
    memset(c, 0, sizeof *c);
}

static dra_err cache_load(lib_zone_cache *c, const char *name,
                          const lib_tz **out)
{
    unsigned char *data = NULL;
    size_t len = 0;
    lib_tz *z;
    dra_err e;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->zones[i]->name, name) == 0) {
            *out = c->zones[i];
            return DRA_OK;
        }
    if ((e = c->provider.load(c->provider.ud, name, c->mem, &data, &len)) !=
        DRA_OK)
        return e;
    e = lib_tz_parse(c->mem, name, data, len, &z);
    dra_free(c->mem, data);
    if (e == DRA_EPARSE)
        return DRA_ENOTFOUND; /* Go: not TZif data means an unknown zone */
    if (e != DRA_OK)
        return e;
    if (dra_grow(c->mem, (void **)&c->zones, &c->cap, c->n + 1,
                 sizeof *c->zones) != DRA_OK) {
        lib_tz_free(c->mem, z);
        return DRA_ENOMEM;
    }
    c->zones[c->n++] = z;
    *out = z;
    return DRA_OK;
}

/* Go's strconv.Atoi on a fixed-offset half. */
static dra_err atoi_go(const char *s, size_t len, int64_t *out, dra_buf *why)
{
    size_t i = 0;
    int neg = 0;
    int64_t v = 0;
    if (len > 0 && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == len)
        goto bad;
    for (; i < len; i++) {
        if (!is_digit((unsigned char)s[i]))
            goto bad;
        v = v * 10 + (s[i] - '0');
        if (v > 100000000) { /* far beyond any meaningful offset */
            if (why)
                dra_buf_printf(why, "strconv.Atoi: parsing \"%.*s\": value out of range",
                               (int)len, s);
            return DRA_ERANGE;
        }
    }
    *out = neg ? -v : v;
    return DRA_OK;
bad:
    if (why)
        dra_buf_printf(why, "strconv.Atoi: parsing \"%.*s\": invalid syntax",
                       (int)len, s);
    return DRA_EPARSE;
}

static dra_err fixed_offset(const char *tz, size_t len, size_t colon,
                            int32_t *off, dra_buf *why)
{
    int64_t hr, mn, total;
    dra_err e;
    if ((e = atoi_go(tz, colon, &hr, why)) != DRA_OK ||
        (e = atoi_go(tz + colon + 1, len - colon - 1, &mn, why)) != DRA_OK)
        return e;
    total = tz[0] == '-' ? hr * 60 - mn : hr * 60 + mn;
    if (total > 1000000 || total < -1000000) {
        if (why)
            dra_buf_puts(why, "time zone offset out of range");
        return DRA_ERANGE;
    }
    *off = (int32_t)(total * 60);
    return DRA_OK;
}

dra_err lib_zone_resolve(lib_zone_cache *c, const char *tz, size_t len,
                         const lib_tz **zone, int32_t *fixed_off, dra_buf *why)
{
    const char *colon = memchr(tz, ':', len);
    char name[256];
    dra_err e;
    *zone = NULL;
    *fixed_off = 0;
    if (colon)
        return fixed_offset(tz, len, (size_t)(colon - tz), fixed_off, why);
    /* Go: "" and "UTC" are UTC; "Local" is the host's zone, which a
     * library evaluating policy must not depend on, so it is UTC too. */
    if (len == 0 || (len == 3 && memcmp(tz, "UTC", 3) == 0) ||
        (len == 5 && memcmp(tz, "Local", 5) == 0))
        return DRA_OK;
    for (size_t i = 0; i + 1 < len; i++)
        if (tz[i] == '.' && tz[i + 1] == '.')
            goto invalid;
    if (tz[0] == '/' || tz[0] == '\\')
        goto invalid;
    if (len >= sizeof name || memchr(tz, '\0', len))
        goto unknown;
    memcpy(name, tz, len);
    name[len] = '\0';
    pthread_mutex_lock(&c->lock);
    e = cache_load(c, name, zone);
    pthread_mutex_unlock(&c->lock);
    if (e == DRA_ENOTFOUND)
        goto unknown;
    if (e != DRA_OK && why)
        dra_buf_printf(why, "loading time zone %s: %s", name, dra_strerror(e));
    return e;
invalid:
    if (why)
        dra_buf_puts(why, "time: invalid location name");
    return DRA_EINVAL;
unknown:
    if (why) {
        dra_buf_puts(why, "unknown time zone ");
        dra_buf_append(why, tz, len);
    }
    return DRA_ENOTFOUND;
}
