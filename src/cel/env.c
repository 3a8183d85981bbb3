/*
 * env.c: environments (declared variables, the function registry built
 * from the library tables, type names), the public compile entry points,
 * program lifetime and VM handles. The DRA-specific environment and
 * device activation live in dra_env.c.
 */
#include <stdio.h>

#include "vm.h"

/* Libraries from cel-libs: src/cel/lib_all.h lists CEL_LIB(symbol)
 * lines; it is optional so the engine builds before any exists. */
#if defined(__has_include)
#if __has_include("lib_all.h")
#define CEL_HAVE_LIB_ALL 1
#define CEL_LIB(sym) extern const cel_lib sym;
#include "lib_all.h"
#undef CEL_LIB
#endif
#endif

static const cel_lib *const builtin_libs[] = {
    &cel_lib_std,
    &cel_lib_encoders,
#ifdef CEL_HAVE_LIB_ALL
#define CEL_LIB(sym) &sym,
#include "lib_all.h"
#undef CEL_LIB
#endif
};

/* ---- types ------------------------------------------------------------------ */

static const char *skip_ws(const char *s)
{
    while (*s == ' ')
        s++;
    return s;
}

/* Parses one type at *s (advancing it). */
static const cel_type *parse_type(dra_cel_env *env, const char **s)
{
    const char *p = skip_ws(*s), *start = p;
    size_t n;
    const cel_type *t, *a0, *a1;
    while (*p && *p != '(' && *p != ')' && *p != ',' && *p != ' ')
        p++;
    n = (size_t)(p - start);
    if (n == 0)
        return NULL;
    p = skip_ws(p);
    if (*p == '(') {
        p++;
        a0 = parse_type(env, &p);
        if (!a0)
            return NULL;
        p = skip_ws(p);
        a1 = NULL;
        if (*p == ',') {
            p++;
            a1 = parse_type(env, &p);
            if (!a1)
                return NULL;
            p = skip_ws(p);
        }
        if (*p != ')')
            return NULL;
        *s = p + 1;
        t = NULL;
        if (n == 4 && !memcmp(start, "list", 4) && !a1)
            t = cel_type_list_of(&env->arena, a0);
        else if (n == 3 && !memcmp(start, "map", 3) && a1)
            t = cel_type_map_of(&env->arena, a0, a1);
        else if (n == 13 && !memcmp(start, "optional_type", 13) && !a1)
            t = cel_type_wrap(&env->arena, CEL_T_OPTIONAL, "optional_type", a0);
        else if (n == 4 && !memcmp(start, "type", 4) && !a1)
            t = cel_type_wrap(&env->arena, CEL_T_TYPE, "type", a0);
        else
            return NULL;
        if (!t)
            env->oom = 1;
        return t;
    }
    *s = p;
    if (n == 1 && start[0] >= 'A' && start[0] <= 'Z') {
        char *nm = dra_arena_strndup(&env->arena, start, 1);
        t = nm ? cel_type_wrap(&env->arena, CEL_T_PARAM, nm, NULL) : NULL;
        if (!t)
            env->oom = 1;
        return t;
    }
    if (n == 9 && !memcmp(start, "timestamp", 9))
        return &cel_t_timestamp;
    if (n == 8 && !memcmp(start, "duration", 8))
        return &cel_t_duration;
    if (n == 19 && !memcmp(start, "google.protobuf.Any", 19))
        return &cel_t_any;
    if ((n == 4 && !memcmp(start, "list", 4)) || (n == 3 && !memcmp(start, "map", 3))) {
        t = n == 4 ? cel_type_list_of(&env->arena, &cel_t_dyn)
                   : cel_type_map_of(&env->arena, &cel_t_dyn, &cel_t_dyn);
        if (!t)
            env->oom = 1;
        return t;
    }
    t = cel_env_find_type(env, start, n);
    return t;
}

const cel_type *cel_env_parse_type(dra_cel_env *env, const char *s)
{
    const char *p = s;
    const cel_type *t;
    t = parse_type(env, &p); /* sets env->oom when an allocation failed */
    if (!t || *skip_ws(p))
        return NULL;
    return t;
}

