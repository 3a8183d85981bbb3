/*
 * check.c: the type checker. Walks the AST once, resolving identifiers
 * (comprehension locals, declared variables with container prefixes,
 * type names), selecting overload candidates by argument types with
 * gradual typing (dyn fits anything, type parameters bind), and reporting
 * errors with line:column and a caret. With disable_check the same walk
 * only resolves names; every type is dyn and unknown names become
 * activation variables looked up at run time.
 */
#include <stdio.h>

#include "ast.h"

#define MAX_SCOPE 512
#define MAX_BIND 8

typedef struct scope_var {
    const char *name;
    int slot;
    const cel_type *type;
} scope_var;

typedef struct checker {
    dra_cel_env *env;
    dra_arena *a;
    const char *src;
    size_t len;
    dra_diag *d;
    int nerr, oom;
    int lenient;
    int unsupported;
    int exempt; /* inside a format() argument: mixed literals allowed */
    scope_var scope[MAX_SCOPE];
    int nscope;
    int nlocals, maxlocals;
    const char **vars;
    size_t nvars, capvars;
} checker;

typedef struct bindings {
    char names[MAX_BIND];
    const cel_type *types[MAX_BIND];
    int n;
} bindings;

static const cel_type *check(checker *ck, cel_ast *e);

static const cel_type *cerr(checker *ck, size_t off, const char *fmt, ...) DRA_PRINTF(3, 4);
static const cel_type *cerr(checker *ck, size_t off, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ck->nerr < 8)
        cel_report(ck->d, ck->src, ck->len, off, "%s", msg);
    ck->nerr++;
    return &cel_t_error;
}

/* ---- types ---------------------------------------------------------------- */

const cel_type *cel_type_wrap(dra_arena *a, cel_tkind kind, const char *name,
                              const cel_type *p0)
{
    cel_type *t = dra_arena_zalloc(a, sizeof *t);
    if (!t)
        return NULL;
    t->kind = (uint8_t)kind;
    t->name = name;
    t->nparams = p0 ? 1 : 0;
    t->params[0] = p0;
    return t;
}

const cel_type *cel_type_list_of(dra_arena *a, const cel_type *elem)
{
    return cel_type_wrap(a, CEL_T_LIST, "list", elem);
}

const cel_type *cel_type_map_of(dra_arena *a, const cel_type *k, const cel_type *v)
{
    cel_type *t = dra_arena_zalloc(a, sizeof *t);
    if (!t)
        return NULL;
    t->kind = CEL_T_MAP;
    t->name = "map";
    t->nparams = 2;
    t->params[0] = k;
    t->params[1] = v;
    return t;
}

static int is_dyn(const cel_type *t)
{
    return !t || t->kind == CEL_T_DYN || t->kind == CEL_T_ANY || t->kind == CEL_T_ERROR;
}

int cel_type_equal(const cel_type *a, const cel_type *b)
{
    if (a == b)
        return 1;
    if (!a || !b || a->kind != b->kind)
        return 0;
    if (a->kind == CEL_T_OPAQUE || a->kind == CEL_T_OBJECT || a->kind == CEL_T_PARAM)
        return !strcmp(a->name, b->name);
    for (int i = 0; i < a->nparams && i < b->nparams; i++)
        if (!cel_type_equal(a->params[i], b->params[i]))
            return 0;
    return a->nparams == b->nparams || a->kind == CEL_T_TYPE;
}

void cel_type_format(const cel_type *t, dra_buf *b)
{
    if (!t) {
        dra_buf_puts(b, "dyn");
        return;
    }
    switch (t->kind) {
    case CEL_T_LIST:
    case CEL_T_OPTIONAL:
    case CEL_T_TYPE:
        dra_buf_puts(b, t->kind == CEL_T_LIST ? "list" : t->kind == CEL_T_TYPE ? "type"
                                                                              : "optional_type");
        if (t->nparams) {
            dra_buf_putc(b, '(');
            cel_type_format(t->params[0], b);
            dra_buf_putc(b, ')');
        }
        return;
    case CEL_T_MAP:
        dra_buf_puts(b, "map");
        if (t->nparams == 2) {
            dra_buf_putc(b, '(');
            cel_type_format(t->params[0], b);
            dra_buf_puts(b, ", ");
            cel_type_format(t->params[1], b);
            dra_buf_putc(b, ')');
        }
        return;
    default:
        dra_buf_puts(b, t->name);
    }
}

