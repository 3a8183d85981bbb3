/*
 * conform.c: values from outside the engine. Plain JSON bindings for
 * dra_cel_eval_json, and the cel-spec conformance case runner: a
 * SimpleTest in protobuf-JSON form (cel.expr.Value: int64Value as a
 * string, bytesValue in base64, mapValue entries, typeValue names) is
 * turned into declarations, bindings and an expected value, run, and
 * compared with strict (type-exact) equality, NaN matching NaN.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "vm.h"

/* ---- plain JSON -> values ----------------------------------------------------- */

static int json_to_value(dra_arena *a, const dra_doc *d, cel_value *out)
{
    cel_value *items;
    cel_map_entry *e;
    cel_list *l;
    cel_map *m;
    switch (d->kind) {
    case DRA_DOC_NULL: *out = cel_null(); return 1;
    case DRA_DOC_BOOL: *out = cel_bool(d->u.b); return 1;
    case DRA_DOC_INT: *out = cel_int(d->u.i); return 1;
    case DRA_DOC_FLOAT: *out = cel_double(d->u.f.f); return 1;
    case DRA_DOC_STRING: *out = cel_str(d->u.str.s, d->u.str.len); return 1;
    case DRA_DOC_LIST:
        l = dra_arena_zalloc(a, sizeof *l);
        items = dra_arena_array(a, d->u.list.n ? d->u.list.n : 1, sizeof *items);
        if (!l || !items)
            return 0;
        for (size_t i = 0; i < d->u.list.n; i++)
            if (!json_to_value(a, d->u.list.items[i], &items[i]))
                return 0;
        l->n = d->u.list.n;
        l->v = items;
        *out = cel_list_value(l);
        return 1;
    case DRA_DOC_MAP:
        m = dra_arena_zalloc(a, sizeof *m);
        e = dra_arena_array(a, d->u.map.n ? d->u.map.n : 1, sizeof *e);
        if (!m || !e)
            return 0;
        for (size_t i = 0; i < d->u.map.n; i++) {
            cel_value v;
            if (!json_to_value(a, d->u.map.m[i].val, &v))
                return 0;
            cel_map_entry_set(&e[i], cel_str(d->u.map.m[i].key, d->u.map.m[i].keylen), v);
        }
        m->n = d->u.map.n;
        m->e = e;
        *out = cel_map_value(m);
        return 1;
    }
    return 0;
}

/* Binds every program variable from |bindings| (name -> value). Missing
 * ones become an error value, reported only if the program reads them. */
static dra_err bind_vars(dra_arena *a, const dra_cel_program *p, const dra_doc *bindings,
                         cel_value **vars, int pbjson);
static int pb_to_value(dra_arena *a, const dra_doc *d, cel_value *out);

dra_err dra_cel_eval_json(const dra_cel_program *p, dra_cel_vm *vm, const dra_doc *bindings,
                          dra_buf *out, dra_diag *d)
{
    dra_arena a;
    cel_value *vars = NULL, r;
    dra_err rc;
    dra_arena_init(&a, p->mem);
    rc = bind_vars(&a, p, bindings, &vars, 0);
    if (!rc) {
        r = cel_vm_run(&vm->c, p, vars, &rc);
        if (rc == DRA_ECOST) {
            dra_buf_puts(out, "actual cost limit exceeded");
            dra_diag_add(d, "", 0, 0, "actual cost limit exceeded");
        } else if (!rc && r.kind == CEL_K_ERROR) {
            dra_buf_puts(out, r.u.err->msg);
            dra_diag_add(d, "", 0, 0, "%s", r.u.err->msg);
            rc = DRA_EEVAL;
        } else if (!rc) {
            rc = cel_value_format(r, out);
        }
    }
    dra_arena_fini(&a);
    return rc;
}

static const cel_error e_unbound = {"no such attribute"};

static dra_err bind_vars(dra_arena *a, const dra_cel_program *p, const dra_doc *bindings,
                         cel_value **vars, int pbjson)
{
    cel_value *v = dra_arena_array(a, p->nvars ? p->nvars : 1, sizeof *v);
    if (!v)
        return DRA_ENOMEM;
    for (size_t i = 0; i < p->nvars; i++) {
        const dra_doc *b = bindings ? dra_doc_get(bindings, p->vars[i]) : NULL;
        v[i] = cel_error_value(&e_unbound);
        if (!b)
            continue;
        if (pbjson) {
            const dra_doc *val = dra_doc_get(b, "value");
            if (val && !pb_to_value(a, val, &v[i]))
                return DRA_EINVAL;
        } else if (!json_to_value(a, b, &v[i])) {
            return DRA_ENOMEM;
        }
    }
    *vars = v;
    return DRA_OK;
}