const cel_type *cel_env_find_type(const dra_cel_env *env, const char *name, size_t len)
{
    static const cel_type *const simple[] = {
        &cel_t_dyn, &cel_t_null, &cel_t_bool, &cel_t_int, &cel_t_uint, &cel_t_double,
        &cel_t_string, &cel_t_bytes, &cel_t_type, &cel_t_duration, &cel_t_timestamp,
        &cel_t_quantity, &cel_t_semver, &cel_t_list, &cel_t_map, &cel_t_optional};
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (strlen(simple[i]->name) == len && !memcmp(simple[i]->name, name, len))
            return simple[i];
    return dra_map_get(&env->types, name, len);
}

static dra_err add_named_type(dra_cel_env *env, const char *name, cel_tkind kind,
                              const cel_object_type *obj)
{
    cel_type *t;
    if (dra_map_get(&env->types, name, strlen(name)))
        return DRA_OK;
    t = dra_arena_zalloc(&env->arena, sizeof *t);
    if (!t)
        return DRA_ENOMEM;
    t->kind = (uint8_t)kind;
    t->name = name;
    t->obj = obj;
    return dra_map_put(&env->types, name, strlen(name), t);
}

/* ---- functions ------------------------------------------------------------------ */

const cel_fn_entry *cel_env_fn(const dra_cel_env *env, const char *name, size_t len)
{
    return dra_map_get(&env->fns, name, len);
}

dra_err cel_env_add_overloads(dra_cel_env *env, const cel_overload *ovs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cel_overload *ov = &ovs[i];
        cel_fn_entry *fe = dra_map_get(&env->fns, ov->name, strlen(ov->name));
        const cel_type **sig;
        size_t na = 0;
        if (!fe) {
            fe = dra_arena_zalloc(&env->arena, sizeof *fe);
            if (!fe || dra_map_put(&env->fns, ov->name, strlen(ov->name), fe))
                return DRA_ENOMEM;
            fe->name = ov->name;
        }
        if (fe->n == fe->cap) {
            size_t ncap = fe->cap ? fe->cap * 2 : 4;
            const cel_overload **no = dra_arena_array(&env->arena, ncap, sizeof *no);
            const cel_type ***ns = dra_arena_array(&env->arena, ncap, sizeof *ns);
            if (!no || !ns)
                return DRA_ENOMEM;
            if (fe->n) {
                memcpy(no, fe->ovs, fe->n * sizeof *no);
                memcpy(ns, fe->sig, fe->n * sizeof *ns);
            }
            fe->ovs = no;
            fe->sig = ns;
            fe->cap = ncap;
        }
        while (na < CEL_MAX_ARGS && ov->args[na])
            na++;
        sig = dra_arena_array(&env->arena, na + 1, sizeof *sig);
        if (!sig)
            return DRA_ENOMEM;
        sig[0] = cel_env_parse_type(env, ov->result);
        for (size_t k = 0; k < na; k++)
            sig[k + 1] = cel_env_parse_type(env, ov->args[k]);
        for (size_t k = 0; k <= na; k++)
            if (!sig[k])
                return env->oom ? DRA_ENOMEM : DRA_EINVAL; /* unknown type name */
        fe->ovs[fe->n] = ov;
        fe->sig[fe->n] = sig;
        fe->n++;
    }
    return DRA_OK;
}

dra_err cel_env_register_libs(dra_cel_env *env)
{
    cel_env_info info = {env->kind, &env->opts};
    dra_err rc;
    for (size_t i = 0; i < sizeof builtin_libs / sizeof builtin_libs[0]; i++) {
        const cel_lib *lib = builtin_libs[i];
        if (lib->enabled && !lib->enabled(&info))
            continue;
        for (size_t k = 0; k < lib->ntypes; k++) {
            rc = add_named_type(env, lib->types[k]->name, CEL_T_OPAQUE, NULL);
            if (rc)
                return rc;
        }
    }
    for (size_t i = 0; i < sizeof builtin_libs / sizeof builtin_libs[0]; i++) {
        const cel_lib *lib = builtin_libs[i];
        if (lib->enabled && !lib->enabled(&info))
            continue;
        rc = cel_env_add_overloads(env, lib->overloads, lib->noverloads);
        if (rc)
            return rc;
    }
    return DRA_OK;
}