static const char *tstr(checker *ck, const cel_type *t)
{
    dra_buf b;
    char *s;
    dra_buf_init(&b, NULL);
    cel_type_format(t, &b);
    s = dra_arena_strndup(ck->a, b.p ? b.p : "", b.len);
    dra_buf_fini(&b);
    return s ? s : "?";
}

static const cel_type *substitute(checker *ck, const cel_type *t, const bindings *bd)
{
    if (!t)
        return &cel_t_dyn;
    if (t->kind == CEL_T_PARAM) {
        for (int i = 0; i < bd->n; i++)
            if (bd->names[i] == t->name[0])
                return bd->types[i];
        return &cel_t_dyn;
    }
    if (t->nparams && (t->kind == CEL_T_LIST || t->kind == CEL_T_MAP ||
                       t->kind == CEL_T_OPTIONAL || t->kind == CEL_T_TYPE)) {
        cel_type *n = dra_arena_alloc(ck->a, sizeof *n);
        if (!n)
            return &cel_t_dyn;
        *n = *t;
        for (int i = 0; i < t->nparams; i++)
            n->params[i] = substitute(ck, t->params[i], bd);
        return n;
    }
    return t;
}

/* Can a value of type |actual| be passed where |formal| is expected?
 * Binds type parameters in |bd|. */
static int assignable(const cel_type *formal, const cel_type *actual, bindings *bd)
{
    if (formal && formal->kind == CEL_T_PARAM) {
        for (int i = 0; i < bd->n; i++) {
            if (bd->names[i] != formal->name[0])
                continue;
            if (is_dyn(bd->types[i]) && !is_dyn(actual)) {
                bd->types[i] = actual;
                return 1;
            }
            return assignable(bd->types[i], actual, bd);
        }
        if (bd->n < MAX_BIND) {
            bd->names[bd->n] = formal->name[0];
            bd->types[bd->n++] = actual ? actual : &cel_t_dyn;
        }
        return 1;
    }
    if (is_dyn(formal) || is_dyn(actual))
        return 1;
    if (actual->kind == CEL_T_PARAM)
        return 1;
    if (formal->kind != actual->kind)
        return 0;
    switch (formal->kind) {
    case CEL_T_OPAQUE:
    case CEL_T_OBJECT:
        return !strcmp(formal->name, actual->name);
    case CEL_T_TYPE:
        return 1; /* type values compare at run time */
    case CEL_T_LIST:
    case CEL_T_OPTIONAL:
        if (!formal->nparams || !actual->nparams)
            return 1;
        return assignable(formal->params[0], actual->params[0], bd);
    case CEL_T_MAP:
        if (formal->nparams < 2 || actual->nparams < 2)
            return 1;
        return assignable(formal->params[0], actual->params[0], bd) &&
               assignable(formal->params[1], actual->params[1], bd);
    default:
        return 1;
    }
}

/* The common type of two branches / literal elements. */
static const cel_type *join(const cel_type *a, const cel_type *b)
{
    bindings bd = {{0}, {0}, 0};
    if (!a)
        return b;
    if (a->kind == CEL_T_ERROR || b->kind == CEL_T_ERROR)
        return &cel_t_error;
    if (cel_type_equal(a, b))
        return a;
    if (a->kind == CEL_T_NULL && b->kind != CEL_T_NULL)
        return b->kind == CEL_T_OPAQUE || b->kind == CEL_T_OBJECT ? b : &cel_t_dyn;
    if (is_dyn(a) || is_dyn(b))
        return &cel_t_dyn;
    if (assignable(a, b, &bd) && assignable(b, a, &bd))
        return a;
    return &cel_t_dyn;
}

