/*
 * test_cel_fast.c: the fast paths of DRA selector evaluation against the
 * plain instructions (dra_cel_options.plain_code) on generated inputs:
 * the same result, error message and runtime cost, at the default cost
 * limit and at limits that stop evaluation midway.
 *
 * The string kernel of `[...].exists/all(p, device...s[.lowerAscii() |
 * .upperAscii()].contains/startsWith/endsWith(p))` gets device strings of
 * every length around its 16-byte blocks and its 256-byte buffer, mixed
 * case, UTF-8 and NUL bytes, and needles that are empty, longer than 16
 * bytes, upper case, or the whole string.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dra/base.h"
#include "dra/cel.h"
#include "dra/codec.h"

typedef struct rng {
    uint64_t s;
} rng;

static unsigned next(rng *r, unsigned n)
{
    r->s = r->s * 6364136223846793005u + 1442695040888963407u;
    return (unsigned)((r->s >> 33) % n);
}

/* Bytes the strings are drawn from: both cases of the needles' letters,
 * separators, a NUL and the two bytes of U+00E9 (kept whole below). */
static const char k_alpha[] = "aAbBhH10- ";

static size_t gen_string(rng *r, char *out, size_t len)
{
    size_t n = 0;
    while (n < len) {
        unsigned c = next(r, 14);
        if (c == 12 && n + 2 <= len) {
            out[n++] = (char)0xC3; /* é */
            out[n++] = (char)0xA9;
        } else if (c == 13) {
            out[n++] = '\0';
        } else {
            out[n++] = k_alpha[c % (sizeof k_alpha - 1)];
        }
    }
    return n;
}

/* A CEL string literal of |s| (n bytes) with escapes for what is not
 * printable ASCII. */
static void put_literal(char *out, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    out[o++] = '\'';
    for (size_t i = 0; i < n && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xC3 && i + 1 < n && (unsigned char)s[i + 1] == 0xA9) {
            o += (size_t)snprintf(out + o, cap - o, "\\u00e9");
            i++;
        } else if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o++] = '\'';
    out[o] = '\0';
}

typedef struct outcome {
    dra_err rc;
    int result;
    uint64_t cost;
    char msg[256];
} outcome;

static void eval(dra_cel_env *env, dra_cel_vm *vm, const dra_cel_prepared *pd, const char *expr,
                 outcome *o)
{
    dra_cel_program *p = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    o->result = -1;
    o->rc = dra_cel_compile(env, expr, strlen(expr), &p, &d);
    if (!o->rc)
        o->rc = dra_cel_eval_device(p, vm, pd, &o->result, &d);
    o->cost = o->rc == DRA_OK || o->rc == DRA_EEVAL || o->rc == DRA_ECOST
                  ? dra_cel_vm_last_cost(vm)
                  : 0;
    snprintf(o->msg, sizeof o->msg, "%s", dra_diag_first(&d) ? dra_diag_first(&d) : "");
    dra_cel_program_unref(p);
    dra_diag_fini(&d);
}

/* |expr| on |dev|, compiled with the fast paths and as plain code, at
 * |limit| (0: the default). Returns 1, after printing both outcomes and
 * |what| (the device), when they differ. */
static int fast_matches_plain(const dra_cel_device *dev, const char *expr, uint64_t limit,
                              dra_cel_vm *vm, const char *what)
{
    dra_cel_prepared *pd = NULL;
    dra_cel_options fo = {.cost_limit = limit}, po = {.cost_limit = limit, .plain_code = 1};
    dra_cel_env *fast = NULL, *plain = NULL;
    outcome a, b;
    int differ;
    assert_int_equal(dra_cel_device_prepare(NULL, dev, &pd), DRA_OK);
    assert_int_equal(dra_cel_env_new_dra(NULL, &fo, &fast), DRA_OK);
    assert_int_equal(dra_cel_env_new_dra(NULL, &po, &plain), DRA_OK);
    eval(fast, vm, pd, expr, &a);
    eval(plain, vm, pd, expr, &b);
    differ = a.rc != b.rc || a.result != b.result || a.cost != b.cost || strcmp(a.msg, b.msg);
    if (differ)
        print_error("limit %llu, %s: %s\n  fast  %s %d cost %llu '%s'\n"
                    "  plain %s %d cost %llu '%s'\n",
                    (unsigned long long)limit, what, expr, dra_errname(a.rc), a.result,
                    (unsigned long long)a.cost, a.msg, dra_errname(b.rc), b.result,
                    (unsigned long long)b.cost, b.msg);
    dra_cel_env_free(fast);
    dra_cel_env_free(plain);
    dra_cel_prepared_free(pd);
    return differ;
}

