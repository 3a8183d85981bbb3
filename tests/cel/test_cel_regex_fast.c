/*
 * test_cel_regex_fast.c: the regex fast path of DRA selectors.
 *
 * 1. Patterns of fixed single-byte atoms (src/cel/regex_fixed.c) against
 *    PCRE2 (lib_regex.c's RE2 translation, what every other pattern
 *    uses): generated patterns (literals, escapes, classes, \d \w \s,
 *    {n}, ^ and $, and shapes that must stay with PCRE2) on generated
 *    subjects (ASCII, UTF-8, newlines, NUL bytes): the same answer.
 * 2. DEV_MATCH (`device.attributes[d].id.matches('<constant>')` in one
 *    instruction, inline in the conjunction path) against the plain
 *    instructions (dra_cel_options.plain_code): the same result, error
 *    message and runtime cost, at the default cost limit and at limits
 *    that stop evaluation midway, on devices with missing domains or
 *    names and values of other kinds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cel/lib_regex.h"
#include "cel/vm.h"
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

/* ---- 1: fixed patterns against PCRE2 ------------------------------------------ */

static const char *const k_atoms[] = {
    "0", "a", "F", ":", "-", "_", "x", "\\.", "\\:", "\\-", "\\/", "\\[", "\\$", "\\^", "\\\\",
    "[0-3]", "[0-9a-f]", "[a-]", "[-a]", "[]a]", "[\\d:]", "[A-Z_]", "[\\-x]", "[a\\]]", "\\d",
    "\\w", "\\s", "\\t", "\\n", "[\\s0]",
    /* not fixed: PCRE2 keeps these */
    ".", "a+", "b*", "c?", "(a|b)", "[^a]", "\\D", "\\b", "a{1,2}", "a{02}", "\\x41", "(?i)a",
    "[[:alpha:]]", "[a-b-c]", "\\pL", "\xc3\xa9",
};
#define N_FIXED_ATOMS 30

static const char k_subject_bytes[] = "0123abcdefF:-_x./[]$^\\ \t\nZ";

static size_t gen_pattern(rng *r, char *out, size_t cap, int *maybe_fixed)
{
    size_t o = 0;
    unsigned n = next(r, 7);
    *maybe_fixed = 1;
    if (next(r, 2))
        out[o++] = '^';
    for (unsigned i = 0; i < n && o + 16 < cap; i++) {
        unsigned k = next(r, 10) ? next(r, N_FIXED_ATOMS)
                                 : N_FIXED_ATOMS + next(r, sizeof k_atoms / sizeof k_atoms[0] -
                                                               N_FIXED_ATOMS);
        o += (size_t)snprintf(out + o, cap - o, "%s", k_atoms[k]);
        if (k >= N_FIXED_ATOMS)
            *maybe_fixed = 0;
        if (!next(r, 6))
            o += (size_t)snprintf(out + o, cap - o, "{%u}", 1 + next(r, 3));
    }
    if (next(r, 3) == 0)
        out[o++] = '$';
    out[o] = '\0';
    return o;
}

/* A subject: usually a mutation of a string the pattern could match. */
static size_t gen_subject(rng *r, char *out, size_t cap)
{
    size_t n = next(r, 12), o = 0;
    for (size_t i = 0; i < n && o + 3 < cap; i++) {
        unsigned c = next(r, 30);
        if (c == 29) {
            out[o++] = (char)0xC3; /* é, whole */
            out[o++] = (char)0xA9;
        } else if (c == 28) {
            out[o++] = '\0';
        } else {
            out[o++] = k_subject_bytes[c % (sizeof k_subject_bytes - 1)];
        }
    }
    return o;
}


/* Whether atom |a| of |f| matches byte |c|: a literal of the word test,
 * or one of chk's, read from the matcher's own tables. */