/* ---- names ------------------------------------------------------------------ */

static int local_lookup(checker *ck, const char *name, size_t len)
{
    for (int i = ck->nscope - 1; i >= 0; i--)
        if (strlen(ck->scope[i].name) == len && !memcmp(ck->scope[i].name, name, len))
            return i;
    return -1;
}

static int add_prog_var(checker *ck, const char *name, size_t len)
{
    for (size_t i = 0; i < ck->nvars; i++)
        if (strlen(ck->vars[i]) == len && !memcmp(ck->vars[i], name, len))
            return (int)i;
    if (dra_grow(ck->env->mem, (void **)&ck->vars, &ck->capvars, ck->nvars + 1, sizeof *ck->vars)) {
        ck->oom = 1;
        return -1;
    }
    ck->vars[ck->nvars] = dra_arena_strndup(ck->a, name, len);
    if (!ck->vars[ck->nvars]) {
        ck->oom = 1;
        return -1;
    }
    return (int)ck->nvars++;
}

/* Resolves |name| against the container (longest prefix first). Returns
 * the env var index or -1; *full gets the matched name. */
static int resolve_var(checker *ck, const char *name, size_t len, char *full, size_t fsz)
{
    const char *c = ck->env->container;
    if (len && name[0] == '.') {
        snprintf(full, fsz, "%.*s", (int)len - 1, name + 1);
        return cel_env_var(ck->env, full, strlen(full));
    }
    if (c && *c) {
        size_t cl = strlen(c);
        for (;;) {
            int i;
            snprintf(full, fsz, "%.*s.%.*s", (int)cl, c, (int)len, name);
            i = cel_env_var(ck->env, full, strlen(full));
            if (i >= 0)
                return i;
            while (cl > 0 && c[cl - 1] != '.')
                cl--;
            if (cl == 0)
                break;
            cl--;
        }
    }
    snprintf(full, fsz, "%.*s", (int)len, name);
    return cel_env_var(ck->env, full, strlen(full));
}

static const cel_type *type_ident(checker *ck, const char *name, size_t len)
{
    static const cel_type *const simple[] = {
        &cel_t_int, &cel_t_uint, &cel_t_double, &cel_t_bool, &cel_t_string, &cel_t_bytes,
        &cel_t_list, &cel_t_map, &cel_t_null, &cel_t_type, &cel_t_duration,
        &cel_t_timestamp, &cel_t_optional};
    if (len && name[0] == '.') {
        name++;
        len--;
    }
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (strlen(simple[i]->name) == len && !memcmp(simple[i]->name, name, len))
            return simple[i];
    if (len == 3 && !memcmp(name, "dyn", 3))
        return NULL; /* dyn has no type denotation */
    return cel_env_find_type(ck->env, name, len);
}

/* Resolves an identifier node in place. */
static const cel_type *check_ident(checker *ck, cel_ast *e)
{
    char full[512];
    int i = local_lookup(ck, e->name, e->namelen);
    const cel_type *t;
    if (i >= 0) {
        e->ref_kind = REF_LOCAL;
        e->ref = ck->scope[i].slot;
        return ck->scope[i].type;
    }
    i = resolve_var(ck, e->name, e->namelen, full, sizeof full);
    if (i >= 0) {
        e->ref_kind = REF_VAR;
        e->ref = add_prog_var(ck, ck->env->vars[i].name, strlen(ck->env->vars[i].name));
        return ck->lenient ? &cel_t_dyn : ck->env->vars[i].type;
    }
    t = type_ident(ck, e->name, e->namelen);
    if (t) {
        e->ref_kind = REF_CONST;
        e->cval = cel_type_value(t);
        return cel_type_wrap(ck->a, CEL_T_TYPE, "type", t);
    }
    if (ck->lenient) {
        e->ref_kind = REF_VAR;
        e->ref = add_prog_var(ck, e->name[0] == '.' ? e->name + 1 : e->name,
                              e->name[0] == '.' ? e->namelen - 1 : e->namelen);
        return &cel_t_dyn;
    }
    return cerr(ck, e->off, "undeclared reference to '%.*s' (in container '%s')",
                (int)e->namelen, e->name, ck->env->container ? ck->env->container : "");
}

