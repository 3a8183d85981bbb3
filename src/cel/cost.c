/*
 * cost.c: the checker's worst-case cost estimate, as Kubernetes computes
 * it for API validation: cel-go's unit costs applied to worst-case sizes.
 * In the DRA environment sizes come from the API limits (at most 32
 * attributes and capacities per device, strings of at most 64 code
 * points, domains of 63, list attributes of 48 values); elsewhere an
 * unknown size is taken as very large, which saturates the estimate.
 */
#include "vm.h"

#define UNBOUNDED ((uint64_t)1 << 40)

typedef struct est {
    uint64_t cost;
    uint64_t size; /* max size of the value (code points, entries; 1 scalar) */
} est;

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    if (a && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}


static uint64_t type_size(const dra_cel_env *env, const cel_type *t)
{
    if (!t)
        return 1;
    switch (t->kind) {
    case CEL_T_STRING:
    case CEL_T_BYTES:
        return env->kind == CEL_ENV_DRA ? 64 : UNBOUNDED;
    case CEL_T_LIST:
        return env->kind == CEL_ENV_DRA ? 48 : UNBOUNDED;
    case CEL_T_MAP:
        return env->kind == CEL_ENV_DRA ? 32 : UNBOUNDED;
    case CEL_T_DYN:
    case CEL_T_ANY:
        return env->kind == CEL_ENV_DRA ? 64 : UNBOUNDED;
    default:
        return 1;
    }
}

static est estimate(const dra_cel_env *env, const cel_ast *e);

static int is(const cel_ast *e, const char *name)
{
    return e->namelen == strlen(name) && !memcmp(e->name, name, e->namelen);
}

static est est_call(const dra_cel_env *env, const cel_ast *e)
{
    est a[CEL_MAX_ARGS + 2], r = {0, 1};
    size_t n = 0;
    if (e->target && n < CEL_MAX_ARGS + 1)
        a[n++] = estimate(env, e->target);
    for (size_t i = 0; i < e->nargs && n < CEL_MAX_ARGS + 1; i++)
        a[n++] = estimate(env, e->args[i]);
    for (size_t i = 0; i < n; i++)
        r.cost = sat_add(r.cost, a[i].cost);
    r.size = type_size(env, e->type);
    if (is(e, "_&&_") || is(e, "_||_"))
        return r;
    if (is(e, "_?_:_")) {
        r.cost = sat_add(a[0].cost, a[1].cost > a[2].cost ? a[1].cost : a[2].cost);
        r.size = a[1].size > a[2].size ? a[1].size : a[2].size;
        return r;
    }
    if (n == 2 && (is(e, "_==_") || is(e, "_!=_") || is(e, "_<_") || is(e, "_<=_") ||
                   is(e, "_>_") || is(e, "_>=_"))) {
        uint64_t m = a[0].size < a[1].size ? a[0].size : a[1].size;
        r.cost = sat_add(r.cost, cel_tenth(m)); /* 0 against an empty string */
        r.size = 1;
        return r;
    }
    if (n == 2 && is(e, "_+_") && e->type && (e->type->kind == CEL_T_STRING ||
                                               e->type->kind == CEL_T_BYTES)) {
        r.size = sat_add(a[0].size, a[1].size);
        r.cost = sat_add(r.cost, cel_tenth(r.size));
        return r;
    }
    if (n == 2 && is(e, "_+_") && e->type && e->type->kind == CEL_T_LIST) {
        r.size = sat_add(a[0].size, a[1].size);
        r.cost = sat_add(r.cost, 1);
        return r;
    }
    if (n == 2 && is(e, "@in")) {
        /* A list (or a dyn that may be one) is searched linearly. */
        const cel_type *ct = e->args[1]->type;
        r.cost = sat_add(r.cost, ct && ct->kind == CEL_T_MAP ? 1 : a[1].size);
        return r;
    }
    if (n == 2 && (is(e, "startsWith") || is(e, "endsWith"))) {
        r.cost = sat_add(r.cost, cel_tenth(a[1].size));
        return r;
    }
    if (n == 2 && is(e, "contains")) {
        r.cost = sat_add(r.cost, sat_mul(cel_tenth(a[0].size), cel_tenth(a[1].size)));
        return r;
    }
    if (n == 2 && (is(e, "matches") || is(e, "find") || is(e, "findAll"))) {
        r.cost = sat_add(r.cost, sat_mul(cel_tenth(a[0].size + 1), (a[1].size + 3) / 4));
        return r;
    }
    if (is(e, "_[_]") || is(e, "_[?_]") || is(e, "_?._")) {
        r.cost = sat_add(r.cost, 1);
        return r;
    }
    if (n >= 1) {
        /* Kubernetes' library/cost.go estimates for the string and list
         * helpers: a traversal of the receiver, 0.1 or 0.2 per element. */
        static const struct { const char *name; int tenths; } trav[] = {
            {"lowerAscii", 1}, {"upperAscii", 1}, {"substring", 1}, {"trim", 1},
            {"replace", 2}, {"split", 2}, {"isSorted", 10}, {"sum", 10}, {"min", 10},
            {"max", 10}, {"indexOf", 10}, {"lastIndexOf", 10}};
        for (size_t i = 0; e->target && i < sizeof trav / sizeof trav[0]; i++)
            if (is(e, trav[i].name)) {
                uint64_t c = sat_mul(a[0].size, (uint64_t)trav[i].tenths);
                r.cost = sat_add(r.cost, c / 10 + (c % 10 != 0));
                return r;
            }
    }
    if (e->ncands >= 1 && e->cands[0]->est) {
        /* A library's own estimate from the argument size bounds. */
        uint64_t sizes[CEL_MAX_ARGS + 1];
        for (size_t i = 0; i < n; i++)
            sizes[i] = a[i].size;
        r.cost = sat_add(r.cost, e->cands[0]->est(sizes, n));
        return r;
    }
    r.cost = sat_add(r.cost, 1);
    return r;
}