/* ---- environments ------------------------------------------------------------------ */

int cel_env_var(const dra_cel_env *env, const char *name, size_t len)
{
    for (size_t i = 0; i < env->nvars; i++)
        if (strlen(env->vars[i].name) == len && !memcmp(env->vars[i].name, name, len))
            return (int)i;
    return -1;
}

static dra_err env_new(const dra_mem *mem, const dra_cel_options *opts, cel_env_kind kind,
                       dra_cel_env **out)
{
    dra_cel_env *env = dra_calloc(mem, 1, sizeof *env);
    dra_err rc;
    *out = NULL;
    if (!env)
        return DRA_ENOMEM;
    env->mem = mem;
    dra_arena_init(&env->arena, mem);
    dra_map_init(&env->fns, mem);
    dra_map_init(&env->types, mem);
    if (opts)
        env->opts = *opts;
    if (!env->opts.cost_limit)
        env->opts.cost_limit = DRA_CEL_COST_LIMIT;
    if (!env->opts.max_expr_len)
        env->opts.max_expr_len = DRA_CEL_MAX_EXPR_LEN;
    env->kind = kind;
    rc = cel_env_register_libs(env);
    if (rc) {
        dra_cel_env_free(env);
        return rc;
    }
    *out = env;
    return DRA_OK;
}

dra_err cel_env_new_kind(const dra_mem *mem, const dra_cel_options *opts, cel_env_kind kind,
                         dra_cel_env **out)
{
    return env_new(mem, opts, kind, out);
}

dra_err dra_cel_env_new_std(const dra_mem *mem, const dra_cel_options *opts, dra_cel_env **out)
{
    return env_new(mem, opts, CEL_ENV_STD, out);
}

void dra_cel_env_free(dra_cel_env *env)
{
    if (!env)
        return;
    dra_map_fini(&env->fns);
    dra_map_fini(&env->types);
    dra_free(env->mem, env->vars);
    dra_arena_fini(&env->arena);
    dra_free(env->mem, env);
}

dra_err cel_env_declare_type(dra_cel_env *env, const char *name, const cel_type *t)
{
    char *nm;
    if (cel_env_var(env, name, strlen(name)) >= 0)
        return DRA_EEXIST;
    nm = dra_arena_strdup(&env->arena, name);
    if (!nm || dra_grow(env->mem, (void **)&env->vars, &env->capvars, env->nvars + 1,
                        sizeof *env->vars))
        return DRA_ENOMEM;
    env->vars[env->nvars].name = nm;
    env->vars[env->nvars].type = t;
    env->nvars++;
    return DRA_OK;
}

dra_err cel_env_add_object_type(dra_cel_env *env, const cel_object_type *ot)
{
    return add_named_type(env, ot->name, CEL_T_OBJECT, ot);
}

dra_err dra_cel_env_declare(dra_cel_env *env, const char *name, const char *type)
{
    const cel_type *t = cel_env_parse_type(env, type);
    if (!t)
        return env->oom ? DRA_ENOMEM : DRA_EINVAL;
    return cel_env_declare_type(env, name, t);
}

dra_err dra_cel_env_set_container(dra_cel_env *env, const char *container)
{
    char *c = dra_arena_strdup(&env->arena, container ? container : "");
    if (!c)
        return DRA_ENOMEM;
    env->container = c;
    return DRA_OK;
}

/* ---- compile ------------------------------------------------------------------------ */

static const cel_type *dra_result_ok(const cel_type *t)
{
    return (t->kind == CEL_T_BOOL || t->kind == CEL_T_DYN || t->kind == CEL_T_ANY) ? t : NULL;
}