/* Builds the dotted name of an ident/select chain; 0 when not a chain or
 * when its root is a local. */
static int chain_name(checker *ck, const cel_ast *e, dra_buf *b)
{
    if (e->kind == AST_IDENT) {
        if (local_lookup(ck, e->name, e->namelen) >= 0)
            return 0;
        return dra_buf_append(b, e->name, e->namelen) == DRA_OK;
    }
    if (e->kind == AST_SELECT && !e->test_only && !e->optional)
        return chain_name(ck, e->target, b) && dra_buf_putc(b, '.') == DRA_OK &&
               dra_buf_append(b, e->name, e->namelen) == DRA_OK;
    return 0;
}

/* ---- select and index -------------------------------------------------------- */

static const cel_type *field_type(checker *ck, cel_ast *e, const cel_type *t)
{
    if (is_dyn(t))
        return &cel_t_dyn;
    if (t->kind == CEL_T_OPTIONAL) {
        /* Selection on an optional value is optional chaining. */
        const cel_type *f = field_type(ck, e, t->nparams ? t->params[0] : &cel_t_dyn);
        if (f->kind == CEL_T_ERROR)
            return f;
        return e->test_only ? &cel_t_bool : cel_type_wrap(ck->a, CEL_T_OPTIONAL, "optional_type", f);
    }
    if (t->kind == CEL_T_MAP)
        return t->nparams == 2 ? t->params[1] : &cel_t_dyn;
    if (t->kind == CEL_T_OBJECT && t->obj) {
        for (size_t i = 0; i < t->obj->nfields; i++)
            if (strlen(t->obj->field_names[i]) == e->namelen &&
                !memcmp(t->obj->field_names[i], e->name, e->namelen))
                return cel_env_parse_type(ck->env, t->obj->field_types[i]);
        return cerr(ck, e->off, "undefined field '%.*s'", (int)e->namelen, e->name);
    }
    return cerr(ck, e->off, "type '%s' does not support field selection", tstr(ck, t));
}

static const cel_type *check_select(checker *ck, cel_ast *e)
{
    const cel_type *t;
    if (!e->test_only) {
        dra_buf b;
        char full[512];
        int i = -1;
        const cel_type *tt = NULL;
        dra_buf_init(&b, NULL);
        if (chain_name(ck, e, &b) && !b.oom) {
            i = resolve_var(ck, b.p, b.len, full, sizeof full);
            if (i < 0)
                tt = type_ident(ck, b.p, b.len);
        }
        dra_buf_fini(&b);
        if (tt) {
            /* A qualified type name such as google.protobuf.Timestamp. */
            e->kind = AST_IDENT;
            e->ref_kind = REF_CONST;
            e->cval = cel_type_value(tt);
            return cel_type_wrap(ck->a, CEL_T_TYPE, "type", tt);
        }
        if (i >= 0) {
            e->kind = AST_IDENT;
            e->name = ck->env->vars[i].name;
            e->namelen = strlen(e->name);
            return check_ident(ck, e);
        }
    }
    t = check(ck, e->target);
    if (t->kind == CEL_T_ERROR)
        return t;
    t = field_type(ck, e, t);
    if (e->test_only)
        return t->kind == CEL_T_ERROR ? t : &cel_t_bool;
    return t;
}

