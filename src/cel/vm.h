/*
 * vm.h: the compiled program and the evaluation state shared by
 * compile.c (which fills a program) and vm.c (which runs it).
 */
#ifndef DRA_CEL_VM_H
#define DRA_CEL_VM_H

#include "ast.h"
#include "opcodes.h"

typedef struct cel_insn {
    uint8_t op;  /* cel_op */
    uint8_t x;   /* small operand (e.g. argument count) */
    uint16_t y;
    int32_t a, b, c;
} cel_insn;

/* A call site: the overloads that may apply, with their argument kinds
 * pre-decoded (-1 accepts any kind) for fast runtime selection. */
typedef struct cel_callsite {
    const char *name;
    uint8_t nargs;
    uint8_t n;
    const cel_overload **ovs;
    int8_t (*kinds)[CEL_MAX_ARGS];
    const char *(*tnames)[CEL_MAX_ARGS]; /* opaque type names, else NULL */
} cel_callsite;

/* Byte equality for short strings without a library call. */
static inline int cel_bytes_eq(const char *a, const char *b, size_t n)
{
    uint64_t x, y, u, v;
    uint32_t p, q, r, t;
    if (n >= 8) {
        /* Whole words, then one overlapping word for the tail. */
        while (n > 16) {
            memcpy(&x, a, 8);
            memcpy(&y, b, 8);
            if (x != y)
                return 0;
            a += 8;
            b += 8;
            n -= 8;
        }
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        memcpy(&u, a + n - 8, 8);
        memcpy(&v, b + n - 8, 8);
        return x == y && u == v;
    }
    if (n >= 4) {
        memcpy(&p, a, 4);
        memcpy(&q, b, 4);
        memcpy(&r, a + n - 4, 4);
        memcpy(&t, b + n - 4, 4);
        return p == q && r == t;
    }
    if (n >= 2) {
        uint16_t c2, d2, e2, f2;
        memcpy(&c2, a, 2);
        memcpy(&d2, b, 2);
        memcpy(&e2, a + n - 2, 2);
        memcpy(&f2, b + n - 2, 2);
        return c2 == d2 && e2 == f2;
    }
    return n == 0 || *a == *b;
}

/* cel_map_find_str, inlined for the VM's constant-key lookups. */
static inline const cel_value *cel_map_get_str(const cel_map *m, const char *key, size_t len,
                                               uint64_t hash)
{
    const cel_map_entry *e = m->e, *end;
    if (m->index) {
        size_t mask = ((size_t)1 << m->ibits) - 1;
        for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
            unsigned slot = m->index[i];
            if (!slot)
                return NULL;
            e = &m->e[slot - 1];
            if (e->hash == hash && e->k.n == len && e->k.kind == CEL_K_STRING &&
                cel_bytes_eq(e->k.u.s, key, len))
                return &e->v;
        }
    }
    if (!m->n)
        return NULL;
    for (end = e + m->n; e < end; e++)
        if (e->hash == hash && e->k.n == len && e->k.kind == CEL_K_STRING &&
            cel_bytes_eq(e->k.u.s, key, len))
            return &e->v;
    return NULL;
}

/* Value flag: pad holds the string's code-point count (cost tracking). */
#define CEL_VF_CPLEN 1u

/* |v| with its code-point count cached when it is a string short enough:
 * for values that live long (constants, device attributes), so the cost
 * tracker does not count them on every evaluation. */
static inline cel_value cel_with_cplen(cel_value v)
{
    if (v.kind == CEL_K_STRING) {
        size_t cp = cel_utf8_len(v.u.s, v.n);
        if (cp < 0xFFFF) {
            v.flags |= CEL_VF_CPLEN;
            v.pad = (uint16_t)cp;
        }
    }
    return v;
}

/* ANY_DEV's string kernel (its EXT's x): the predicate is contains /
 * startsWith / endsWith on strings, after lowerAscii / upperAscii of the
 * device string or nothing, so the loop runs it without calls. */