/* ---- protobuf JSON (cel.expr.Value) -> values -------------------------------- */

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

static int b64_decode(dra_arena *a, const char *s, size_t n, cel_value *out)
{
    char *o = dra_arena_alloc(a, n + 1);
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    if (!o)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64val((unsigned char)s[i]);
        if (s[i] == '=')
            break;
        if (v < 0)
            return 0;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[k++] = (char)((acc >> bits) & 0xFF);
        }
    }
    *out = cel_bytes(o, k);
    return 1;
}

static const dra_doc *member(const dra_doc *d, const char *k)
{
    return dra_doc_get(d, k);
}

static int doc_i64(const dra_doc *d, int64_t *i)
{
    if (d->kind == DRA_DOC_INT) {
        *i = d->u.i;
        return 1;
    }
    if (d->kind == DRA_DOC_STRING) {
        char *end;
        *i = strtoll(d->u.str.s, &end, 10);
        return *end == 0;
    }
    return 0;
}

static int doc_u64(const dra_doc *d, uint64_t *u)
{
    if (d->kind == DRA_DOC_INT) {
        *u = (uint64_t)d->u.i;
        return 1;
    }
    if (d->kind == DRA_DOC_FLOAT && d->u.f.num) {
        *u = strtoull(d->u.f.num, NULL, 10);
        return 1;
    }
    if (d->kind == DRA_DOC_STRING) {
        char *end;
        *u = strtoull(d->u.str.s, &end, 10);
        return *end == 0;
    }
    return 0;
}

static int doc_double(const dra_doc *d, double *x)
{
    switch (d->kind) {
    case DRA_DOC_INT: *x = (double)d->u.i; return 1;
    case DRA_DOC_FLOAT: *x = d->u.f.f; return 1;
    case DRA_DOC_STRING:
        if (!strcmp(d->u.str.s, "NaN")) *x = NAN;
        else if (!strcmp(d->u.str.s, "Infinity")) *x = INFINITY;
        else if (!strcmp(d->u.str.s, "-Infinity")) *x = -INFINITY;
        else *x = strtod(d->u.str.s, NULL);
        return 1;
    default: return 0;
    }
}

static const cel_type *type_by_name(dra_arena *a, const char *name)
{
    static const cel_type *const simple[] = {
        &cel_t_int, &cel_t_uint, &cel_t_double, &cel_t_bool, &cel_t_string, &cel_t_bytes,
        &cel_t_list, &cel_t_map, &cel_t_null, &cel_t_type, &cel_t_duration, &cel_t_timestamp,
        &cel_t_optional, &cel_t_dyn};
    cel_type *t;
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (!strcmp(simple[i]->name, name))
            return simple[i];
    t = dra_arena_zalloc(a, sizeof *t);
    if (!t)
        return NULL;
    t->kind = CEL_T_OPAQUE;
    t->name = dra_arena_strdup(a, name);
    return t;
}