static const cel_type *index_type(checker *ck, cel_ast *e, const cel_type *c,
                                  const cel_type *k)
{
    if (is_dyn(c))
        return &cel_t_dyn;
    if (c->kind == CEL_T_OPTIONAL) {
        const cel_type *r = index_type(ck, e, c->nparams ? c->params[0] : &cel_t_dyn, k);
        return r->kind == CEL_T_ERROR ? r : cel_type_wrap(ck->a, CEL_T_OPTIONAL, "optional_type", r);
    }
    if (c->kind == CEL_T_LIST) {
        if (!is_dyn(k) && k->kind != CEL_T_INT && k->kind != CEL_T_UINT &&
            k->kind != CEL_T_DOUBLE)
            goto bad;
        return c->nparams ? c->params[0] : &cel_t_dyn;
    }
    if (c->kind == CEL_T_MAP) {
        bindings bd = {{0}, {0}, 0};
        if (c->nparams == 2 && !assignable(c->params[0], k, &bd) &&
            !((k->kind == CEL_T_INT || k->kind == CEL_T_UINT || k->kind == CEL_T_DOUBLE) &&
              (c->params[0]->kind == CEL_T_INT || c->params[0]->kind == CEL_T_UINT ||
               c->params[0]->kind == CEL_T_DOUBLE)))
            goto bad;
        return c->nparams == 2 ? c->params[1] : &cel_t_dyn;
    }
bad:
    return cerr(ck, e->off, "found no matching overload for '_[_]' applied to '(%s, %s)'",
                tstr(ck, c), tstr(ck, k));
}

/* ---- calls -------------------------------------------------------------------- */

static int is_bool(const cel_type *t)
{
    return is_dyn(t) || t->kind == CEL_T_BOOL;
}

static const cel_type *no_overload(checker *ck, cel_ast *e, const cel_type **ts, size_t n)
{
    dra_buf b;
    const cel_type *r;
    dra_buf_init(&b, NULL);
    for (size_t i = 0; i < n; i++) {
        if (i)
            dra_buf_puts(&b, ", ");
        cel_type_format(ts[i], &b);
    }
    r = cerr(ck, e->off, "found no matching overload for '%.*s' applied to '%s(%s)'",
             (int)e->namelen, e->name, e->target ? tstr(ck, ts[0]) : "",
             b.p ? (e->target ? (strchr(b.p, ',') ? strchr(b.p, ',') + 2 : "") : b.p) : "");
    dra_buf_fini(&b);
    return r;
}

/* Finds candidates among the env's overloads of e->name. */
static const cel_type *resolve_overloads(checker *ck, cel_ast *e, const cel_type **ts,
                                         size_t n)
{
    const cel_fn_entry *fe = cel_env_fn(ck->env, e->name, e->namelen);
    const cel_type *result = NULL;
    int member = e->target != NULL;
    size_t nc = 0;
    if (!fe && ck->lenient)
        return &cel_t_dyn; /* unbound function: a runtime error */
    if (!fe)
        return cerr(ck, e->off, "undeclared reference to '%.*s' (in container '%s')",
                    (int)e->namelen, e->name, ck->env->container ? ck->env->container : "");
    e->cands = dra_arena_array(ck->a, fe->n ? fe->n : 1, sizeof *e->cands);
    if (!e->cands) {
        ck->oom = 1;
        return &cel_t_error;
    }
    for (size_t i = 0; i < fe->n; i++) {
        const cel_overload *ov = fe->ovs[i];
        const cel_type **sig = fe->sig[i];
        bindings bd = {{0}, {0}, 0};
        size_t na = 0, k;
        while (na < CEL_MAX_ARGS && ov->args[na])
            na++;
        if (na != n || (((ov->flags & CEL_OV_MEMBER) != 0) != member))
            continue;
        for (k = 0; k < n; k++)
            if (!ck->lenient && !assignable(sig[k + 1], ts[k], &bd))
                break;
        if (k < n)
            continue;
        e->cands[nc++] = ov;
        const cel_type *rt = ck->lenient ? &cel_t_dyn : substitute(ck, sig[0], &bd);
        result = result ? join(result, rt) : rt;
    }
    e->ncands = nc;
    if (!nc) {
        if (ck->lenient)
            return &cel_t_dyn;
        return no_overload(ck, e, ts, n);
    }
    return result;
}

/* A member call on a qualified name may be a namespaced global function:
 * optional.of(x), sets.contains(a, b), math.greatest(...). */