enum {
    CEL_DSK_CONTAINS = 1,
    CEL_DSK_STARTS = 2,
    CEL_DSK_ENDS = 3,
    CEL_DSK_TEST = 3, /* mask of the three above */
    CEL_DSK_LOWER = 4,
    CEL_DSK_UPPER = 8
};

/* A constant of ANY_DEV's string kernel, prepared for the search: its
 * first and last bytes repeated (one 16-byte compare tests sixteen
 * positions) and the cost factor the overloads charge for it. */
typedef struct cel_dsk_needle {
    _Alignas(16) unsigned char first[16];
    unsigned char last[16];
    unsigned char head[16]; /* its first 16 bytes, zeros after */
    uint32_t hmask;         /* one bit per byte of head that is the needle's */
    const char *s;
    size_t n;
    uint64_t t10; /* its size (code points) / 10, rounded up */
} cel_dsk_needle;

/* ANY_DEV's string kernel: the loop over the constants |t| with the
 * test and conversion |kern| (CEL_DSK_*), exists (all 0) or all (1). */
typedef struct cel_dsk {
    const cel_dsk_needle *t;
    size_t nt;
    uint8_t kern, all;
} cel_dsk;

/* A constant string prepared for equality with strings of its length:
 * the words cel_ckey_eq loads from the other string, loaded from it once
 * (up to 16 bytes; longer: its bytes compared). */
typedef struct cel_ckey {
    uint64_t w0, w1;
    const char *s;
    size_t n;
    uint64_t hash; /* as a map key: cel_value_hash */
} cel_ckey;

/* The words of |s| (n bytes) that cel_ckey_eq compares. */
static inline void cel_ckey_words(const char *s, size_t n, uint64_t *w0, uint64_t *w1)
{
    uint32_t a4, b4;
    uint16_t a2, b2;
    *w0 = *w1 = 0;
    if (n >= 8) {
        if (n <= 16) {
            memcpy(w0, s, 8);
            memcpy(w1, s + n - 8, 8);
        }
    } else if (n >= 4) {
        memcpy(&a4, s, 4);
        memcpy(&b4, s + n - 4, 4);
        *w0 = a4;
        *w1 = b4;
    } else if (n >= 2) {
        memcpy(&a2, s, 2);
        memcpy(&b2, s + n - 2, 2);
        *w0 = a2;
        *w1 = b2;
    } else if (n == 1) {
        *w0 = (unsigned char)s[0];
    }
}

/* 1 when |s| (k->n bytes) holds k's bytes. */
static inline int cel_ckey_eq(const cel_ckey *k, const char *s)
{
    uint64_t w0, w1;
    if (k->n > 16)
        return cel_bytes_eq(s, k->s, k->n);
    cel_ckey_words(s, k->n, &w0, &w1);
    return w0 == k->w0 && w1 == k->w1;
}

/* The longest device string the DRA cost estimate assumes (cost.c:
 * Kubernetes' 64-character attribute limit). The conjunction paths skip
 * the cost-limit checks because the estimate is within the limit; a
 * term whose cost grows with a longer string must not. */
#define CEL_DRA_EST_STRLEN 64

/* A pattern whose matches are a fixed run of single-byte atoms
 * (regex_fixed.c); start / end: the pattern begins with ^ / ends with $.
 * The atoms among the first eight that are one literal byte are tested
 * together as one word (pval under pmask, the first pn bytes); chk lists
 * the others, tested one by one: atom chk[k] matches byte c when bit k of
 * cls[c] is set (one load per atom, whatever its set). */
#define CEL_FIXRE_MAX 64
typedef struct cel_fixre {
    uint64_t pmask, pval;
    uint16_t n;
    uint8_t start, end, pn, nchk;
    uint8_t chk[CEL_FIXRE_MAX];
    uint64_t cls[256];
} cel_fixre;

/* The pattern |pat| as a cel_fixre in |ar|, or NULL when it is not of
 * that form (then PCRE2 matches it) or on ENOMEM (*oom set). |pat| must
 * be a valid RE2 pattern (checked by cel_regex_compile first). */