static int pb_to_value(dra_arena *a, const dra_doc *d, cel_value *out)
{
    const dra_doc *x;
    if (d->kind != DRA_DOC_MAP)
        return 0;
    if ((x = member(d, "int64Value"))) {
        int64_t i;
        if (!doc_i64(x, &i)) return 0;
        *out = cel_int(i);
        return 1;
    }
    if ((x = member(d, "uint64Value"))) {
        uint64_t u;
        if (!doc_u64(x, &u)) return 0;
        *out = cel_uint(u);
        return 1;
    }
    if ((x = member(d, "doubleValue"))) {
        double v;
        if (!doc_double(x, &v)) return 0;
        *out = cel_double(v);
        return 1;
    }
    if ((x = member(d, "stringValue")) && x->kind == DRA_DOC_STRING) {
        *out = cel_str(x->u.str.s, x->u.str.len);
        return 1;
    }
    if ((x = member(d, "bytesValue")) && x->kind == DRA_DOC_STRING)
        return b64_decode(a, x->u.str.s, x->u.str.len, out);
    if ((x = member(d, "boolValue"))) {
        *out = cel_bool(x->kind == DRA_DOC_BOOL && x->u.b);
        return 1;
    }
    if (member(d, "nullValue") || d->u.map.n == 0) {
        *out = cel_null();
        return d->u.map.n != 0 || 1;
    }
    if ((x = member(d, "typeValue")) && x->kind == DRA_DOC_STRING) {
        const cel_type *t = type_by_name(a, x->u.str.s);
        if (!t) return 0;
        *out = cel_type_value(t);
        return 1;
    }
    if ((x = member(d, "listValue"))) {
        const dra_doc *vals = member(x, "values");
        size_t n = vals && vals->kind == DRA_DOC_LIST ? vals->u.list.n : 0;
        cel_list *l = dra_arena_zalloc(a, sizeof *l);
        cel_value *items = dra_arena_array(a, n ? n : 1, sizeof *items);
        if (!l || !items) return 0;
        for (size_t i = 0; i < n; i++)
            if (!pb_to_value(a, vals->u.list.items[i], &items[i])) return 0;
        l->n = n;
        l->v = items;
        *out = cel_list_value(l);
        return 1;
    }
    if ((x = member(d, "mapValue"))) {
        const dra_doc *ents = member(x, "entries");
        size_t n = ents && ents->kind == DRA_DOC_LIST ? ents->u.list.n : 0;
        cel_map *m = dra_arena_zalloc(a, sizeof *m);
        cel_map_entry *e = dra_arena_array(a, n ? n : 1, sizeof *e);
        if (!m || !e) return 0;
        for (size_t i = 0; i < n; i++) {
            const dra_doc *kd = member(ents->u.list.items[i], "key");
            const dra_doc *vd = member(ents->u.list.items[i], "value");
            cel_value k, v;
            if (!kd || !vd || !pb_to_value(a, kd, &k) || !pb_to_value(a, vd, &v)) return 0;
            cel_map_entry_set(&e[i], k, v);
        }
        m->n = n;
        m->e = e;
        *out = cel_map_value(m);
        return 1;
    }
    return 0; /* objectValue, enumValue: protobuf messages */
}

/* ---- type declarations ----------------------------------------------------------- */

static int pb_type(const dra_doc *t, dra_buf *b)
{
    const dra_doc *x;
    if (!t || t->kind != DRA_DOC_MAP)
        return 0;
    if ((x = member(t, "primitive")) && x->kind == DRA_DOC_STRING) {
        static const char *const m[][2] = {{"BOOL", "bool"}, {"INT64", "int"},
                                           {"UINT64", "uint"}, {"DOUBLE", "double"},
                                           {"STRING", "string"}, {"BYTES", "bytes"}};
        for (size_t i = 0; i < 6; i++)
            if (!strcmp(x->u.str.s, m[i][0]))
                return dra_buf_puts(b, m[i][1]) == DRA_OK;
        return 0;
    }
    if ((x = member(t, "wellKnown")) && x->kind == DRA_DOC_STRING) {
        if (!strcmp(x->u.str.s, "TIMESTAMP")) return !dra_buf_puts(b, "google.protobuf.Timestamp");
        if (!strcmp(x->u.str.s, "DURATION")) return !dra_buf_puts(b, "google.protobuf.Duration");
        if (!strcmp(x->u.str.s, "ANY")) return !dra_buf_puts(b, "google.protobuf.Any");
        return 0;
    }
    if ((x = member(t, "listType"))) {
        dra_buf_puts(b, "list(");
        if (!pb_type(member(x, "elemType"), b)) return 0;
        return !dra_buf_putc(b, ')');
    }
    if ((x = member(t, "mapType"))) {
        dra_buf_puts(b, "map(");
        if (!pb_type(member(x, "keyType"), b)) return 0;
        dra_buf_puts(b, ", ");
        if (!pb_type(member(x, "valueType"), b)) return 0;
        return !dra_buf_putc(b, ')');
    }
    if (member(t, "dyn") || member(t, "typeParam"))
        return !dra_buf_puts(b, "dyn");
    if (member(t, "null"))
        return !dra_buf_puts(b, "null_type");
    if ((x = member(t, "type"))) {
        dra_buf_puts(b, "type(");
        if (!pb_type(x, b)) return 0;
        return !dra_buf_putc(b, ')');
    }
    if ((x = member(t, "abstractType"))) {
        const dra_doc *nm = member(x, "name"), *ps = member(x, "parameterTypes");
        if (!nm || nm->kind != DRA_DOC_STRING || strcmp(nm->u.str.s, "optional_type") || !ps ||
            ps->kind != DRA_DOC_LIST || ps->u.list.n != 1)
            return 0;
        dra_buf_puts(b, "optional_type(");
        if (!pb_type(ps->u.list.items[0], b)) return 0;
        return !dra_buf_putc(b, ')');
    }
    return 0;
}