static void qualify_call(checker *ck, cel_ast *e)
{
    dra_buf b;
    if (!e->target)
        return;
    dra_buf_init(&b, NULL);
    if (chain_name(ck, e->target, &b) && !b.oom && dra_buf_putc(&b, '.') == DRA_OK &&
        dra_buf_append(&b, e->name, e->namelen) == DRA_OK) {
        const char *nm = b.p[0] == '.' ? b.p + 1 : b.p;
        char full[512];
        if (cel_env_fn(ck->env, nm, strlen(nm)) &&
            resolve_var(ck, b.p, b.len - e->namelen - 1, full, sizeof full) < 0) {
            const char *q = dra_arena_strdup(ck->a, nm);
            if (q) {
                e->name = q;
                e->namelen = strlen(nm);
                e->target = NULL;
            } else {
                ck->oom = 1;
            }
        }
    }
    dra_buf_fini(&b);
}

static int is_op(const cel_ast *e, const char *op)
{
    return e->namelen == strlen(op) && !memcmp(e->name, op, e->namelen);
}

static const cel_type *check_special(checker *ck, cel_ast *e, const cel_type **ts, int *done)
{
    *done = 1;
    if (is_op(e, "_&&_") || is_op(e, "_||_")) {
        if (!ck->lenient && (!is_bool(ts[0]) || !is_bool(ts[1])))
            return no_overload(ck, e, ts, 2);
        return &cel_t_bool;
    }
    if (is_op(e, "_?_:_")) {
        if (!ck->lenient && !is_bool(ts[0]))
            return no_overload(ck, e, ts, 3);
        return ck->lenient ? &cel_t_dyn : join(ts[1], ts[2]);
    }
    if (is_op(e, "@not_strictly_false"))
        return &cel_t_bool;
    if (is_op(e, "_==_") || is_op(e, "_!=_")) {
        bindings bd = {{0}, {0}, 0};
        if (!ck->lenient && !assignable(ts[0], ts[1], &bd) && !assignable(ts[1], ts[0], &bd))
            return no_overload(ck, e, ts, 2);
        return &cel_t_bool;
    }
    if (is_op(e, "_[_]"))
        return ck->lenient ? &cel_t_dyn : index_type(ck, e, ts[0], ts[1]);
    if (is_op(e, "_[?_]") || is_op(e, "_?._")) {
        const cel_type *c = ts[0], *r;
        if (c->kind == CEL_T_OPTIONAL)
            c = c->nparams ? c->params[0] : &cel_t_dyn;
        if (ck->lenient)
            return cel_type_wrap(ck->a, CEL_T_OPTIONAL, "optional_type", &cel_t_dyn);
        if (is_op(e, "_?._")) {
            cel_ast fake = *e;
            fake.name = e->args[1]->cval.u.s;
            fake.namelen = e->args[1]->cval.n;
            r = field_type(ck, &fake, c);
        } else {
            r = index_type(ck, e, c, ts[1]);
        }
        if (r->kind == CEL_T_ERROR)
            return r;
        return cel_type_wrap(ck->a, CEL_T_OPTIONAL, "optional_type", r);
    }
    if (is_op(e, "@in")) {
        const cel_type *c = ts[1];
        bindings bd = {{0}, {0}, 0};
        if (ck->lenient || is_dyn(c))
            return &cel_t_bool;
        if ((c->kind == CEL_T_LIST || c->kind == CEL_T_MAP) &&
            (!c->nparams || assignable(c->params[0], ts[0], &bd) ||
             assignable(ts[0], c->params[0], &bd)))
            return &cel_t_bool;
        return no_overload(ck, e, ts, 2);
    }
    if (is_op(e, "cel.@mapInsert"))
        return &cel_t_dyn;
    *done = 0;
    return NULL;
}