CEL_FUNC cel_fixre *cel_fixre_compile(dra_arena *ar, const char *pat, size_t len, int *oom);

/* Whether the atoms match at |s|, which has |avail| >= f->n bytes. */
static inline int cel_fixre_at(const cel_fixre *f, const unsigned char *s, size_t avail)
{
    if (f->pmask) {
        uint64_t w = 0;
        if (avail >= 8) {
            memcpy(&w, s, 8);
        } else {
            unsigned char b[8] = {0};
            for (size_t i = 0; i < f->pn; i++)
                b[i] = s[i];
            memcpy(&w, b, 8);
        }
        if ((w & f->pmask) != f->pval)
            return 0;
    }
    for (size_t k = 0; k < f->nchk; k++)
        if (!((f->cls[s[f->chk[k]]] >> k) & 1))
            return 0;
    return 1;
}

/* RE2's answer for |str| (valid UTF-8): 1 when the pattern matches. */
static inline int cel_fixre_match(const cel_fixre *f, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t last;
    if (len < f->n)
        return 0;
    last = len - f->n;
    if (f->end)
        return (!f->start || last == 0) && cel_fixre_at(f, s + last, f->n);
    if (f->start)
        return cel_fixre_at(f, s, len);
    for (size_t p = 0; p <= last; p++)
        if (cel_fixre_at(f, s + p, len - p))
            return 1;
    return 0;
}

/* A term of a conjunction program (conj_terms), decoded once for the
 * inline path (cel_cterm_fast): the device value, device.<field> or
 * device.<field>['<dom>'].<id>, and the constant it is compared with. */
typedef struct cel_cterm {
    uint8_t op;     /* CEL_OP_DEV_FIELD_EQ, _ATTR_EQ (string k), _QCMP or _MATCH */
    uint8_t x;      /* _EQ: 1 for !=; _QCMP: the truth table */
    uint8_t field;
    uint32_t qcost; /* _QCMP: what compareTo charges; _MATCH: the pattern's
                     * factor of matches' cost, ceil(size / 4) */
    uint32_t kcp;   /* string k: its code points, and their tenth rounded up */
    uint32_t kcost;
    cel_ckey k;     /* the string constant */
    const dra_quantity *q; /* _QCMP: the quantity */
    cel_ckey dom, id;
    const struct cel_fixre *fix; /* _MATCH: the pattern */
} cel_cterm;

struct dra_cel_program {
    int refs;
    const dra_mem *mem;
    dra_arena arena;
    cel_insn *code;
    size_t ncode;
    cel_value *consts;
    uint64_t *hashes;          /* per constant: cel_value_hash */
    const struct cel_fixre **fixre; /* per constant: a DEV_MATCH pattern of
                                     * fixed single-byte atoms, else NULL */
    size_t nconsts;
    cel_callsite *calls;
    size_t ncalls;
    const char **vars;         /* names of the activation variables */
    size_t nvars;
    int nlocals;
    int max_stack;
    uint64_t cost_estimate;
    uint64_t cost_limit;
    const cel_type *result_type;
    cel_env_kind env_kind;
    dra_cel_options opts;
    int dra_any_result;        /* DRA: result may be dyn, checked at runtime */
    /* Shape: a conjunction of device comparisons (term (JF_KEEP term
     * AND)* RET, every term DEV_FIELD_EQ or DEV_ATTR_EQ); cel_vm_run
     * evaluates these without the dispatch loop. 0 when another shape. */
    int conj_terms;
    cel_cterm *cterms;         /* the conj_terms terms decoded, or NULL when
                                * one compares with a constant that is not a
                                * string (the full path decides those) */
    /* ANY_DEV string kernels, EXT.y their index. */
    cel_dsk **dsk;
    size_t ndsk;
    /* Shape: ANY_DEV at 0 whose loop ends in LOCAL accumulator, RET
     * (`[...].exists(p, device...f(p))` alone): cel_vm_dev_loop. */
    int dev_loop_only;
};