typedef int (*checker)(rng *r, uint64_t limit, dra_cel_vm *vm);

/* 6,000 generated cases of |check| from |seed|, each at one of |limits|;
 * stops after 10 differences, and fails if there was any. */
static void run_generated(checker check, uint64_t seed, const uint64_t *limits, unsigned nlimits)
{
    dra_cel_vm *vm = NULL;
    rng r = {seed};
    int bad = 0;
    assert_int_equal(dra_cel_vm_new(NULL, &vm), DRA_OK);
    for (int i = 0; i < 6000 && bad < 10; i++)
        bad += check(&r, limits[next(&r, nlimits)], vm);
    dra_cel_vm_free(vm);
    assert_int_equal(bad, 0);
}

/* One generated selector on one generated device, fast against plain at
 * |limit| (0: the default). Returns 1 when they differ. */
static int check_one(rng *r, uint64_t limit, dra_cel_vm *vm)
{
    static const char *const tests[] = {"contains", "startsWith", "endsWith"};
    static const char *const convs[] = {"", ".lowerAscii()", ".upperAscii()"};
    static const size_t lens[] = {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 21, 31, 32, 33, 255, 256, 257, 300};
    char s[320], lit[1400], expr[8192], needle[40];
    size_t n, o;
    char what[400];
    dra_cel_attr attr = {.name = "gpu.nvidia.com/s", .kind = DRA_CEL_ATTR_STRING, .s = s};
    dra_cel_device dev = {.driver = "gpu.nvidia.com", .attrs = &attr, .nattrs = 1};
    unsigned nneedles = next(r, 5), all = next(r, 2);

    /* The device string: NUL-free (attributes are C strings). */
    n = gen_string(r, s, lens[next(r, sizeof lens / sizeof lens[0])]);
    for (size_t i = 0; i < n; i++)
        if (!s[i])
            s[i] = 'x';
    s[n] = '\0';
    o = (size_t)snprintf(expr, sizeof expr, "[");
    for (unsigned i = 0; i < nneedles; i++) {
        size_t m;
        unsigned how = next(r, 6);
        if (how == 0 && n) { /* a piece of the string, maybe converted */
            size_t at = next(r, (unsigned)n), len = 1 + next(r, 24);
            m = len > n - at ? n - at : len;
            memcpy(needle, s + at, m);
            for (size_t k = 0; k < m; k++)
                if (next(r, 2))
                    needle[k] = (char)(needle[k] >= 'A' && needle[k] <= 'Z' ? needle[k] | 32
                                                                             : needle[k]);
        } else if (how == 1 && n) { /* its end, maybe with a NUL after */
            m = 1 + next(r, n < 20 ? (unsigned)n : 20);
            memcpy(needle, s + n - m, m);
            if (next(r, 2))
                needle[m++] = '\0';
        } else {
            m = gen_string(r, needle, next(r, 20));
        }
        put_literal(lit, sizeof lit, needle, m);
        o += (size_t)snprintf(expr + o, sizeof expr - o, "%s%s", i ? ", " : "", lit);
    }
    snprintf(expr + o, sizeof expr - o, "].%s(p, %sdevice.attributes['gpu.nvidia.com'].s%s.%s(p))",
             all ? "all" : "exists", next(r, 4) ? "" : "!", convs[next(r, 3)],
             tests[next(r, 3)]);
    snprintf(what, sizeof what, "s '%s' (%zu bytes)", s, n);
    return fast_matches_plain(&dev, expr, limit, vm, what);
}

static void test_string_kernel_matches_plain(void **state)
{
    static const uint64_t limits[] = {0, 4, 9, 10, 13, 17, 20, 26, 33, 40, 64};
    (void)state;
    run_generated(check_one, 42, limits, sizeof limits / sizeof limits[0]);
}