static const cel_type *check_call(checker *ck, cel_ast *e)
{
    const cel_type *ts[CEL_MAX_ARGS + 1];
    size_t n = 0;
    int done;
    const cel_type *r;
    qualify_call(ck, e);
    if (e->nargs + (e->target ? 1 : 0) > CEL_MAX_ARGS + 1 ||
        (e->nargs > CEL_MAX_ARGS && !e->target)) {
        for (size_t i = 0; i < e->nargs; i++)
            check(ck, e->args[i]);
        return cerr(ck, e->off, "too many arguments to '%.*s'", (int)e->namelen, e->name);
    }
    if (e->target)
        ts[n++] = check(ck, e->target);
    for (size_t i = 0; i < e->nargs; i++) {
        /* cel-go exempts literals passed to format() from the
         * homogeneous-literal rule. */
        ck->exempt = e->namelen == 6 && !memcmp(e->name, "format", 6);
        ts[n++] = check(ck, e->args[i]);
    }
    for (size_t i = 0; i < n; i++)
        if (ts[i]->kind == CEL_T_ERROR)
            return ts[i];
    r = check_special(ck, e, ts, &done);
    if (done)
        return r;
    return resolve_overloads(ck, e, ts, n);
}

/* ---- aggregates and comprehensions -------------------------------------------- */

static const cel_type *check_list(checker *ck, cel_ast *e)
{
    const cel_type *elem = NULL;
    int ex = ck->exempt;
    for (size_t i = 0; i < e->nargs; i++) {
        const cel_type *t = check(ck, e->args[i]);
        if (e->opt && e->opt[i] && t->kind == CEL_T_OPTIONAL)
            t = t->nparams ? t->params[0] : &cel_t_dyn;
        if (elem && ck->env->opts.homogeneous_literals && !ck->lenient && !ex && !is_dyn(t) &&
            !is_dyn(elem) && !cel_type_equal(elem, t))
            cerr(ck, e->args[i]->off, "expected type '%s' but found '%s'", tstr(ck, elem),
                 tstr(ck, t));
        elem = join(elem, t);
    }
    return cel_type_list_of(ck->a, elem ? elem : &cel_t_dyn);
}

static const cel_type *check_map(checker *ck, cel_ast *e)
{
    const cel_type *kt = NULL, *vt = NULL;
    int ex = ck->exempt;
    for (size_t i = 0; i + 1 < e->nargs; i += 2) {
        const cel_type *k = check(ck, e->args[i]), *v = check(ck, e->args[i + 1]);
        if (e->opt && e->opt[i / 2] && v->kind == CEL_T_OPTIONAL)
            v = v->nparams ? v->params[0] : &cel_t_dyn;
        if (!is_dyn(k) && k->kind != CEL_T_INT && k->kind != CEL_T_UINT &&
            k->kind != CEL_T_BOOL && k->kind != CEL_T_STRING && !ck->lenient)
            cerr(ck, e->args[i]->off, "unsupported map key type: %s", tstr(ck, k));
        if (kt && ck->env->opts.homogeneous_literals && !ck->lenient && !ex &&
            ((!is_dyn(k) && !is_dyn(kt) && !cel_type_equal(kt, k)) ||
             (!is_dyn(v) && !is_dyn(vt) && !cel_type_equal(vt, v))))
            cerr(ck, e->args[i]->off, "expected type '%s' but found '%s'",
                 tstr(ck, cel_type_equal(kt, k) ? vt : kt),
                 tstr(ck, cel_type_equal(kt, k) ? v : k));
        kt = join(kt, k);
        vt = join(vt, v);
    }
    return cel_type_map_of(ck->a, kt ? kt : &cel_t_dyn, vt ? vt : &cel_t_dyn);
}

static int push_local(checker *ck, const char *name, const cel_type *t, int slot)
{
    if (ck->nscope >= MAX_SCOPE) {
        cerr(ck, 0, "too many nested variables");
        return 0;
    }
    ck->scope[ck->nscope].name = name;
    ck->scope[ck->nscope].slot = slot;
    ck->scope[ck->nscope].type = t;
    ck->nscope++;
    return 1;
}