/* The exists (all 0) / all (all 1) loop condition on the accumulator,
 * @not_strictly_false(!accu) / (accu), with what the generic code charges
 * for it (accu, !, @not_strictly_false: 3 / 2) plus, when the loop goes
 * on, the step's read of accu (1), as early as the generic code does.
 * 0: leave the loop. */
static inline int cel_any_goes_on(cel_value accu, int all, uint64_t *cost)
{
    if (accu.kind == CEL_K_BOOL && accu.u.b == !all) {
        *cost += 3 - (uint64_t)all;
        return 0;
    }
    *cost += 4 - (uint64_t)all;
    return 1;
}

/* DEV_QCMP's x: bits 0-2 the truth table; this bit when the fused
 * comparison is == or !=, charged (1) when the capacity is an error. */
#define CEL_QCMP_EQ_ON_ERROR 8u

/* DEV_QCMP's answer: the bit of its truth table |x| for the sign of the
 * capacity's compareTo. */
static inline int cel_qcmp_truth(unsigned x, int sign)
{
    return (x >> (sign < 0 ? 0 : sign > 0 ? 2 : 1)) & 1;
}

/* DEV_QCMP on the capacity |v|: against the instruction's constant c. */
static inline int cel_qcmp_bit(const dra_cel_program *p, const cel_insn *in, const cel_value *v)
{
    return cel_qcmp_truth(in->x, dra_quantity_cmp(v->u.q, p->consts[in->c].u.q));
}

/* Term |i| of a conjunction program: term (JF_KEEP term AND)* RET. */
static inline const cel_insn *cel_conj_term(const cel_insn *code, int i)
{
    return code + (i ? 3 * i - 1 : 0);
}

/* device.<field>['<constant dom>'].<constant id> in the device fields
 * |fields|, or NULL when the domain or the id is absent. */
static inline const cel_value *cel_dev_entry(const dra_cel_program *p, const cel_value *fields,
                                             int field, int32_t dom, int32_t id)
{
    const cel_value *k = p->consts;
    const cel_value *m = cel_map_get_str(fields[field].u.map, k[dom].u.s, k[dom].n,
                                         p->hashes[dom]);
    return m ? cel_map_get_str(m->u.map, k[id].u.s, k[id].n, p->hashes[id]) : NULL;
}

/* The entry |k| of a prepared device's map (string keys only), or NULL:
 * cel_map_get_str without the key-kind test. */
static inline const cel_value *cel_dev_map_get(const cel_map *m, const cel_ckey *k)
{
    /* A prepared device's maps hold their entries right after them: one
     * load fewer on the way to the value than m->e. */
    const cel_map_entry *e = (const cel_map_entry *)(const void *)(m + 1), *end;
    if (m->index)
        return cel_map_get_str(m, k->s, k->n, k->hash);
    for (end = e + m->n; e < end; e++)
        if (e->hash == k->hash && e->k.n == k->n && cel_ckey_eq(k, e->k.u.s))
            return &e->v;
    return NULL;
}

/* A string term's comparison of the device value |v| with t->k, with
 * DEV_FIELD_EQ's cost (DEV_ATTR_EQ adds its 2 for the lookup). */
static inline int cel_cterm_str(const cel_cterm *t, const cel_value *v, uint64_t *cost)
{
    if (v->kind != CEL_K_STRING || !(v->flags & CEL_VF_CPLEN))
        return -1;
    /* cel-go: ceil(0.1 * min size), the constant's precomputed */
    *cost += 2 + (v->pad >= t->kcp ? t->kcost : cel_tenth(v->pad));
    return (v->n == t->k.n && cel_ckey_eq(&t->k, v->u.s)) ^ t->x;
}

/* The common term: a device string equal to a string constant, or a
 * capacity against a quantity; 1 or 0, or -1 when the full path must
 * decide (missing key, other kinds). */