/* A conjunction of device comparisons (the decoded-term path) on a
 * generated device: drivers, attribute values of every kind, missing
 * domains and names, capacities. Returns 1 when fast and plain differ. */
static int check_conj(rng *r, uint64_t limit, dra_cel_vm *vm)
{
    static const char *const drivers[] = {"gpu.nvidia.com", "gpu.example.com", "", "gpu.nvidia.co"};
    static const char *const doms[] = {"gpu.nvidia.com", "example.com", "missing.io"};
    static const char *const ids[] = {"type", "s", "idx", "flag", "missing"};
    static const char *const consts[] = {"'gpu'", "'mig'", "''", "'GPU'", "3", "true",
                                         "'\\u00e9t\\u00e9'", "'gpu.nvidia.com'"};
    static const char *const svals[] = {"gpu", "mig", "", "GPU", "\xc3\xa9t\xc3\xa9",
                                        "gpu.nvidia.com"};
    static const char *const qcmp[] = {".compareTo(quantity('40Gi')) > 0",
                                       ".compareTo(quantity('80Gi')) == 0",
                                       ".compareTo(quantity('1')) <= -1",
                                       ".isGreaterThan(quantity('100Mi'))",
                                       ".isLessThan(quantity('2k'))"};
    static const char *const caps[] = {"40Gi", "80Gi", "1", "500m", "85899345920"};
    char expr[2048], names[8][40];
    dra_cel_attr attrs[8];
    dra_cel_capacity cap;
    size_t o = 0, na = 0;
    unsigned nterms = 1 + next(r, 4);
    dra_cel_device dev = {.driver = drivers[next(r, 4)], .attrs = attrs};
    char what[64];

    for (unsigned i = 0; i < 5; i++) {
        unsigned kind = next(r, 5), dom = next(r, 3);
        if (kind == 4)
            continue; /* absent */
        if (dom == 0 && next(r, 2)) /* the driver's own domain, unqualified */
            snprintf(names[na], sizeof names[na], "%s", ids[i]);
        else
            snprintf(names[na], sizeof names[na], "%s/%s", doms[dom], ids[i]);
        attrs[na].name = names[na];
        attrs[na].kind = kind == 0 || kind == 3 ? DRA_CEL_ATTR_STRING
                         : kind == 1            ? DRA_CEL_ATTR_INT
                                                : DRA_CEL_ATTR_BOOL;
        attrs[na].s = svals[next(r, 6)];
        attrs[na].i = (int64_t)next(r, 5);
        attrs[na].b = (int)next(r, 2);
        na++;
    }
    dev.nattrs = na;
    if (next(r, 4)) {
        cap.name = next(r, 4) ? "gpu.nvidia.com/memory" : "gpu.nvidia.com/other";
        const char *q = caps[next(r, 5)];
        assert_int_equal(dra_quantity_parse(q, strlen(q), &cap.value), DRA_OK);
        dev.caps = &cap;
        dev.ncaps = 1;
    }
    for (unsigned i = 0; i < nterms; i++) {
        unsigned kind = next(r, 3);
        o += (size_t)snprintf(expr + o, sizeof expr - o, "%s", i ? " && " : "");
        if (kind == 0)
            o += (size_t)snprintf(expr + o, sizeof expr - o, "device.driver %s '%s'",
                                  next(r, 3) ? "==" : "!=", drivers[next(r, 4)]);
        else if (kind == 1)
            o += (size_t)snprintf(expr + o, sizeof expr - o,
                                  "device.attributes['%s'].%s %s %s", doms[next(r, 3)],
                                  ids[next(r, 5)], next(r, 3) ? "==" : "!=", consts[next(r, 8)]);
        else
            o += (size_t)snprintf(expr + o, sizeof expr - o,
                                  "device.capacity['gpu.nvidia.com'].memory%s", qcmp[next(r, 5)]);
    }
    snprintf(what, sizeof what, "driver '%s'", dev.driver);
    return fast_matches_plain(&dev, expr, limit, vm, what);
}

static void test_conjunction_matches_plain(void **state)
{
    static const uint64_t limits[] = {0, 0, 0, 2, 5, 8, 11};
    (void)state;
    run_generated(check_conj, 7, limits, sizeof limits / sizeof limits[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_kernel_matches_plain),
        cmocka_unit_test(test_conjunction_matches_plain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