/* ---- comparison -------------------------------------------------------------------- */

static int strict_equal(cel_value a, cel_value b)
{
    if (a.kind != b.kind)
        return 0;
    switch (a.kind) {
    case CEL_K_DOUBLE:
        return (isnan(a.u.d) && isnan(b.u.d)) || a.u.d == b.u.d;
    case CEL_K_LIST:
        if (a.u.list->n != b.u.list->n)
            return 0;
        for (size_t i = 0; i < a.u.list->n; i++)
            if (!strict_equal(a.u.list->v[i], b.u.list->v[i]))
                return 0;
        return 1;
    case CEL_K_MAP:
        if (a.u.map->n != b.u.map->n)
            return 0;
        for (size_t i = 0; i < a.u.map->n; i++) {
            size_t j;
            for (j = 0; j < b.u.map->n; j++)
                if (strict_equal(a.u.map->e[i].k, b.u.map->e[j].k))
                    break;
            if (j == b.u.map->n || !strict_equal(a.u.map->e[i].v, b.u.map->e[j].v))
                return 0;
        }
        return 1;
    default:
        return cel_value_equal(a, b) == 1;
    }
}

/* ---- one case -------------------------------------------------------------------------- */

static int mentions(const dra_doc *d, const char *needle)
{
    switch (d->kind) {
    case DRA_DOC_STRING: return strstr(d->u.str.s, needle) != NULL;
    case DRA_DOC_LIST:
        for (size_t i = 0; i < d->u.list.n; i++)
            if (mentions(d->u.list.items[i], needle)) return 1;
        return 0;
    case DRA_DOC_MAP:
        for (size_t i = 0; i < d->u.map.n; i++)
            if (strstr(d->u.map.m[i].key, needle) || mentions(d->u.map.m[i].val, needle))
                return 1;
        return 0;
    default: return 0;
    }
}

/* Cases about protobuf messages, enums and wrappers; message literals in
 * the expression are caught by the compiler (DRA_EUNSUPPORTED). */
static int needs_proto(const dra_doc *test)
{
    const dra_doc *expr = member(test, "expr"), *te = member(test, "typeEnv");
    const dra_doc *cont = member(test, "container");
    static const char *const in_expr[] = {"TestAllTypes", "cel.expr.conformance", "Enum"};
    static const char *const in_env[] = {"messageType", "wrapper", "enum"};
    for (size_t i = 0; expr && i < sizeof in_expr / sizeof in_expr[0]; i++)
        if (mentions(expr, in_expr[i]))
            return 1;
    for (size_t i = 0; te && i < sizeof in_env / sizeof in_env[0]; i++)
        if (mentions(te, in_env[i]))
            return 1;
    if (cont && mentions(cont, "cel.expr.conformance"))
        return 1;
    if (mentions(test, "objectValue") || mentions(test, "enumValue"))
        return 1;
    return 0;
}

static int flag(const dra_doc *test, const char *k)
{
    const dra_doc *x = member(test, k);
    return x && x->kind == DRA_DOC_BOOL && x->u.b;
}

typedef struct case_ctx {
    const dra_mem *mem;
    dra_cel_env *env;
    dra_cel_program *prog;
    dra_cel_vm *vm;
    dra_arena a;
    dra_diag d;
} case_ctx;

/* Declares a test's function overloads (no implementation: calling one
 * at run time is "no such overload"). Overloads whose types cannot be
 * expressed are left out, so the case fails to check. */