static CEL_ALWAYS_INLINE int cel_cterm_fast(const cel_cterm *t, const cel_value *fields, uint64_t *cost)
{
    const cel_value *v = &fields[t->field];
    if (t->op != CEL_OP_DEV_FIELD_EQ) {
        v = cel_dev_map_get(v->u.map, &t->dom);
        if (!v || !(v = cel_dev_map_get(v->u.map, &t->id)))
            return -1;
        *cost += 2; /* DEV_ATTR / DEV_QCMP / DEV_MATCH cost 4 */
        /* One test on the string-equality way (opcode order: ATTR_EQ,
         * QCMP, MATCH): (b) stays as it was. */
        if (t->op > CEL_OP_DEV_ATTR_EQ) {
            if (t->op == CEL_OP_DEV_QCMP) {
                if (v->kind != CEL_K_QUANTITY)
                    return -1;
                *cost += 2 + t->qcost;
                return cel_qcmp_truth(t->x, dra_quantity_cmp(v->u.q, t->q));
            }
            /* DEV_MATCH; longer strings than the estimate assumed: the
             * limit matters (the full path) */
            if (v->kind != CEL_K_STRING || !(v->flags & CEL_VF_CPLEN) ||
                v->pad > CEL_DRA_EST_STRLEN)
                return -1;
            /* matches: ceil(0.1 * (1 + size)) * ceil(size(pattern) / 4) */
            *cost += 2 + cel_tenth(1u + v->pad) * t->qcost;
            return cel_fixre_match(t->fix, v->u.s, v->n);
        }
    }
    /* cel_cterm_str written out: calling it gave eval_device other code
     * and the bench's (b) 0.6 ns more (measured, best of five) */
    if (v->kind != CEL_K_STRING || !(v->flags & CEL_VF_CPLEN))
        return -1;
    *cost += 2 + (v->pad >= t->kcp ? t->kcost : cel_tenth(v->pad));
    return (v->n == t->k.n && cel_ckey_eq(&t->k, v->u.s)) ^ t->x;
}

typedef struct cel_regex_cache_entry {
    char *pat;
    size_t len;
    cel_regex *re;
} cel_regex_cache_entry;

#define CEL_REGEX_CACHE 8
#define CEL_SCRATCH_LIMIT ((size_t)256 << 20) /* bytes per evaluation */

struct cel_ctx {
    const dra_mem *mem;
    dra_arena scratch;
    /* Small allocations of one evaluation come from here first (a bump
     * pointer, reset with the scratch arena), so a selector that makes
     * one short string (lowerAscii) touches no arena block. */
    size_t small_used;
    _Alignas(16) unsigned char small[512];
    cel_value *stack;
    size_t stack_cap;
    cel_value *locals;
    size_t locals_cap;
    uint64_t cost, limit, last_cost;
    const dra_cel_program *prog;
    const cel_value *vars;   /* activation, prog->nvars values */
    const dra_cel_options *opts;
    cel_regex_cache_entry rcache[CEL_REGEX_CACHE];
    unsigned rnext;
    int cost_exceeded;
    int oom;
    struct {
        const void *key;
        void *p;
        void (*fini)(void *p, const dra_mem *mem);
    } slots[CEL_CTX_SLOTS];
};

struct dra_cel_vm {
    cel_ctx c;
};

/* Runs |p| with |vars| (p->nvars values). Returns the result value (an
 * error value on failure); *rc is DRA_OK, DRA_ECOST or DRA_ENOMEM. */
CEL_FUNC cel_value cel_vm_run(cel_ctx *c, const dra_cel_program *p, const cel_value *vars,
                              dra_err *rc);
/* Runs a program of the conj_terms shape with every rule (errors, other
 * kinds, false winning over an earlier error): 1 true, 0 false, -1 error
 * (*err set), -2 when a DEV_MATCH term meets a device string longer than
 * the cost estimate assumes (run cel_vm_run, which checks the limit).
 * The common case is cel_cterm_fast's, inline in the caller. conj_terms
 * is set only where the worst-case cost is within the limit, so no limit
 * is checked. */
CEL_FUNC int cel_vm_conj(cel_ctx *c, const dra_cel_program *p, const cel_value *vars,
                         cel_value *err);