static const cel_type *check_comp(checker *ck, cel_ast *e)
{
    const cel_type *rt = check(ck, e->range), *it = &cel_t_dyn, *it2 = &cel_t_dyn, *at, *res;
    int base = ck->nlocals, nscope0 = ck->nscope;
    if (rt->kind == CEL_T_ERROR)
        return rt;
    if (rt->kind == CEL_T_LIST) {
        const cel_type *el = rt->nparams ? rt->params[0] : &cel_t_dyn;
        it = e->iter_var2 ? &cel_t_int : el;
        it2 = el;
    } else if (rt->kind == CEL_T_MAP) {
        it = rt->nparams ? rt->params[0] : &cel_t_dyn;
        it2 = rt->nparams ? rt->params[1] : &cel_t_dyn;
    } else if (!is_dyn(rt) && !ck->lenient) {
        return cerr(ck, e->range->off,
                    "expression of type '%s' cannot be range of a comprehension (must be "
                    "list, map, or dynamic)",
                    tstr(ck, rt));
    }
    at = check(ck, e->accu_init);
    /* Slots: range, index, var, var2, accumulator. */
    e->iter_slot = base;
    e->accu_slot = base + 4;
    ck->nlocals += 5;
    if (ck->nlocals > ck->maxlocals)
        ck->maxlocals = ck->nlocals;
    push_local(ck, e->accu_var, at, e->accu_slot);
    push_local(ck, e->iter_var, it, base + 2);
    if (e->iter_var2)
        push_local(ck, e->iter_var2, it2, base + 3);
    check(ck, e->cond);
    at = join(at, check(ck, e->step));
    ck->scope[nscope0].type = at;
    ck->nscope = nscope0 + 1; /* iteration variables leave scope */
    res = check(ck, e->result);
    ck->nscope = nscope0;
    ck->nlocals = base;
    return res;
}

static const cel_type *check(checker *ck, cel_ast *e)
{
    const cel_type *t;
    int ex = ck->exempt;
    if (ck->oom)
        return &cel_t_error;
    if (e->kind != AST_LIST && e->kind != AST_MAP)
        ck->exempt = 0;
    switch (e->kind) {
    case AST_CONST: t = cel_value_type(e->cval); break;
    case AST_IDENT: t = check_ident(ck, e); break;
    case AST_SELECT: t = check_select(ck, e); break;
    case AST_CALL: t = check_call(ck, e); break;
    case AST_LIST: t = check_list(ck, e); break;
    case AST_MAP: t = check_map(ck, e); break;
    case AST_COMPREHENSION: t = check_comp(ck, e); break;
    default:
        /* Message literals need protobuf types, which this engine lacks. */
        t = cerr(ck, e->off, "message literals are not supported ('%.*s')", (int)e->namelen,
                 e->name);
        ck->unsupported = 1;
        break;
    }
    ck->exempt = ex;
    if (!t)
        t = &cel_t_dyn;
    if (ck->lenient && t->kind != CEL_T_ERROR)
        t = &cel_t_dyn;
    e->type = t;
    return t;
}

dra_err cel_check(dra_cel_env *env, dra_arena *a, cel_ast *root, const char *src,
                  size_t len, const cel_check_opts *co, cel_check_out *out, dra_diag *d)
{
    checker *ck = dra_calloc(env->mem, 1, sizeof *ck);
    dra_err rc = DRA_OK;
    if (!ck)
        return DRA_ENOMEM;
    ck->env = env;
    ck->a = a;
    ck->src = src;
    ck->len = len;
    ck->d = d;
    ck->lenient = co && co->disable_check;
    out->type = check(ck, root);
    out->nlocals = ck->maxlocals;
    out->nvars = ck->nvars;
    out->vars = NULL;
    if (ck->nvars) {
        out->vars = dra_arena_array(a, ck->nvars, sizeof *out->vars);
        if (out->vars)
            memcpy(out->vars, ck->vars, ck->nvars * sizeof *out->vars);
        else
            ck->oom = 1;
    }
    if (ck->oom)
        rc = DRA_ENOMEM;
    else if (ck->unsupported)
        rc = DRA_EUNSUPPORTED;
    else if (ck->nerr)
        rc = DRA_ETYPE;
    dra_free(env->mem, ck->vars);
    dra_free(env->mem, ck);
    return rc;
}
