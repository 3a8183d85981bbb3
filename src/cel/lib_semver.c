/*
 * lib_semver.c: the Kubernetes semver library (apiserver
 * pkg/cel/library/semverlib.go): semver(), isSemver(), with the
 * version 1 "normalize" overloads, major/minor/patch, compareTo,
 * isGreaterThan, isLessThan. Parsing is the codec's strict semver 2.0.0;
 * error texts follow blang/semver v4, which Kubernetes uses.
 */
#include <stdio.h>

#include "lib_common.h"

static int all_in(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(set, s[i]))
            return 0;
    return 1;
}

#define DIGITS "0123456789"
#define ALNUM "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-"

/* One numeric part, as blang checks it; NULL when fine. */
static const char *check_num(const char *p, size_t n, const char *what,
                             char *buf, size_t size)
{
    if (!all_in(p, n, DIGITS))
        snprintf(buf, size, "Invalid character(s) found in %s number \"%.*s\"",
                 what, (int)n, p);
    else if (n > 1 && p[0] == '0')
        snprintf(buf, size, "%c%s number must not contain leading zeroes \"%.*s\"",
                 what[0] - 32, what + 1, (int)n, p);
    else if (n == 0)
        snprintf(buf, size, "strconv.ParseUint: parsing \"\": invalid syntax");
    else if (n > 20 || (n == 20 && memcmp(p, "18446744073709551615", 20) > 0))
        snprintf(buf, size, "strconv.ParseUint: parsing \"%.*s\": value out of range",
                 (int)n, p);
    else
        return NULL;
    return buf;
}

/* Pre-release and build identifiers, split at '.'. */
static const char *check_idents(const char *p, size_t n, int pre, char *buf,
                                size_t size)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        const char *id = p + start;
        size_t len = i - start;
        if (i < n && p[i] != '.')
            continue;
        start = i + 1;
        if (len == 0) {
            snprintf(buf, size, pre ? "Prerelease is empty" : "Build meta data is empty");
            return buf;
        }
        if (!all_in(id, len, ALNUM)) {
            snprintf(buf, size, "Invalid character(s) found in %s \"%.*s\"",
                     pre ? "prerelease" : "build meta data", (int)len, id);
            return buf;
        }
        if (pre && all_in(id, len, DIGITS) && len > 1 && id[0] == '0') {
            snprintf(buf, size,
                     "Numeric PreRelease version must not contain leading zeroes \"%.*s\"",
                     (int)len, id);
            return buf;
        }
    }
    return NULL;
}

const char *lib_semver_parse_error(const char *s, size_t len, char *buf,
                                   size_t size)
{
    const char *d1, *d2, *patch, *pre = NULL, *build = NULL, *r;
    size_t plen;
    if (len == 0)
        return "Version string empty";
    d1 = memchr(s, '.', len);
    d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - s)) : NULL;
    if (!d2)
        return "No Major.Minor.Patch elements found";
    if ((r = check_num(s, (size_t)(d1 - s), "major", buf, size)) ||
        (r = check_num(d1 + 1, (size_t)(d2 - d1 - 1), "minor", buf, size)))
        return r;
    patch = d2 + 1;
    plen = len - (size_t)(patch - s);
    if ((build = memchr(patch, '+', plen)) != NULL)
        plen = (size_t)(build - patch);
    if ((pre = memchr(patch, '-', plen)) != NULL)
        plen = (size_t)(pre - patch);
    if ((r = check_num(patch, plen, "patch", buf, size)))
        return r;
    if (pre && (r = check_idents(pre + 1,
                                 (size_t)((build ? build : s + len) - pre - 1), 1,
                                 buf, size)))
        return r;
    if (build && (r = check_idents(build + 1, (size_t)(s + len - build - 1), 0,
                                   buf, size)))
        return r;
    return "invalid semantic version";
}

size_t lib_semver_normalize(const char *s, size_t len, char *out, size_t size,
                            const char **msg)
{
    size_t o = 0, i = 0, nparts = 0;
    if (len > 0 && s[0] == 'v')
        i = 1;
    *msg = NULL;
    while (nparts < 3) {
        /* The third part runs to the end (SplitN with 3). */
        const char *p = s + i;
        size_t n = 0, full;
        while (i + n < len && (nparts == 2 || s[i + n] != '.'))
            n++;
        full = n;
        if (nparts > 0 && o < size)
            out[o++] = '.';
        if (n > 1) {
            size_t z = 0;
            while (z < n && p[z] == '0')
                z++;
            if (z == n || p[z] < '0' || p[z] > '9') {
                if (o < size)
                    out[o++] = '0';
            }
            p += z;
            n -= z;
        }
        if (o + n > size)
            return 0;
        memcpy(out + o, p, n);
        o += n;
        i += full;
        nparts++;
        if (i >= len)
            break;
        i++; /* the '.' */
    }
    if (nparts < 3) {
        /* Kubernetes rejects "1-rc" and "1.2+b": metadata needs 3 parts. */
        size_t last = o;
        while (last > 0 && out[last - 1] != '.')
            last--;
        if (memchr(out + last, '-', o - last) || memchr(out + last, '+', o - last)) {
            *msg = "short version cannot contain PreRelease/Build meta data";
            return 0;
        }
        while (nparts++ < 3) {
            if (o + 2 > size)
                return 0;
            out[o++] = '.';
            out[o++] = '0';
        }
    }
    return o;
}