static est estimate(const dra_cel_env *env, const cel_ast *e)
{
    est r = {0, 1}, t;
    switch (e->kind) {
    case AST_CONST:
        if (e->cval.kind == CEL_K_STRING)
            r.size = cel_utf8_len(e->cval.u.s, e->cval.n);
        else if (e->cval.kind == CEL_K_BYTES)
            r.size = e->cval.n;
        return r;
    case AST_IDENT:
        r.cost = e->ref_kind == REF_CONST ? 0 : 1;
        r.size = type_size(env, e->type);
        return r;
    case AST_SELECT:
        t = estimate(env, e->target);
        r.cost = sat_add(t.cost, e->test_only ? 0 : 1);
        r.size = type_size(env, e->type);
        if (env->kind == CEL_ENV_DRA && e->type && e->type->kind == CEL_T_STRING &&
            e->namelen == 6 && !memcmp(e->name, "driver", 6))
            r.size = 63;
        return r;
    case AST_CALL:
        return est_call(env, e);
    case AST_LIST:
    case AST_MAP:
        r.cost = e->kind == AST_LIST ? 10 : 30;
        for (size_t i = 0; i < e->nargs; i++)
            r.cost = sat_add(r.cost, estimate(env, e->args[i]).cost);
        r.size = e->kind == AST_LIST ? e->nargs : e->nargs / 2;
        return r;
    case AST_COMPREHENSION: {
        est rg = estimate(env, e->range), in = estimate(env, e->accu_init);
        est c = estimate(env, e->cond), s = estimate(env, e->step), res = estimate(env, e->result);
        uint64_t iters = rg.size;
        if (e->range->kind == AST_LIST && e->range->nargs == 0)
            iters = 0;
        r.cost = sat_add(sat_add(rg.cost, in.cost),
                         sat_add(sat_mul(iters, sat_add(c.cost, s.cost)), res.cost));
        r.size = type_size(env, e->type);
        if (e->type && e->type->kind == CEL_T_LIST)
            r.size = iters;
        return r;
    }
    default:
        return r;
    }
}

uint64_t cel_estimate_cost(const dra_cel_env *env, const cel_ast *root)
{
    return estimate(env, root).cost;
}