static int fixre_atom_has(const cel_fixre *f, size_t a, unsigned c)
{
    unsigned char pm[8], pv[8];
    memcpy(pm, &f->pmask, 8);
    memcpy(pv, &f->pval, 8);
    if (a < 8 && pm[a])
        return pv[a] == c;
    for (unsigned k = 0; k < f->nchk; k++)
        if (f->chk[k] == a)
            return (int)((f->cls[c] >> k) & 1);
    return 0;
}
static void test_fixed_matches_pcre2(void **state)
{
    rng r = {12};
    dra_arena ar;
    lib_re_md *md = NULL;
    int fixed = 0, matched = 0, bad = 0;
    (void)state;
    dra_arena_init(&ar, NULL);
    assert_int_equal(lib_re_md_new(NULL, &md), DRA_OK);
    for (int i = 0; i < 3000 && bad < 10; i++) {
        char pat[256], subj[64];
        int maybe, oom;
        size_t plen = gen_pattern(&r, pat, sizeof pat, &maybe);
        lib_re *re = NULL;
        cel_fixre *f;
        dra_buf why;
        dra_buf_init(&why, NULL);
        if (lib_re_compile(NULL, pat, plen, &re, &why) != DRA_OK) { /* invalid: never fixed */
            dra_buf_fini(&why);
            continue;
        }
        dra_buf_fini(&why);
        f = cel_fixre_compile(&ar, pat, plen, &oom);
        assert_false(oom);
        if (f && !maybe) {
            print_error("pattern /%s/ taken as fixed\n", pat);
            bad++;
        }
        fixed += f != NULL;
        for (int k = 0; f && k < 40; k++) {
            size_t n = gen_subject(&r, subj, sizeof subj);
            long ov[2];
            int want, got;
            if (k == 0) { /* something that matches: the sets' first bytes */
                n = 0;
                for (size_t a = 0; a < f->n && n < sizeof subj; a++)
                    for (unsigned c = 0; c < 128; c++)
                        if (fixre_atom_has(f, a, c)) {
                            subj[n++] = (char)c;
                            break;
                        }
            }
            want = lib_re_search(re, md, subj, n, 0, 0, ov, 2, NULL);
            got = cel_fixre_match(f, subj, n);
            matched += want == 1;
            if (want != got) {
                print_error("pattern /%s/ on %zu bytes \"%.*s\": PCRE2 %d, fixed %d\n", pat, n,
                            (int)n, subj, want, got);
                bad++;
            }
        }
        lib_re_free(re);
    }
    print_message("%d fixed patterns, %d matching subjects\n", fixed, matched);
    lib_re_md_free(md);
    dra_arena_fini(&ar);
    assert_int_equal(bad, 0);
    assert_true(fixed > 500);
    assert_true(matched > 500);
}

/* Hand-picked corners: what Go reads differently from a first guess. */
static void test_fixed_corners(void **state)
{
    static const struct {
        const char *pat;
        int fixed;
    } cases[] = {
        {"^0000:[0-3][0-9a-f]:", 1}, {"", 1}, {"^", 1}, {"$", 1}, {"^$", 1}, {"a{2}", 1},
        {"a{02}", 0}, {"a{,2}", 0}, {"\\{", 1}, {"{", 0}, {"[a-b-c]", 0}, {"a$b", 0},
        {"a^", 0}, {"[]a]", 1}, {"[^a]", 0}, {"\\Qa\\E", 0}, {"a|b", 0}, {"\xc3\xa9", 0},
    };
    dra_arena ar;
    (void)state;
    dra_arena_init(&ar, NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int oom;
        cel_fixre *f = cel_fixre_compile(&ar, cases[i].pat, strlen(cases[i].pat), &oom);
        if ((f != NULL) != cases[i].fixed)
            fail_msg("/%s/: fixed %d, expected %d", cases[i].pat, f != NULL, cases[i].fixed);
    }
    dra_arena_fini(&ar);
}

/* ---- 2: DEV_MATCH against the plain instructions ------------------------------- */

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

/* The fast and the plain environment for one cost limit, made once. */
typedef struct envs {
    uint64_t limit;
    dra_cel_env *fast, *plain;
} envs;

static int fast_matches_plain(const dra_cel_device *dev, const char *expr, const envs *e,
                              dra_cel_vm *vm)
{
    dra_cel_prepared *pd = NULL;
    dra_cel_env *fast = e->fast, *plain = e->plain;
    uint64_t limit = e->limit;
    outcome a, b;
    int differ;
    assert_int_equal(dra_cel_device_prepare(NULL, dev, &pd), DRA_OK);
    eval(fast, vm, pd, expr, &a);
    eval(plain, vm, pd, expr, &b);
    differ = a.rc != b.rc || a.result != b.result || a.cost != b.cost || strcmp(a.msg, b.msg);
    if (differ)
        print_error("limit %llu: %s\n  fast  %s %d cost %llu '%s'\n"
                    "  plain %s %d cost %llu '%s'\n",
                    (unsigned long long)limit, expr, dra_errname(a.rc), a.result,
                    (unsigned long long)a.cost, a.msg, dra_errname(b.rc), b.result,
                    (unsigned long long)b.cost, b.msg);
    dra_cel_prepared_free(pd);
    return differ;
}