/* Runs a program of the dev_loop_only shape (one ANY_DEV loop and its
 * result) without the dispatch loop: 1 with *out and *rc as cel_vm_run
 * gives them, 0 when the device lacks the value (run cel_vm_run). */
CEL_FUNC int cel_vm_dev_loop(cel_ctx *c, const dra_cel_program *p, const cel_value *vars,
                             cel_value *out, dra_err *rc);
/* Compiles a checked AST into |p| (whose arena and env fields are set). */
CEL_FUNC dra_err cel_compile_ast(dra_cel_env *env, dra_cel_program *p, cel_ast *root,
                                 int nlocals, dra_diag *d, const char *src, size_t len);
CEL_FUNC void cel_regex_free(const dra_mem *mem, cel_regex *re);
/* Compiles an RE2 pattern; NULL with *rc (DRA_EPARSE, DRA_ELIMIT,
 * DRA_ENOMEM) and Go's message in |why|. */
CEL_FUNC cel_regex *cel_regex_compile(const dra_mem *mem, const char *pat, size_t len,
                                      dra_buf *why, dra_err *rc);
/* Runs the call site |cs| on |args| (runtime overload selection). */
CEL_FUNC cel_value cel_vm_dispatch(cel_ctx *c, const cel_callsite *cs, cel_value *args);
/* 1 when |t| (m bytes) occurs in |s| (n bytes): contains on strings. */
CEL_FUNC int cel_has_sub(const char *s, size_t n, const char *t, size_t m);
/* |s| with its ASCII letters converted to lower (upper 0) or upper case
 * into |o| (n bytes, not terminated): lowerAscii / upperAscii. */
CEL_FUNC void cel_ascii_case_copy(const char *s, size_t n, char *o, int upper);
/* ANY_DEV's loop with its string kernel |k| on the device string |inv|,
 * charging from *cost on as the generic loop charges. 1: done, *result
 * set; -1: over |limit|; 0: the string is too long for the kernel (run
 * the generic loop). *cost is updated. */
CEL_FUNC int cel_dev_str_loop(const cel_dsk *k, cel_value inv, uint64_t limit, uint64_t *cost,
                              int *result);
/* The kernel of |kern| over the constant strings |l| (exists: all 0;
 * all: 1) in |ar|; NULL on ENOMEM. */
CEL_FUNC cel_dsk *cel_dsk_new(dra_arena *ar, const cel_list *l, unsigned kern, int all);
CEL_FUNC void cel_format_double(double d, char *out, size_t size);
CEL_FUNC void cel_format_duration(int64_t ns, char *out, size_t size);
CEL_FUNC void cel_format_timestamp(int64_t sec, uint32_t nanos, char *out, size_t size);
CEL_FUNC void cel_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);
CEL_FUNC int64_t cel_days_from_civil(int64_t y, unsigned m, unsigned d);
/* Value size for cost tracking: code points, bytes, entries; else 1.
 * The cached code-point count inline, the rest out of line. */
CEL_FUNC uint64_t cel_value_size_slow(cel_value v);
static inline uint64_t cel_value_size(cel_value v)
{
    if (v.kind == CEL_K_STRING && (v.flags & CEL_VF_CPLEN))
        return v.pad;
    return cel_value_size_slow(v);
}

/* A program of the dev_loop_only shape whose loop has a string kernel,
 * on the device |fields|: as cel_dev_str_loop (0 also when the device
 * value is missing or not a string: run the full path), without the
 * result's LOCAL. */
static inline int cel_dev_kernel(const dra_cel_program *p, const cel_value *fields,
                                 uint64_t *cost, int *result)
{
    const cel_insn *in = p->code, *ext = in + 1;
    const cel_value *v;
    if (!ext->x)
        return 0;
    v = cel_dev_entry(p, fields, ext->c, in->a, in->b);
    if (!v || v->kind != CEL_K_STRING)
        return 0;
    return cel_dev_str_loop(p->dsk[ext->y], *v, p->cost_limit, cost, result);
}

#endif