static cel_value sv_parse(cel_ctx *ctx, const char *s, size_t len, int normalize,
                          int want_bool)
{
    dra_semver v;
    char buf[256];
    const char *msg = NULL;
    if (normalize) {
        char *norm = cel_alloc(ctx, len + 8);
        size_t n;
        if (!norm)
            return cel_error_value(&cel_e_nomem);
        n = lib_semver_normalize(s, len, norm, len + 8, &msg);
        if (msg)
            return want_bool ? cel_bool(0) : cel_err(ctx, "%s", msg);
        s = norm;
        len = n;
    }
    if (dra_semver_parse(s, len, &v) != DRA_OK) {
        if (want_bool)
            return cel_bool(0);
        return cel_err(ctx, "%s", lib_semver_parse_error(s, len, buf, sizeof buf));
    }
    return want_bool ? cel_bool(1) : cel_semver_new(ctx, &v);
}

static cel_value sv_from_string(cel_ctx *ctx, const cel_value *a, size_t n)
{
    return sv_parse(ctx, a[0].u.s, a[0].n, n > 1 && a[1].u.b, 0);
}

static cel_value sv_is_semver(cel_ctx *ctx, const cel_value *a, size_t n)
{
    return sv_parse(ctx, a[0].u.s, a[0].n, n > 1 && a[1].u.b, 1);
}

static int sv_cmp(const cel_value *a)
{
    int c = dra_semver_cmp(a[0].u.sv, a[1].u.sv);
    return c < 0 ? -1 : c > 0;
}

static cel_value sv_greater(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_bool(sv_cmp(a) == 1);
}

static cel_value sv_less(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_bool(sv_cmp(a) == -1);
}

static cel_value sv_compare(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int(sv_cmp(a));
}

/* blang stores uint64 parts; Kubernetes converts with a plain int64(). */
static cel_value sv_major(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int((int64_t)a[0].u.sv->major);
}

static cel_value sv_minor(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int((int64_t)a[0].u.sv->minor);
}

static cel_value sv_patch(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int((int64_t)a[0].u.sv->patch);
}

#define SV "kubernetes.Semver"
static const cel_overload semver_ovs[] = {
    {.id = "string_to_semver", .name = "semver", .result = SV,
     .args = {"string"}, .fn = sv_from_string},
    {.id = "is_semver_string", .name = "isSemver", .result = "bool",
     .args = {"string"}, .fn = sv_is_semver},
    {.id = "semver_is_greater_than", .name = "isGreaterThan",
     .flags = CEL_OV_MEMBER, .result = "bool", .args = {SV, SV}, .fn = sv_greater},
    {.id = "semver_is_less_than", .name = "isLessThan", .flags = CEL_OV_MEMBER,
     .result = "bool", .args = {SV, SV}, .fn = sv_less},
    {.id = "semver_compare_to", .name = "compareTo", .flags = CEL_OV_MEMBER,
     .result = "int", .args = {SV, SV}, .fn = sv_compare},
    {.id = "semver_major", .name = "major", .flags = CEL_OV_MEMBER,
     .result = "int", .args = {SV}, .fn = sv_major},
    {.id = "semver_minor", .name = "minor", .flags = CEL_OV_MEMBER,
     .result = "int", .args = {SV}, .fn = sv_minor},
    {.id = "semver_patch", .name = "patch", .flags = CEL_OV_MEMBER,
     .result = "int", .args = {SV}, .fn = sv_patch},
};

static const cel_overload semver_v1_ovs[] = {
    {.id = "string_bool_to_semver", .name = "semver", .result = SV,
     .args = {"string", "bool"}, .fn = sv_from_string},
    {.id = "is_semver_string_bool", .name = "isSemver", .result = "bool",
     .args = {"string", "bool"}, .fn = sv_is_semver},
};

const cel_lib cel_lib_semver = {
    "kubernetes.Semver", semver_ovs, sizeof semver_ovs / sizeof semver_ovs[0],
    NULL, 0, lib_k8s_enabled};
const cel_lib cel_lib_semver_v1 = {
    "kubernetes.Semver.v1", semver_v1_ovs,
    sizeof semver_v1_ovs / sizeof semver_v1_ovs[0], NULL, 0, lib_k8s_enabled};