static int check_dev_match(rng *r, const envs *e, dra_cel_vm *vm)
{
    static const char *const doms[] = {"resource.kubernetes.io", "gpu.nvidia.com", "missing.io"};
    static const char *const ids[] = {"pciBusID", "uuid", "index", "missing"};
    static const char *const pats[] = {
        "^0000:[0-3][0-9a-f]:", "^0000:0[0-9]:", "[0-9a-f]{2}\\.[0-7]$", "GPU-", "^GPU-\\w{8}-",
        ":", "", "^$", "\\d\\d", /* fixed */
        "^0000:(0|1)", "GPU-.*", "[^0]", "(?i)gpu", /* PCRE2 */
    };
    static const char *const svals[] = {
        "0000:01:00.0", "0000:3f:00.7", "0000:41:00.0", "0002:01:00.0", "GPU-137d7996-cb8e",
        "gpu-abc", "", "\xc3\xa9t\xc3\xa9 0000:01:", ("0000:0a:00.0 and a much longer tail that crosses the ten code points of "
         "the cost steps several times over, twice"),
    };
    char expr[1024], names[4][48];
    dra_cel_attr attrs[4];
    size_t o = 0, na = 0;
    unsigned nterms = 1 + next(r, 3);
    dra_cel_device dev = {.driver = "gpu.nvidia.com", .attrs = attrs};
    for (unsigned i = 0; i < 4; i++) {
        unsigned kind = next(r, 6), dom = next(r, 2);
        if (kind == 5)
            continue; /* absent */
        snprintf(names[na], sizeof names[na], "%s/%s", doms[dom], ids[i]);
        attrs[na].name = names[na];
        attrs[na].kind = kind <= 2 ? DRA_CEL_ATTR_STRING : kind == 3 ? DRA_CEL_ATTR_INT
                                                                     : DRA_CEL_ATTR_BOOL;
        attrs[na].s = svals[next(r, 9)];
        attrs[na].i = 3;
        attrs[na].b = 1;
        na++;
    }
    dev.nattrs = na;
    for (unsigned i = 0; i < nterms; i++) {
        unsigned kind = next(r, 4);
        const char *dom = doms[next(r, 3)], *id = ids[next(r, 4)];
        o += (size_t)snprintf(expr + o, sizeof expr - o, "%s", i ? " && " : "");
        if (kind == 0)
            o += (size_t)snprintf(expr + o, sizeof expr - o, "device.driver == 'gpu.nvidia.com'");
        else if (kind == 1)
            o += (size_t)snprintf(expr + o, sizeof expr - o, "device.attributes['%s']['%s']"
                                  ".matches('%s')", dom, id, pats[next(r, 13)]);
        else
            o += (size_t)snprintf(expr + o, sizeof expr - o, "device.attributes['%s'].%s"
                                  ".matches('%s')", dom, id, pats[next(r, 13)]);
    }
    return fast_matches_plain(&dev, expr, e, vm);
}

static void test_dev_match_matches_plain(void **state)
{
    static const uint64_t limits[] = {0, 0, 0, 2, 4, 5, 6, 9, 12};
    enum { NL = sizeof limits / sizeof limits[0] };
    envs e[NL];
    dra_cel_vm *vm = NULL;
    rng r = {21};
    int bad = 0;
    (void)state;
    for (size_t i = 0; i < NL; i++) {
        dra_cel_options fo = {.cost_limit = limits[i]};
        dra_cel_options po = {.cost_limit = limits[i], .plain_code = 1};
        e[i].limit = limits[i];
        assert_int_equal(dra_cel_env_new_dra(NULL, &fo, &e[i].fast), DRA_OK);
        assert_int_equal(dra_cel_env_new_dra(NULL, &po, &e[i].plain), DRA_OK);
    }
    assert_int_equal(dra_cel_vm_new(NULL, &vm), DRA_OK);
    for (int i = 0; i < 6000 && bad < 10; i++)
        bad += check_dev_match(&r, &e[next(&r, NL)], vm);
    dra_cel_vm_free(vm);
    for (size_t i = 0; i < NL; i++) {
        dra_cel_env_free(e[i].fast);
        dra_cel_env_free(e[i].plain);
    }
    assert_int_equal(bad, 0);
}

/* The selector of the benchmark's (e) compiles to one DEV_MATCH term on
 * the inline path with its pattern fixed; (a PCRE2-only pattern too, on
 * the full path). */
static void test_dev_match_compiled(void **state)
{
    static const char e[] =
        "device.attributes['resource.kubernetes.io'].pciBusID.matches('^0000:[0-3][0-9a-f]:')";
    static const char g[] = "device.attributes['resource.kubernetes.io'].pciBusID.matches('^(0|1)')";
    dra_cel_env *env = NULL;
    dra_cel_program *p = NULL;
    (void)state;
    assert_int_equal(dra_cel_env_new_dra(NULL, NULL, &env), DRA_OK);
    assert_int_equal(dra_cel_compile(env, e, strlen(e), &p, NULL), DRA_OK);
    assert_int_equal(p->code[0].op, CEL_OP_DEV_MATCH);
    assert_int_equal(p->conj_terms, 1);
    assert_non_null(p->cterms);
    assert_non_null(p->cterms[0].fix);
    assert_int_equal(p->cterms[0].qcost, 5); /* ceil(20 / 4) */
    dra_cel_program_unref(p);
    assert_int_equal(dra_cel_compile(env, g, strlen(g), &p, NULL), DRA_OK);
    assert_int_equal(p->code[0].op, CEL_OP_DEV_MATCH);
    assert_null(p->cterms);
    dra_cel_program_unref(p);
    dra_cel_env_free(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_matches_pcre2),
        cmocka_unit_test(test_fixed_corners),
        cmocka_unit_test(test_dev_match_matches_plain),
        cmocka_unit_test(test_dev_match_compiled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