static dra_err declare_function(case_ctx *cc, const char *name, const dra_doc *fn)
{
    const dra_doc *ovs = member(fn, "overloads");
    dra_arena *a = &cc->env->arena;
    for (size_t i = 0; ovs && ovs->kind == DRA_DOC_LIST && i < ovs->u.list.n; i++) {
        const dra_doc *o = ovs->u.list.items[i], *params = member(o, "params");
        const dra_doc *id = member(o, "overloadId"), *inst = member(o, "isInstanceFunction");
        cel_overload *ov = dra_arena_zalloc(a, sizeof *ov);
        size_t np = params && params->kind == DRA_DOC_LIST ? params->u.list.n : 0;
        dra_buf b;
        int ok = 1;
        if (!ov)
            return DRA_ENOMEM;
        if (np > CEL_MAX_ARGS)
            continue;
        ov->name = dra_arena_strdup(a, name);
        ov->id = dra_arena_strdup(a, id && id->kind == DRA_DOC_STRING ? id->u.str.s : name);
        ov->flags = inst && inst->kind == DRA_DOC_BOOL && inst->u.b ? CEL_OV_MEMBER : 0;
        dra_buf_init(&b, cc->mem);
        ok = pb_type(member(o, "resultType"), &b) && !b.oom;
        if (ok)
            ov->result = dra_arena_strndup(a, b.p, b.len);
        for (size_t k = 0; ok && k < np; k++) {
            dra_buf_reset(&b);
            ok = pb_type(params->u.list.items[k], &b) && !b.oom;
            if (ok)
                ov->args[k] = dra_arena_strndup(a, b.p, b.len);
        }
        dra_buf_fini(&b);
        if (!ok)
            continue;
        if (!ov->name || !ov->id || !ov->result)
            return DRA_ENOMEM;
        if (cel_env_add_overloads(cc->env, ov, 1) == DRA_ENOMEM)
            return DRA_ENOMEM;
    }
    return DRA_OK;
}

static dra_err setup_env(case_ctx *cc, const dra_doc *test, int *status, dra_buf *detail)
{
    dra_cel_options o = {0};
    const dra_doc *te = member(test, "typeEnv"), *cont = member(test, "container");
    dra_err rc;
    o.strings_version = 0; /* latest */
    rc = dra_cel_env_new_std(cc->mem, &o, &cc->env);
    if (rc)
        return rc;
    if (cont && cont->kind == DRA_DOC_STRING && dra_cel_env_set_container(cc->env, cont->u.str.s))
        return DRA_ENOMEM;
    for (size_t i = 0; te && te->kind == DRA_DOC_LIST && i < te->u.list.n; i++) {
        const dra_doc *decl = te->u.list.items[i], *nm = member(decl, "name");
        const dra_doc *id = member(decl, "ident");
        dra_buf b;
        if (nm && nm->kind == DRA_DOC_STRING && member(decl, "function")) {
            rc = declare_function(cc, nm->u.str.s, member(decl, "function"));
            if (rc)
                return rc;
            continue;
        }
        if (!id || !nm || nm->kind != DRA_DOC_STRING)
            continue;
        dra_buf_init(&b, cc->mem);
        if (!pb_type(member(id, "type"), &b) || b.oom) {
            dra_buf_fini(&b);
            *status = 2;
            if (detail)
                dra_buf_printf(detail, "unsupported declaration type for %s", nm->u.str.s);
            return DRA_OK;
        }
        rc = dra_cel_env_declare(cc->env, nm->u.str.s, b.p);
        dra_buf_fini(&b);
        if (rc == DRA_ENOMEM)
            return rc;
    }
    return DRA_OK;
}

static void describe(dra_buf *detail, const char *what, cel_value got)
{
    if (!detail)
        return;
    dra_buf_printf(detail, "%s: got ", what);
    cel_value_format(got, detail);
}