dra_err dra_cel_compile_ex(dra_cel_env *env, const char *expr, size_t len, unsigned flags,
                           dra_cel_program **out, dra_diag *d)
{
    dra_cel_program *p;
    cel_parse_opts po = {(flags & DRA_CEL_DISABLE_MACROS) != 0};
    cel_check_opts co = {(flags & DRA_CEL_DISABLE_CHECK) != 0};
    cel_check_out cko;
    cel_ast *root;
    dra_err rc;
    *out = NULL;
    if (len > env->opts.max_expr_len) {
        dra_diag_add(d, "", 0, 0, "expression is too long: %zu bytes, the limit is %zu", len,
                     env->opts.max_expr_len);
        return DRA_ELIMIT;
    }
    p = dra_calloc(env->mem, 1, sizeof *p);
    if (!p)
        return DRA_ENOMEM;
    p->refs = 1;
    p->mem = env->mem;
    p->env_kind = env->kind;
    p->opts = env->opts;
    p->cost_limit = env->opts.cost_limit;
    dra_arena_init(&p->arena, env->mem);
    root = cel_parse(&p->arena, expr, len, &po, d, &rc);
    if (!root)
        goto fail;
    rc = cel_check(env, &p->arena, root, expr, len, &co, &cko, d);
    if (rc)
        goto fail;
    p->vars = cko.vars;
    p->nvars = cko.nvars;
    p->result_type = cko.type;
    if (env->kind == CEL_ENV_DRA && !dra_result_ok(cko.type)) {
        dra_buf b;
        dra_buf_init(&b, env->mem);
        cel_type_format(cko.type, &b);
        dra_diag_add(d, "", 0, 0, "must evaluate to bool or the unknown type, not %s",
                     b.p ? b.p : "?");
        dra_buf_fini(&b);
        rc = DRA_ETYPE;
        goto fail;
    }
    p->cost_estimate = cel_estimate_cost(env, root);
    rc = cel_compile_ast(env, p, root, cko.nlocals, d, expr, len);
    if (rc)
        goto fail;
    *out = p;
    return DRA_OK;
fail:
    dra_cel_program_unref(p);
    return rc;
}

dra_err dra_cel_compile(dra_cel_env *env, const char *expr, size_t len, dra_cel_program **out,
                        dra_diag *d)
{
    return dra_cel_compile_ex(env, expr, len, 0, out, d);
}

dra_cel_program *dra_cel_program_ref(dra_cel_program *p)
{
    if (p)
        __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
    return p;
}

void dra_cel_program_unref(dra_cel_program *p)
{
    if (!p || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    dra_arena_fini(&p->arena);
    dra_free(p->mem, p);
}

uint64_t dra_cel_program_cost_estimate(const dra_cel_program *p)
{
    return p->cost_estimate;
}

const char *dra_cel_program_type(const dra_cel_program *p)
{
    static const char *const names[] = {"dyn", "null_type", "bool", "int", "uint", "double",
                                        "string", "bytes", "list", "map", "type"};
    const cel_type *t = p->result_type;
    if (!t)
        return "dyn";
    if (t->kind < sizeof names / sizeof names[0])
        return names[t->kind];
    return t->name;
}

/* ---- VM handles ------------------------------------------------------------------------ */

dra_err dra_cel_vm_new(const dra_mem *mem, dra_cel_vm **out)
{
    dra_cel_vm *vm = dra_calloc(mem, 1, sizeof *vm);
    *out = vm;
    if (!vm)
        return DRA_ENOMEM;
    vm->c.mem = mem;
    dra_arena_init(&vm->c.scratch, mem);
    return DRA_OK;
}

void dra_cel_vm_free(dra_cel_vm *vm)
{
    if (!vm)
        return;
    for (size_t i = 0; i < CEL_CTX_SLOTS; i++)
        if (vm->c.slots[i].p && vm->c.slots[i].fini)
            vm->c.slots[i].fini(vm->c.slots[i].p, vm->c.mem);
    for (size_t i = 0; i < CEL_REGEX_CACHE; i++) {
        cel_regex_free(vm->c.mem, vm->c.rcache[i].re);
        dra_free(vm->c.mem, vm->c.rcache[i].pat);
    }
    dra_arena_fini(&vm->c.scratch);
    dra_free(vm->c.mem, vm->c.stack);
    dra_free(vm->c.mem, vm->c.locals);
    dra_free(vm->c.mem, vm);
}

uint64_t dra_cel_vm_last_cost(const dra_cel_vm *vm)
{
    return vm->c.last_cost;
}