static dra_err run_case(case_ctx *cc, const dra_doc *test, int *status, dra_buf *detail)
{
    const dra_doc *expr = member(test, "expr"), *val = member(test, "value");
    const dra_doc *tr = member(test, "typedResult");
    int want_err = member(test, "evalError") || member(test, "anyEvalErrors");
    unsigned flags = 0;
    cel_value *vars, got, want;
    dra_err rc;
    if (!expr || expr->kind != DRA_DOC_STRING) {
        *status = 2;
        return DRA_OK;
    }
    if (member(test, "unknown") || member(test, "anyUnknowns")) {
        *status = 2;
        if (detail) dra_buf_puts(detail, "unknowns are not supported");
        return DRA_OK;
    }
    if (flag(test, "disableCheck")) flags |= DRA_CEL_DISABLE_CHECK;
    if (flag(test, "disableMacros")) flags |= DRA_CEL_DISABLE_MACROS;
    rc = dra_cel_compile_ex(cc->env, expr->u.str.s, expr->u.str.len, flags, &cc->prog, &cc->d);
    if (rc == DRA_ENOMEM)
        return rc;
    if (rc == DRA_EUNSUPPORTED) {
        *status = 2;
        if (detail)
            dra_buf_puts(detail, "needs protobuf message literals");
        return DRA_OK;
    }
    if (rc) {
        *status = 1;
        if (detail)
            dra_buf_printf(detail, "compile: %s", dra_diag_first(&cc->d) ? dra_diag_first(&cc->d) : dra_strerror(rc));
        return DRA_OK;
    }
    if (tr && member(tr, "deducedType") && !(flags & DRA_CEL_DISABLE_CHECK)) {
        /* The checker's type must be the one the suite deduces. */
        dra_buf want_t, got_t;
        int same;
        dra_buf_init(&want_t, cc->mem);
        dra_buf_init(&got_t, cc->mem);
        if (!pb_type(member(tr, "deducedType"), &want_t)) {
            dra_buf_fini(&want_t);
            dra_buf_fini(&got_t);
            *status = 2;
            if (detail) dra_buf_puts(detail, "deduced type not expressible");
            return DRA_OK;
        }
        cel_type_format(cc->prog->result_type, &got_t);
        same = want_t.p && got_t.p && !strcmp(want_t.p, got_t.p);
        if (!same && detail)
            dra_buf_printf(detail, "deduced type %s, want %s", got_t.p ? got_t.p : "?",
                           want_t.p ? want_t.p : "?");
        dra_buf_fini(&want_t);
        dra_buf_fini(&got_t);
        if (!same) {
            *status = 1;
            return DRA_OK;
        }
    }
    if (flag(test, "checkOnly")) {
        *status = 0;
        return DRA_OK;
    }
    if (tr)
        val = member(tr, "result");
    if (!want_err) {
        if (!val) {
            want = cel_bool(1);
        } else if (!pb_to_value(&cc->a, val, &want)) {
            *status = 2;
            if (detail) dra_buf_puts(detail, "expected value needs protobuf messages");
            return DRA_OK;
        }
    }
    rc = bind_vars(&cc->a, cc->prog, member(test, "bindings"), &vars, 1);
    if (rc == DRA_EINVAL) {
        *status = 2;
        if (detail) dra_buf_puts(detail, "binding needs protobuf messages");
        return DRA_OK;
    }
    if (rc)
        return rc;
    if ((rc = dra_cel_vm_new(cc->mem, &cc->vm)))
        return rc;
    got = cel_vm_run(&cc->vm->c, cc->prog, vars, &rc);
    if (rc == DRA_ENOMEM)
        return rc;
    if (want_err) {
        *status = got.kind == CEL_K_ERROR ? 0 : 1;
        if (*status) describe(detail, "expected an error", got);
        return DRA_OK;
    }
    *status = strict_equal(got, want) ? 0 : 1;
    if (*status && detail) {
        describe(detail, "mismatch", got);
        dra_buf_puts(detail, ", want ");
        cel_value_format(want, detail);
    }
    return DRA_OK;
}

dra_err dra_cel_conformance_case(const dra_mem *mem, const dra_doc *test, int *status,
                                 dra_buf *detail)
{
    case_ctx cc;
    dra_err rc;
    memset(&cc, 0, sizeof cc);
    cc.mem = mem;
    dra_arena_init(&cc.a, mem);
    dra_diag_init(&cc.d, mem);
    *status = 1;
    if (needs_proto(test)) {
        *status = 2;
        if (detail) dra_buf_puts(detail, "needs protobuf messages");
        rc = DRA_OK;
        goto out;
    }
    *status = 0;
    rc = setup_env(&cc, test, status, detail);
    if (!rc && *status == 0)
        rc = run_case(&cc, test, status, detail);
out:
    dra_cel_program_unref(cc.prog);
    dra_cel_vm_free(cc.vm);
    dra_cel_env_free(cc.env);
    dra_diag_fini(&cc.d);
    dra_arena_fini(&cc.a);
    return rc;
}
