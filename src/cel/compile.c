/*
 * compile.c: checked AST -> flat instruction array plus constant pool.
 * Recognises the shapes DRA selectors are made of and emits specialised
 * instructions for them: a device field read (DEV_FIELD), an index or
 * select by a constant key with its hash precomputed (INDEX_CONST,
 * SELECT), a comparison with a constant (EQ_CONST), and list building in
 * map/filter macros that appends in place (APPEND) instead of copying.
 */
#include "vm.h"

typedef struct compiler {
    dra_cel_env *env;
    dra_cel_program *p;
    cel_insn *code;
    size_t ncode, capcode;
    cel_value *consts;
    size_t nconsts, capconsts;
    cel_callsite *calls;
    size_t ncalls, capcalls;
    cel_dsk **dsk; /* string kernels (EXT.y) */
    size_t ndsk, capdsk;
    int sp, maxsp;
    int append_slot;   /* accumulator of the comprehension being built, or -1 */
    int insert_slot;
    int no_fold;
    int nlocals;       /* next free local slot (hoisted values take two) */
    int in_loop;       /* depth of comprehension conditions/steps */
    dra_cel_vm *fold_vm; /* evaluates constant subexpressions */
    int validate;        /* DRA: reject bad constant regex/duration/timestamp */
    dra_diag *d;
    const char *src;
    size_t len;
    dra_err rc;
} compiler;

static void comp(compiler *c, const cel_ast *e);

static int emit(compiler *c, cel_op op, int32_t a, int32_t b, int stack_delta)
{
    if (c->rc)
        return -1;
    if (dra_grow(c->p->mem, (void **)&c->code, &c->capcode, c->ncode + 1, sizeof *c->code)) {
        c->rc = DRA_ENOMEM;
        return -1;
    }
    cel_insn *in = &c->code[c->ncode];
    memset(in, 0, sizeof *in);
    in->op = (uint8_t)op;
    in->a = a;
    in->b = b;
    c->sp += stack_delta;
    if (c->sp > c->maxsp)
        c->maxsp = c->sp;
    return (int)c->ncode++;
}

static void patch(compiler *c, int at, int which)
{
    if (c->rc || at < 0)
        return;
    if (which == 0)
        c->code[at].a = (int32_t)c->ncode;
    else
        c->code[at].b = (int32_t)c->ncode;
}

static int32_t konst(compiler *c, cel_value v)
{
    if (c->rc)
        return 0;
    if (dra_grow(c->p->mem, (void **)&c->consts, &c->capconsts, c->nconsts + 1,
                 sizeof *c->consts)) {
        c->rc = DRA_ENOMEM;
        return 0;
    }
    c->consts[c->nconsts] = cel_with_cplen(v);
    return (int32_t)c->nconsts++;
}

/* ---- call sites --------------------------------------------------------- */

static int8_t kind_of_type(const char *t, const char **tname)
{
    static const struct { const char *n; int8_t k; } map[] = {
        {"int", CEL_K_INT}, {"uint", CEL_K_UINT}, {"double", CEL_K_DOUBLE},
        {"bool", CEL_K_BOOL}, {"string", CEL_K_STRING}, {"bytes", CEL_K_BYTES},
        {"null_type", CEL_K_NULL}, {"list", CEL_K_LIST}, {"map", CEL_K_MAP},
        {"type", CEL_K_TYPE}, {"duration", CEL_K_DURATION},
        {"google.protobuf.Duration", CEL_K_DURATION}, {"timestamp", CEL_K_TIMESTAMP},
        {"google.protobuf.Timestamp", CEL_K_TIMESTAMP}, {"optional_type", CEL_K_OPTIONAL},
        {"kubernetes.Quantity", CEL_K_QUANTITY}, {"kubernetes.Semver", CEL_K_SEMVER}};
    size_t n = strcspn(t, "(");
    *tname = NULL;
    if ((n == 1 && t[0] >= 'A' && t[0] <= 'Z') || (n == 3 && !memcmp(t, "dyn", 3)) ||
        !strcmp(t, "google.protobuf.Any"))
        return -1;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].n) == n && !memcmp(map[i].n, t, n))
            return map[i].k;
    *tname = t;
    return CEL_K_OPAQUE;
}

/* A call site over |ovs| (those with a C function). -1 on failure. */
static int32_t callsite(compiler *c, const char *name, size_t nargs,
                        const cel_overload *const *ovs, size_t n)
{
    dra_arena *a = &c->p->arena;
    cel_callsite *cs;
    if (c->rc)
        return -1;
    if (dra_grow(c->p->mem, (void **)&c->calls, &c->capcalls, c->ncalls + 1, sizeof *c->calls)) {
        c->rc = DRA_ENOMEM;
        return -1;
    }
    cs = &c->calls[c->ncalls];
    memset(cs, 0, sizeof *cs);
    cs->name = name;
    cs->nargs = (uint8_t)nargs;
    cs->ovs = dra_arena_array(a, n ? n : 1, sizeof *cs->ovs);
    cs->kinds = dra_arena_array(a, n ? n : 1, sizeof *cs->kinds);
    cs->tnames = dra_arena_array(a, n ? n : 1, sizeof *cs->tnames);
    if (!cs->ovs || !cs->kinds || !cs->tnames) {
        c->rc = DRA_ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!ovs[i]->fn)
            continue;
        cs->ovs[cs->n] = ovs[i];
        for (size_t k = 0; k < CEL_MAX_ARGS; k++)
            cs->kinds[cs->n][k] = ovs[i]->args[k]
                                      ? kind_of_type(ovs[i]->args[k], &cs->tnames[cs->n][k])
                                      : -1;
        cs->n++;
    }
    return (int32_t)c->ncalls++;
}

/* Call site with every library overload of |name| taking |nargs| args
 * (the fallback of built-in operators). */
static int32_t op_fallback(compiler *c, const char *name, size_t nargs)
{
    const cel_fn_entry *fe = cel_env_fn(c->env, name, strlen(name));
    const cel_overload *tmp[64];
    size_t n = 0;
    if (!fe)
        return -1;
    for (size_t i = 0; i < fe->n && n < 64; i++) {
        size_t na = 0;
        while (na < CEL_MAX_ARGS && fe->ovs[i]->args[na])
            na++;
        if (na == nargs && fe->ovs[i]->fn)
            tmp[n++] = fe->ovs[i];
    }
    return n ? callsite(c, name, nargs, tmp, n) : -1;
}

/* ---- expressions ------------------------------------------------------------ */

static int is_name(const cel_ast *e, const char *s)
{
    return e->namelen == strlen(s) && !memcmp(e->name, s, e->namelen);
}

static int device_field(compiler *c, const cel_ast *e)
{
    const cel_ast *t = e->target;
    const cel_object_type *ot;
    if (c->p->env_kind != CEL_ENV_DRA || c->p->opts.plain_code || t->kind != AST_IDENT ||
        t->ref_kind != REF_VAR ||
        !t->type || t->type->kind != CEL_T_OBJECT || !(ot = t->type->obj) ||
        c->p->nvars != 1)
        return -1;
    for (size_t i = 0; i < ot->nfields; i++)
        if (is_name(e, ot->field_names[i]))
            return (int)i;
    return -1;
}

static int is_name(const cel_ast *e, const char *s);

/* device.attributes['dom'] / device.capacity['dom']: *field is the device
 * field index (1 or 2), *dom the domain literal. */
static int device_domain(compiler *c, const cel_ast *e, int *field, const cel_ast **dom)
{
    const cel_ast *m, *k;
    if (e->kind != AST_CALL || e->target || e->nargs != 2 || !is_name(e, "_[_]"))
        return 0;
    m = e->args[0];
    k = e->args[1];
    if (m->kind != AST_SELECT || m->test_only || k->kind != AST_CONST ||
        k->cval.kind != CEL_K_STRING)
        return 0;
    *field = device_field(c, m);
    *dom = k;
    return *field == 1 || *field == 2;
}

/* device.attributes['dom'].id or ['id'] in one instruction. */
static int comp_device_attr(compiler *c, const cel_ast *dom_expr, cel_value id)
{
    int field, at;
    const cel_ast *dom;
    if (!device_domain(c, dom_expr, &field, &dom))
        return 0;
    at = emit(c, CEL_OP_DEV_ATTR, konst(c, dom->cval), konst(c, id), 1);
    if (at >= 0)
        c->code[at].y = (uint16_t)field;
    return 1;
}

/* device.attributes['dom'].id or device.capacity['dom'].id (or ['id']):
 * *field is 1 or 2. */
static int device_entry(compiler *c, const cel_ast *x, int *field, const cel_ast **dom,
                        cel_value *id)
{
    *field = 0;
    if (x->kind == AST_SELECT && !x->test_only) {
        if (!device_domain(c, x->target, field, dom))
            return 0;
        *id = cel_str(x->name, x->namelen);
    } else if (x->kind == AST_CALL && !x->target && x->nargs == 2 && is_name(x, "_[_]") &&
               x->args[1]->kind == AST_CONST && x->args[1]->cval.kind == CEL_K_STRING) {
        if (!device_domain(c, x->args[0], field, dom))
            return 0;
        *id = x->args[1]->cval;
    } else {
        return 0;
    }
    return 1;
}

static int device_capacity(compiler *c, const cel_ast *x, const cel_ast **dom, cel_value *id)
{
    int field;
    return device_entry(c, x, &field, dom, id) && field == 2;
}

/* cap.compareTo(q) (*form 0), cap.isGreaterThan(q) (1), cap.isLessThan(q)
 * (2) with cap a device capacity and q a constant quantity, resolved to
 * the quantity library's overloads. */
static int capacity_compare(compiler *c, const cel_ast *e, const cel_ast **dom, cel_value *id,
                            const cel_ast **q, int *form)
{
    if (e->kind != AST_CALL || !e->target || e->nargs != 1 || e->ncands < 1)
        return 0;
    if (is_name(e, "compareTo"))
        *form = 0;
    else if (is_name(e, "isGreaterThan"))
        *form = 1;
    else if (is_name(e, "isLessThan"))
        *form = 2;
    else
        return 0;
    for (size_t i = 0; i < e->ncands; i++)
        if (strncmp(e->cands[i]->id, "quantity_", 9))
            return 0;
    *q = e->args[0];
    return (*q)->kind == AST_CONST && (*q)->cval.kind == CEL_K_QUANTITY &&
           device_capacity(c, e->target, dom, id);
}

/* Peephole for the capacity selectors: `cap.compareTo(q) OP k` (OP one of
 * < <= > >= == !=, k an int constant), `cap.isGreaterThan(q)` and
 * `cap.isLessThan(q)` become one DEV_QCMP. compareTo answers -1, 0 or 1,
 * so the whole comparison is a truth table over those three (x, bit
 * sign+1), with bit 3 set for == and != (which the unfused code charges
 * even when the capacity is an error). y: what the call and the int
 * comparison charge on success (the lookup's 4 is the opcode's base
 * cost), as the unfused code does. */
static int comp_capacity_compare(compiler *c, const cel_ast *e)
{
    static const char *const rel[] = {"_<_", "_<=_", "_>_", "_>=_", "_==_", "_!=_"};
    const cel_ast *dom, *q, *call = e;
    cel_value id;
    int form, table = 0, extra = 1, op = -1, at;
    int64_t k = 0;
    if (!e->target && e->nargs == 2) {
        for (int i = 0; i < 6; i++)
            if (is_name(e, rel[i]))
                op = i;
        if (op < 0 || e->args[1]->kind != AST_CONST || e->args[1]->cval.kind != CEL_K_INT)
            return 0;
        call = e->args[0];
        k = e->args[1]->cval.u.i;
        extra = 2;
    }
    if (!capacity_compare(c, call, &dom, &id, &q, &form) || (op >= 0) != (form == 0))
        return 0;
    for (int s = -1; s <= 1; s++) {
        int t = form == 1 ? s > 0
              : form == 2 ? s < 0
              : op == 0   ? s < k
              : op == 1   ? s <= k
              : op == 2   ? s > k
              : op == 3   ? s >= k
              : op == 4   ? s == k
                          : s != k;
        table |= t << (s + 1);
    }
    at = emit(c, CEL_OP_DEV_QCMP, konst(c, dom->cval), konst(c, id), 1);
    if (at >= 0) {
        c->code[at].c = konst(c, q->cval);
        c->code[at].x = (uint8_t)(table | (op >= 4 ? CEL_QCMP_EQ_ON_ERROR : 0));
        c->code[at].y = (uint16_t)extra;
    }
    return 1;
}

/* Peephole for regex selectors: `device.attributes['dom'].id.matches('<re>')`
 * (the string overload, a constant pattern) becomes one DEV_MATCH a b c y
 * (domain a, id b, pattern c, field y): the lookup DEV_ATTR charges (its
 * 4) and the call matches charges, in one step; a pattern of fixed
 * single-byte atoms is matched without PCRE2 (regex_fixed.c). */
static int comp_device_match(compiler *c, const cel_ast *e)
{
    const cel_ast *dom;
    cel_value id;
    int field, at;
    if (!e->target || e->nargs != 1 || !is_name(e, "matches") || e->ncands != 1 ||
        strcmp(e->cands[0]->id, "matches_string") != 0 || e->args[0]->kind != AST_CONST ||
        e->args[0]->cval.kind != CEL_K_STRING || !device_entry(c, e->target, &field, &dom, &id) ||
        field != 1)
        return 0;
    at = emit(c, CEL_OP_DEV_MATCH, konst(c, dom->cval), konst(c, id), 1);
    if (at >= 0) {
        c->code[at].c = konst(c, e->args[0]->cval);
        c->code[at].y = (uint16_t)field;
    }
    return 1;
}

static void comp_select(compiler *c, const cel_ast *e)
{
    int f;
    cel_value key = cel_str(e->name, e->namelen);
    if (e->test_only) {
        comp(c, e->target);
        emit(c, CEL_OP_HAS, konst(c, key), 0, 0);
        return;
    }
    f = device_field(c, e);
    if (f >= 0) {
        emit(c, CEL_OP_DEV_FIELD, f, 0, 1);
        return;
    }
    if (comp_device_attr(c, e->target, key))
        return;
    comp(c, e->target);
    emit(c, CEL_OP_SELECT, konst(c, key), 0, 0);
}

static int is_scalar_const(const cel_ast *e)
{
    return e->kind == AST_CONST &&
           (e->cval.kind == CEL_K_STRING || e->cval.kind == CEL_K_INT ||
            e->cval.kind == CEL_K_UINT || e->cval.kind == CEL_K_DOUBLE ||
            e->cval.kind == CEL_K_BOOL || e->cval.kind == CEL_K_NULL ||
            e->cval.kind == CEL_K_BYTES);
}

static void comp_equal(compiler *c, const cel_ast *e, int ne)
{
    const cel_ast *l = e->args[0], *r = e->args[1];
    /* x == 'k' compares against the constant; 'k' == x too, except when x
     * may be an opaque value (then cel-go's asymmetry applies). */
    if (is_scalar_const(r)) {
        size_t start = c->ncode;
        comp(c, l);
        /* Fuse only when the left operand is that one instruction (not,
         * say, the last branch of a conditional). */
        if (!c->rc && c->ncode == start + 1 && r->cval.kind == CEL_K_STRING &&
            (c->code[c->ncode - 1].op == CEL_OP_DEV_FIELD ||
             c->code[c->ncode - 1].op == CEL_OP_DEV_ATTR)) {
            /* Peephole: read the device value and compare in one step.
             * The constant is a string, so its code-point count is set. */
            cel_insn *in = &c->code[c->ncode - 1];
            in->op = in->op == CEL_OP_DEV_FIELD ? CEL_OP_DEV_FIELD_EQ : CEL_OP_DEV_ATTR_EQ;
            in->c = konst(c, r->cval);
            in->x = (uint8_t)ne;
            return;
        }
        emit(c, ne ? CEL_OP_NE_CONST : CEL_OP_EQ_CONST, konst(c, r->cval), 0, 0);
        return;
    }
    comp(c, l);
    comp(c, r);
    emit(c, ne ? CEL_OP_NE : CEL_OP_EQ, 0, 0, -1);
}

static void comp_logic(compiler *c, const cel_ast *e, int is_and)
{
    int j;
    comp(c, e->args[0]);
    j = emit(c, is_and ? CEL_OP_JF_KEEP : CEL_OP_JT_KEEP, 0, 0, 0);
    comp(c, e->args[1]);
    emit(c, is_and ? CEL_OP_AND : CEL_OP_OR, 0, 0, -1);
    patch(c, j, 0);
}

static void comp_cond(compiler *c, const cel_ast *e)
{
    int jc, jend;
    comp(c, e->args[0]);
    jc = emit(c, CEL_OP_COND, 0, 0, -1);
    comp(c, e->args[1]);
    jend = emit(c, CEL_OP_JMP, 0, 0, 0);
    c->sp--;
    patch(c, jc, 0);
    comp(c, e->args[2]);
    patch(c, jend, 0);
    patch(c, jc, 1);
}

/* `@result + [x]` inside a map/filter step appends in place. */
static int comp_append(compiler *c, const cel_ast *e)
{
    const cel_ast *l = e->args[0], *r = e->args[1];
    if (c->append_slot < 0 || l->kind != AST_IDENT || l->ref_kind != REF_LOCAL ||
        l->ref != c->append_slot || r->kind != AST_LIST || r->nargs != 1 ||
        (r->opt && r->opt[0]))
        return 0;
    comp(c, r->args[0]);
    emit(c, CEL_OP_APPEND, c->append_slot, 0, 0);
    return 1;
}

static const struct {
    const char *name;
    cel_op op;
    int nargs;
} binops[] = {
    {"_<_", CEL_OP_LT, 2}, {"_<=_", CEL_OP_LE, 2}, {"_>_", CEL_OP_GT, 2},
    {"_>=_", CEL_OP_GE, 2}, {"_+_", CEL_OP_ADD, 2}, {"_-_", CEL_OP_SUB, 2},
    {"_*_", CEL_OP_MUL, 2}, {"_/_", CEL_OP_DIV, 2}, {"_%_", CEL_OP_MOD, 2},
    {"@in", CEL_OP_IN, 2}, {"-_", CEL_OP_NEG, 1}, {"!_", CEL_OP_NOT, 1},
    {"@not_strictly_false", CEL_OP_NOT_STRICTLY_FALSE, 1}};

static int comp_operator(compiler *c, const cel_ast *e)
{
    if (e->target)
        return 0;
    if (is_name(e, "_&&_") || is_name(e, "_||_")) {
        comp_logic(c, e, is_name(e, "_&&_"));
        return 1;
    }
    if (is_name(e, "_?_:_")) {
        comp_cond(c, e);
        return 1;
    }
    if (is_name(e, "_==_") || is_name(e, "_!=_")) {
        comp_equal(c, e, is_name(e, "_!=_"));
        return 1;
    }
    if (is_name(e, "_[_]")) {
        int field;
        const cel_ast *dom;
        if (e->args[1]->kind == AST_CONST && e->args[1]->cval.kind == CEL_K_STRING &&
            comp_device_attr(c, e->args[0], e->args[1]->cval))
            return 1;
        if (device_domain(c, e, &field, &dom)) {
            emit(c, CEL_OP_DEV_DOMAIN, konst(c, dom->cval), field, 1);
            return 1;
        }
        comp(c, e->args[0]);
        if (is_scalar_const(e->args[1]) && e->args[1]->cval.kind != CEL_K_NULL) {
            emit(c, CEL_OP_INDEX_CONST, konst(c, e->args[1]->cval), 0, 0);
        } else {
            comp(c, e->args[1]);
            emit(c, CEL_OP_INDEX, 0, 0, -1);
        }
        return 1;
    }
    if (is_name(e, "_[?_]")) {
        comp(c, e->args[0]);
        comp(c, e->args[1]);
        emit(c, CEL_OP_OPT_INDEX, 0, 0, -1);
        return 1;
    }
    if (is_name(e, "_?._")) {
        comp(c, e->args[0]);
        emit(c, CEL_OP_OPT_SELECT, konst(c, e->args[1]->cval), 0, 0);
        return 1;
    }
    if (is_name(e, "cel.@mapInsert")) {
        comp(c, e->args[1]);
        comp(c, e->args[2]);
        emit(c, CEL_OP_MAP_INSERT, e->args[0]->ref, 0, -1);
        return 1;
    }
    if (is_name(e, "_+_") && comp_append(c, e))
        return 1;
    if (is_name(e, "@in") && e->nargs == 2 && e->args[0]->kind == AST_CONST &&
        e->args[0]->cval.kind == CEL_K_STRING) {
        /* 'key' in map: the key's hash is computed once, here. */
        int32_t fb = op_fallback(c, "@in", 2);
        int32_t k = konst(c, e->args[0]->cval);
        emit(c, CEL_OP_CONST, k, 0, 1);
        comp(c, e->args[1]);
        emit(c, CEL_OP_IN, fb, k + 1, -1);
        return 1;
    }
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++) {
        if (!is_name(e, binops[i].name) || (int)e->nargs != binops[i].nargs)
            continue;
        int32_t fb = op_fallback(c, binops[i].name, e->nargs);
        for (size_t k = 0; k < e->nargs; k++)
            comp(c, e->args[k]);
        emit(c, binops[i].op, fb, 0, 1 - (int)e->nargs);
        return 1;
    }
    return 0;
}

static int32_t call_site_of(compiler *c, const cel_ast *e, size_t n)
{
    int32_t cs;
    if (e->ncands == 0 && e->type && e->type->kind == CEL_T_DYN) {
        /* Unchecked: every overload of the name is a candidate. */
        cs = op_fallback(c, e->name, n);
        return cs >= 0 ? cs : callsite(c, e->name, n, NULL, 0);
    }
    return callsite(c, e->name, n, e->cands, e->ncands);
}

static void comp_call(compiler *c, const cel_ast *e)
{
    size_t n = e->nargs + (e->target ? 1 : 0);
    int32_t cs;
    if (comp_capacity_compare(c, e) || comp_device_match(c, e) || comp_operator(c, e))
        return;
    if (e->target)
        comp(c, e->target);
    for (size_t i = 0; i < e->nargs; i++)
        comp(c, e->args[i]);
    cs = call_site_of(c, e, n);
    int at = emit(c, CEL_OP_CALL, cs, 0, 1 - (int)n);
    if (at >= 0)
        c->code[at].x = (uint8_t)n;
}

static int32_t opt_flags(compiler *c, const uint8_t *opt, size_t n)
{
    int any = 0;
    char *f;
    for (size_t i = 0; opt && i < n; i++)
        any |= opt[i];
    if (!any)
        return -1;
    f = dra_arena_alloc(&c->p->arena, n);
    if (!f) {
        c->rc = DRA_ENOMEM;
        return -1;
    }
    memcpy(f, opt, n);
    return konst(c, cel_bytes(f, n));
}

/* A call of a named function (not an operator or a macro helper: those
 * start with '_' or '@'). */
static int named_call(const cel_ast *e)
{
    return e->kind == AST_CALL && e->name && e->namelen &&
           ((e->name[0] >= 'a' && e->name[0] <= 'z') || (e->name[0] >= 'A' && e->name[0] <= 'Z'));
}

/* The body of a comprehension starts: loop invariants cached from here
 * on are forgotten by the HOIST_RESET at *reset at every run; *first is
 * the first of their slots. Returns the loop's top. */
static int loop_body_open(compiler *c, int *reset, int *first)
{
    *reset = emit(c, CEL_OP_HOIST_RESET, 0, 0, 0);
    *first = c->nlocals;
    c->in_loop++;
    return (int)c->ncode;
}

static void loop_body_close(compiler *c, int reset, int first)
{
    c->in_loop--;
    if (!c->rc && reset >= 0) {
        /* Every invariant cached in the body starts unknown again. */
        c->code[reset].a = first;
        c->code[reset].b = c->nlocals;
    }
}

/* The comprehension's result, where the loop (next) and a failed
 * ITER_INIT (init, with its error pushed) come out. */
static void loop_result(compiler *c, const cel_ast *e, int next, int init)
{
    patch(c, next, 1);
    comp(c, e->result);
    c->sp--;
    patch(c, init, 1);
    c->sp++;
}

static int is_accu(const cel_ast *x, const cel_ast *e)
{
    return x->kind == AST_IDENT && x->ref_kind == REF_LOCAL && x->ref == e->accu_slot;
}

/* The exists (1) and all (2) macros' shape: accumulator false/true, loop
 * condition @not_strictly_false(!accu) / (accu), step accu || / && pred,
 * result accu; else 0. */
static int any_all_shape(const compiler *c, const cel_ast *e)
{
    const cel_ast *ai = e->accu_init, *cond = e->cond, *st = e->step;
    int all;
    if (c->p->opts.plain_code)
        return 0;
    if (ai->kind != AST_CONST || ai->cval.kind != CEL_K_BOOL || !is_accu(e->result, e) ||
        cond->kind != AST_CALL || cond->target || cond->nargs != 1 ||
        !is_name(cond, "@not_strictly_false") || st->kind != AST_CALL || st->target ||
        st->nargs != 2 || !is_accu(st->args[0], e))
        return 0;
    all = ai->cval.u.b;
    if (!is_name(st, all ? "_&&_" : "_||_"))
        return 0;
    cond = cond->args[0];
    if (!all) {
        if (cond->kind != AST_CALL || cond->target || cond->nargs != 1 || !is_name(cond, "!_"))
            return 0;
        cond = cond->args[0];
    }
    return is_accu(cond, e) ? 1 + all : 0;
}

static int loop_invariant(const cel_ast *e);

/* A predicate INV.f(x) with x the (only) iteration variable, INV reading
 * no local, f a named function. */
static int invariant_method_of(const cel_ast *e, const cel_ast *pred)
{
    const cel_ast *x;
    if (!named_call(pred) || !pred->target || pred->nargs != 1 || e->iter_var2)
        return 0;
    x = pred->args[0];
    return x->kind == AST_IDENT && x->ref_kind == REF_LOCAL && x->ref == e->iter_slot + 2 &&
           loop_invariant(pred->target);
}

/* 1 when call site |cs| has the one overload |id|. */
static int only_overload(compiler *c, int32_t cs, const char *id)
{
    const cel_callsite *s = cs >= 0 && !c->rc ? &c->calls[cs] : NULL;
    return s && s->n == 1 && !strcmp(s->ovs[0]->id, id);
}

/* ANY_DEV's string kernel (CEL_DSK_*) for the test call site |f|, the
 * conversion call site |conv| (-1: none) and the constant range |l|;
 * 0 when the loop must call them. */
static uint8_t dev_str_kernel(compiler *c, int32_t f, int32_t conv, const cel_list *l)
{
    static const char *const tests[] = {"contains_string", "starts_with_string",
                                        "ends_with_string"};
    unsigned k = 0;
    for (unsigned i = 0; i < 3 && !k; i++)
        if (only_overload(c, f, tests[i]))
            k = CEL_DSK_CONTAINS + i;
    for (size_t i = 0; k && i < l->n; i++)
        if (l->v[i].kind != CEL_K_STRING)
            k = 0;
    if (!k || conv < 0)
        return (uint8_t)k;
    if (only_overload(c, conv, "string_lower_ascii"))
        return (uint8_t)(k | CEL_DSK_LOWER);
    if (only_overload(c, conv, "string_upper_ascii"))
        return (uint8_t)(k | CEL_DSK_UPPER);
    return 0;
}

/* The string kernel |*kern| over the constants |l| (all: 1 for all, 0
 * for exists) in the program: its index (EXT.y); *kern cleared when
 * there is no room. */
static uint16_t dsk_add(compiler *c, const cel_list *l, uint8_t *kern, int all)
{
    cel_dsk *k;
    if (c->ndsk > UINT16_MAX) {
        *kern = 0;
        return 0;
    }
    if (dra_grow(c->p->mem, (void **)&c->dsk, &c->capdsk, c->ndsk + 1, sizeof *c->dsk) ||
        !(k = cel_dsk_new(&c->p->arena, l, *kern, all))) {
        c->rc = DRA_ENOMEM;
        *kern = 0;
        return 0;
    }
    c->dsk[c->ndsk] = k;
    return (uint16_t)c->ndsk++;
}

/* The device-value loop: a constant range, and the predicate INV.f(x)
 * with INV a device attribute or capacity, or one argument-less method
 * of it (productName.lowerAscii()). ANY_DEV runs the whole loop in C
 * (see dev_loop in vm.c) and falls back to the generic loop emitted
 * after it when the device value is missing. Returns its position. */
static int comp_dev_loop(compiler *c, const cel_ast *e, int shape)
{
    const cel_ast *pred = e->step->args[1], *inv, *conv = NULL, *dom;
    cel_value id;
    int field, at, ext;
    if (e->range->kind != AST_CONST || e->range->cval.kind != CEL_K_LIST ||
        !invariant_method_of(e, pred))
        return -1;
    inv = pred->target;
    if (named_call(inv) && inv->target && inv->nargs == 0) {
        conv = inv;
        inv = inv->target;
    }
    if (!device_entry(c, inv, &field, &dom, &id))
        return -1;
    at = emit(c, CEL_OP_ANY_DEV, konst(c, dom->cval), konst(c, id), 0);
    ext = emit(c, CEL_OP_EXT, call_site_of(c, pred, 2), conv ? call_site_of(c, conv, 1) : -1, 0);
    if (at >= 0 && ext >= 0) {
        c->code[at].c = konst(c, e->range->cval);
        c->code[ext].c = field;
        c->code[ext].x = dev_str_kernel(c, c->code[ext].a, c->code[ext].b,
                                        e->range->cval.u.list);
        if (c->code[ext].x)
            c->code[ext].y = dsk_add(c, e->range->cval.u.list, &c->code[ext].x, shape == 2);
    }
    return at;
}

/* exists / all as ANY_NEXT (next element and the loop condition) and
 * ANY_STEP (fold the predicate into the accumulator and loop) or ANY_CALL:
 * two instructions instead of ten per iteration, charging what the
 * generic loop charges at the same points (see the opcodes in vm.c);
 * ANY_DEV in front when comp_dev_loop applies. */
static void comp_any_all(compiler *c, const cel_ast *e, int shape)
{
    int init, next, reset, first, loop, step, dev;
    const cel_ast *pred;
    dev = comp_dev_loop(c, e, shape);
    comp(c, e->range);
    init = emit(c, CEL_OP_ITER_INIT, e->iter_slot, 0, -1);
    comp(c, e->accu_init);
    emit(c, CEL_OP_STORE, e->accu_slot, 0, -1);
    loop = loop_body_open(c, &reset, &first);
    next = emit(c, CEL_OP_ANY_NEXT, e->iter_slot, 0, 0);
    if (next >= 0) {
        c->code[next].x = e->iter_var2 ? 2 : 1;
        c->code[next].c = e->accu_slot;
        c->code[next].y = (uint16_t)(shape == 2);
    }
    if (dev >= 0 && next >= 0) {
        if (next - dev > UINT16_MAX)
            c->rc = DRA_ELIMIT;
        else
            c->code[dev].y = (uint16_t)(next - dev); /* its loop head */
    }
    pred = e->step->args[1];
    if (invariant_method_of(e, pred)) {
        /* INV.f(x): LOCAL x, CALL and ANY_STEP in one instruction. */
        comp(c, pred->target);
        step = emit(c, CEL_OP_ANY_CALL, loop, call_site_of(c, pred, 2), -1);
        if (step >= 0)
            c->code[step].c = pred->args[0]->ref;
    } else {
        comp(c, pred);
        step = emit(c, CEL_OP_ANY_STEP, loop, 0, -1);
        if (step >= 0) {
            c->code[step].c = e->accu_slot;
            c->code[step].y = (uint16_t)(shape == 2);
        }
    }
    loop_body_close(c, reset, first);
    loop_result(c, e, next, init);
}

static void comp_comprehension(compiler *c, const cel_ast *e)
{
    int init, next, loop, cond, reset, first, shape, save_append = c->append_slot;
    int save_insert = c->insert_slot;
    int builder = e->accu_init->kind == AST_LIST && e->accu_init->nargs == 0;
    int mbuilder = e->accu_init->kind == AST_MAP && e->accu_init->nargs == 0;
    /* cel.bind: no iteration at all. */
    if (e->range->kind == AST_LIST && e->range->nargs == 0 && e->cond->kind == AST_CONST &&
        e->cond->cval.kind == CEL_K_BOOL && !e->cond->cval.u.b) {
        comp(c, e->accu_init);
        emit(c, CEL_OP_STORE, e->accu_slot, 0, -1);
        comp(c, e->result);
        return;
    }
    if ((shape = any_all_shape(c, e)) != 0) {
        comp_any_all(c, e, shape);
        return;
    }
    comp(c, e->range);
    init = emit(c, CEL_OP_ITER_INIT, e->iter_slot, 0, -1);
    if (builder) {
        emit(c, CEL_OP_LIST_BUILDER, e->accu_slot, 0, 0);
    } else if (mbuilder) {
        emit(c, CEL_OP_MAP_BUILDER, e->accu_slot, 0, 0);
    } else {
        comp(c, e->accu_init);
        emit(c, CEL_OP_STORE, e->accu_slot, 0, -1);
    }
    loop = loop_body_open(c, &reset, &first);
    next = emit(c, CEL_OP_ITER_NEXT, e->iter_slot, 0, 0);
    if (next >= 0)
        c->code[next].x = e->iter_var2 ? 2 : 1;
    if (!(e->cond->kind == AST_CONST && e->cond->cval.kind == CEL_K_BOOL && e->cond->cval.u.b)) {
        comp(c, e->cond);
        cond = emit(c, CEL_OP_LOOP_COND, 0, 0, -1);
    } else {
        cond = -1;
    }
    c->append_slot = builder ? e->accu_slot : -1;
    c->insert_slot = mbuilder ? e->accu_slot : -1;
    comp(c, e->step);
    c->append_slot = save_append;
    c->insert_slot = save_insert;
    loop_body_close(c, reset, first);
    emit(c, CEL_OP_STORE, e->accu_slot, 0, -1);
    emit(c, CEL_OP_JMP, loop, 0, 0);
    patch(c, cond, 0);
    loop_result(c, e, next, init);
}

/* ---- loop-invariant calls ------------------------------------------------
 * A function call in a comprehension's condition or step that reads no
 * local variable gives the same value (or error) in every iteration: it is
 * computed on first use, cached in a pair of local slots (value, cost) and
 * reused after, charging its cost again each time so that the runtime cost
 * stays cel-go's. Lazy, so an empty range or a short-circuited first use
 * evaluates it exactly when the uncached code would have. */

/* 1 when |e| reads no comprehension or bind variable. */
static int loop_invariant(const cel_ast *e)
{
    if (!e)
        return 1;
    if (e->ref_kind == REF_LOCAL)
        return 0;
    switch (e->kind) {
    case AST_CONST:
    case AST_IDENT: return 1;
    case AST_SELECT: return loop_invariant(e->target);
    case AST_CALL:
    case AST_LIST:
    case AST_MAP:
        if (!loop_invariant(e->target))
            return 0;
        for (size_t i = 0; i < e->nargs; i++)
            if (!loop_invariant(e->args[i]))
                return 0;
        return 1;
    default: return 0;
    }
}

/* A named function call (not an operator or macro helper) worth caching. */
static int hoistable(const compiler *c, const cel_ast *e)
{
    if (!c->in_loop || c->no_fold || c->p->opts.plain_code || !named_call(e))
        return 0;
    if (memchr(e->name, '@', e->namelen) || (!e->target && !e->nargs))
        return 0;
    return loop_invariant(e);
}

static void comp_hoisted(compiler *c, const cel_ast *e)
{
    int32_t slot = c->nlocals;
    int get, saved = c->in_loop;
    if (c->nlocals > INT32_MAX - 2) {
        c->rc = DRA_ELIMIT;
        return;
    }
    c->nlocals += 2;
    get = emit(c, CEL_OP_HOIST_GET, slot, 0, 0);
    c->in_loop = 0; /* the call's operands are computed once anyway */
    comp_call(c, e);
    c->in_loop = saved;
    emit(c, CEL_OP_HOIST_SET, slot, 0, 0);
    patch(c, get, 1);
}

static void comp(compiler *c, const cel_ast *e)
{
    if (c->rc)
        return;
    switch (e->kind) {
    case AST_CONST:
        emit(c, CEL_OP_CONST, konst(c, e->cval), 0, 1);
        break;
    case AST_IDENT:
        if (e->ref_kind == REF_LOCAL)
            emit(c, CEL_OP_LOCAL, e->ref, 0, 1);
        else if (e->ref_kind == REF_VAR)
            emit(c, CEL_OP_VAR, e->ref, 0, 1);
        else
            emit(c, CEL_OP_CONST, konst(c, e->cval), 0, 1);
        break;
    case AST_SELECT: comp_select(c, e); break;
    case AST_CALL:
        if (hoistable(c, e))
            comp_hoisted(c, e);
        else
            comp_call(c, e);
        break;
    case AST_LIST:
        for (size_t i = 0; i < e->nargs; i++)
            comp(c, e->args[i]);
        emit(c, CEL_OP_LIST, (int32_t)e->nargs, opt_flags(c, e->opt, e->nargs),
             1 - (int)e->nargs);
        break;
    case AST_MAP:
        for (size_t i = 0; i < e->nargs; i++)
            comp(c, e->args[i]);
        emit(c, CEL_OP_MAP, (int32_t)(e->nargs / 2), opt_flags(c, e->opt, e->nargs / 2),
             1 - (int)e->nargs);
        break;
    case AST_COMPREHENSION: comp_comprehension(c, e); break;
    default:
        c->rc = DRA_EUNSUPPORTED;
        break;
    }
}

/* ---- constant folding ----------------------------------------------------
 * Calls and aggregate literals whose operands are all constants are
 * evaluated once at compile time, as cel-go's OptOptimize does
 * (quantity('40Gi'), ['Hopper', 'Blackwell']). A call that fails is left
 * for run time so its error keeps CEL's absorption rules. */

/* Copies |v| into the program arena. 0 when it cannot be (opaque). */
static int deep_copy(dra_arena *a, cel_value v, cel_value *out)
{
    *out = v;
    switch (v.kind) {
    case CEL_K_STRING:
    case CEL_K_BYTES: {
        char *s = dra_arena_strndup(a, v.u.s, v.n);
        if (!s)
            return 0;
        out->u.s = s;
        *out = cel_with_cplen(*out); /* folded list elements too */
        return 1;
    }
    case CEL_K_LIST: {
        cel_list *l = dra_arena_zalloc(a, sizeof *l);
        cel_value *it = dra_arena_array(a, v.u.list->n ? v.u.list->n : 1, sizeof *it);
        if (!l || !it)
            return 0;
        for (size_t i = 0; i < v.u.list->n; i++)
            if (!deep_copy(a, v.u.list->v[i], &it[i]))
                return 0;
        l->n = v.u.list->n;
        l->v = it;
        out->u.list = l;
        return 1;
    }
    case CEL_K_MAP: {
        cel_map *m = dra_arena_zalloc(a, sizeof *m);
        cel_map_entry *e = dra_arena_array(a, v.u.map->n ? v.u.map->n : 1, sizeof *e);
        if (!m || !e)
            return 0;
        for (size_t i = 0; i < v.u.map->n; i++) {
            if (!deep_copy(a, v.u.map->e[i].k, &e[i].k) || !deep_copy(a, v.u.map->e[i].v, &e[i].v))
                return 0;
            e[i].hash = v.u.map->e[i].hash;
        }
        m->n = v.u.map->n;
        m->e = e;
        m->flags = v.u.map->flags;
        out->u.map = m;
        return 1;
    }
    case CEL_K_QUANTITY: {
        dra_quantity *q = dra_arena_alloc(a, sizeof *q);
        if (!q)
            return 0;
        *q = *v.u.q;
        out->u.q = q;
        return 1;
    }
    case CEL_K_SEMVER: {
        dra_semver *sv = dra_arena_alloc(a, sizeof *sv);
        if (!sv)
            return 0;
        *sv = *v.u.sv;
        sv->pre = dra_arena_strndup(a, v.u.sv->pre ? v.u.sv->pre : "", v.u.sv->prelen);
        sv->build = dra_arena_strndup(a, v.u.sv->build ? v.u.sv->build : "", v.u.sv->buildlen);
        if (!sv->pre || !sv->build)
            return 0;
        out->u.sv = sv;
        return 1;
    }
    case CEL_K_OPTIONAL: {
        cel_value *b;
        if (!v.u.opt)
            return 1;
        b = dra_arena_alloc(a, sizeof *b);
        if (!b || !deep_copy(a, *v.u.opt, b))
            return 0;
        out->u.opt = b;
        return 1;
    }
    case CEL_K_TYPE: {
        cel_type *t = dra_arena_alloc(a, sizeof *t);
        if (!t)
            return 0;
        *t = *v.u.type;
        out->u.type = t;
        return 1;
    }
    case CEL_K_OPAQUE:
    case CEL_K_OBJECT:
    case CEL_K_ERROR:
        return 0;
    default:
        return 1;
    }
}

static int all_const(const cel_ast *e)
{
    if (e->target && e->target->kind != AST_CONST)
        return 0;
    for (size_t i = 0; i < e->nargs; i++)
        if (e->args[i]->kind != AST_CONST)
            return 0;
    for (size_t i = 0; e->opt && i < (e->kind == AST_MAP ? e->nargs / 2 : e->nargs); i++)
        if (e->opt[i])
            return 0;
    return 1;
}

/* Evaluates the constant subtree |e| and turns it into a constant.
 * Returns 0 when it folded, 1 when it evaluates to an error, -1 when it
 * could not be evaluated here. */
static int fold_node(compiler *c, cel_ast *e)
{
    int status = -1;
    compiler sub;
    dra_cel_program tmp;
    cel_value r, copy;
    dra_err rc;
    if (!c->fold_vm && dra_cel_vm_new(c->p->mem, &c->fold_vm)) {
        c->rc = DRA_ENOMEM;
        return -1;
    }
    memset(&sub, 0, sizeof sub);
    memset(&tmp, 0, sizeof tmp);
    tmp.mem = c->p->mem;
    tmp.env_kind = CEL_ENV_STD;
    tmp.cost_limit = c->p->cost_limit;
    dra_arena_init(&tmp.arena, c->p->mem);
    sub.env = c->env;
    sub.p = &tmp;
    sub.append_slot = sub.insert_slot = -1;
    sub.no_fold = 1;
    comp(&sub, e);
    emit(&sub, CEL_OP_RET, 0, 0, 0);
    if (!sub.rc) {
        tmp.code = sub.code;
        tmp.ncode = sub.ncode;
        tmp.consts = sub.consts;
        tmp.nconsts = sub.nconsts;
        tmp.calls = sub.calls;
        tmp.dsk = sub.dsk;
        tmp.ncalls = sub.ncalls;
        tmp.max_stack = sub.maxsp + 4;
        tmp.hashes = dra_arena_array(&tmp.arena, sub.nconsts ? sub.nconsts : 1, sizeof *tmp.hashes);
        if (tmp.hashes) {
            for (size_t i = 0; i < sub.nconsts; i++)
                tmp.hashes[i] = cel_value_hash(sub.consts[i]);
            r = cel_vm_run(&c->fold_vm->c, &tmp, NULL, &rc);
            if (!rc && r.kind == CEL_K_ERROR)
                status = 1;
            if (!rc && r.kind != CEL_K_ERROR && deep_copy(&c->p->arena, r, &copy)) {
                e->kind = AST_CONST;
                e->cval = copy;
                e->target = NULL;
                e->nargs = 0;
                status = 0;
            }
        }
    } else if (sub.rc == DRA_ENOMEM) {
        c->rc = DRA_ENOMEM;
    }
    dra_free(c->p->mem, sub.code);
    dra_free(c->p->mem, sub.consts);
    dra_free(c->p->mem, sub.calls);
    dra_free(c->p->mem, sub.dsk);
    dra_arena_fini(&tmp.arena);
    return status;
}

static void literal_error(compiler *c, const cel_ast *e, const char *fn)
{
    cel_report(c->d, c->src, c->len, e->off, "invalid %s argument", fn);
    if (!c->rc)
        c->rc = DRA_ETYPE;
}

/* Kubernetes validates constant arguments at compile time: a regex that
 * does not compile, a duration or timestamp that does not parse. */
static void validate_call(compiler *c, cel_ast *e, int folded)
{
    const cel_ast *pat;
    if (is_name(e, "duration") || is_name(e, "timestamp")) {
        if (folded == 1 && e->nargs == 1 && e->args[0]->cval.kind == CEL_K_STRING)
            literal_error(c, e, is_name(e, "duration") ? "duration" : "timestamp");
        return;
    }
    /* cel-go validates the first call argument of `matches` (the pattern
     * of the receiver form; in the global form, literally its first
     * argument). */
    if (!is_name(e, "matches") || e->nargs < 1)
        return;
    pat = e->args[0];
    if (pat && pat->kind == AST_CONST && pat->cval.kind == CEL_K_STRING) {
        dra_buf why;
        dra_err rc;
        cel_regex *re;
        dra_buf_init(&why, c->p->mem);
        re = cel_regex_compile(c->p->mem, pat->cval.u.s, pat->cval.n, &why, &rc);
        dra_buf_fini(&why);
        if (re)
            cel_regex_free(c->p->mem, re);
        else if (rc == DRA_ENOMEM)
            c->rc = DRA_ENOMEM;
        else
            literal_error(c, pat, "matches");
    }
}

static int no_fold_call(const cel_ast *e)
{
    static const char *const skip[] = {"_&&_", "_||_", "_?_:_", "cel.@mapInsert", "_[_]"};
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (is_name(e, skip[i]))
            return 1;
    return 0;
}

static void fold(compiler *c, cel_ast *e)
{
    if (c->rc || !e)
        return;
    switch (e->kind) {
    case AST_SELECT:
        fold(c, e->target);
        return;
    case AST_CALL:
        fold(c, e->target);
        for (size_t i = 0; i < e->nargs; i++) {
            /* Keep the list of `@result + [x]` for in-place appends. */
            if (i == 1 && is_name(e, "_+_") && e->args[0]->kind == AST_IDENT &&
                e->args[0]->name[0] == '@')
                continue;
            fold(c, e->args[i]);
        }
        {
            int folded = -1;
            if (all_const(e) && !no_fold_call(e) && (e->nargs || e->target))
                folded = fold_node(c, e);
            if (c->validate && e->kind == AST_CALL)
                validate_call(c, e, folded);
        }
        return;
    case AST_LIST:
    case AST_MAP:
        for (size_t i = 0; i < e->nargs; i++)
            fold(c, e->args[i]);
        if (e->nargs && all_const(e))
            fold_node(c, e);
        return;
    case AST_COMPREHENSION:
        fold(c, e->range);
        fold(c, e->accu_init);
        fold(c, e->cond);
        fold(c, e->step);
        fold(c, e->result);
        return;
    default:
        return;
    }
}

/* DEV_MATCH patterns of fixed single-byte atoms, compiled once per
 * program (read-only, so VMs on any thread share them). */
static void precompile_regex(compiler *c)
{
    dra_cel_program *p = c->p;
    p->fixre = dra_arena_array(&p->arena, c->nconsts ? c->nconsts : 1, sizeof *p->fixre);
    if (!p->fixre) {
        c->rc = DRA_ENOMEM;
        return;
    }
    for (size_t i = 0; i < c->ncode; i++) {
        const cel_value *pat;
        int oom = 0;
        if (c->code[i].op != CEL_OP_DEV_MATCH || p->fixre[c->code[i].c])
            continue;
        pat = &c->consts[c->code[i].c];
        p->fixre[c->code[i].c] = cel_fixre_compile(&p->arena, pat->u.s, pat->n, &oom);
        if (oom) {
            c->rc = DRA_ENOMEM;
            return;
        }
    }
}

static int is_dev_cmp(const cel_insn *in)
{
    return in->op == CEL_OP_DEV_FIELD_EQ || in->op == CEL_OP_DEV_ATTR_EQ ||
           in->op == CEL_OP_DEV_QCMP || in->op == CEL_OP_DEV_MATCH;
}

/* ANY_DEV at 0 whose loop head exits to LOCAL <accumulator>; RET. */
static int dev_loop_shape(const cel_insn *code, size_t n)
{
    const cel_insn *head;
    size_t out;
    if (n < 4 || code[0].op != CEL_OP_ANY_DEV || (size_t)code[0].y >= n)
        return 0;
    head = &code[code[0].y];
    out = (size_t)head->b;
    return head->op == CEL_OP_ANY_NEXT && out + 2 == n && code[out].op == CEL_OP_LOCAL &&
           code[out].a == head->c && code[out + 1].op == CEL_OP_RET;
}

/* Recognises term (JF_KEEP term AND)* RET over device comparisons. */
static int conj_shape(const cel_insn *code, size_t n)
{
    size_t i = 1;
    int terms = 1;
    if (n < 2 || !is_dev_cmp(&code[0]))
        return 0;
    while (i + 2 < n && code[i].op == CEL_OP_JF_KEEP && is_dev_cmp(&code[i + 1]) &&
           code[i + 2].op == CEL_OP_AND) {
        i += 3;
        terms++;
    }
    return i == n - 1 && code[i].op == CEL_OP_RET ? terms : 0;
}

static void ckey_init(cel_ckey *k, const cel_value *v, uint64_t hash)
{
    k->s = v->u.s;
    k->n = v->n;
    k->hash = hash;
    cel_ckey_words(v->u.s, v->n, &k->w0, &k->w1);
}

/* p->cterms for the conjunction program |p| (p->conj_terms set); left
 * NULL when a term is not for the inline path. 0 or DRA_ENOMEM. */
static dra_err decode_terms(dra_cel_program *p)
{
    cel_cterm *t = dra_arena_array(&p->arena, (size_t)p->conj_terms, sizeof *t);
    if (!t)
        return DRA_ENOMEM;
    for (int i = 0; i < p->conj_terms; i++) {
        const cel_insn *in = cel_conj_term(p->code, i);
        const cel_value *k = &p->consts[in->c];
        t[i].op = in->op;
        t[i].x = in->x;
        if (in->op == CEL_OP_DEV_QCMP) {
            t[i].q = k->u.q;
        } else if (in->op == CEL_OP_DEV_MATCH) {
            if (!(t[i].fix = p->fixre[in->c]))
                return DRA_OK; /* PCRE2's: the full path */
            t[i].qcost = (uint32_t)((cel_value_size(*k) + 3) / 4);
        } else if (k->kind == CEL_K_STRING && (k->flags & CEL_VF_CPLEN)) {
            ckey_init(&t[i].k, k, 0);
            t[i].kcp = k->pad;
            t[i].kcost = (uint32_t)cel_tenth(k->pad);
        } else {
            return DRA_OK;
        }
        if (in->op == CEL_OP_DEV_FIELD_EQ) {
            t[i].field = (uint8_t)in->a;
            continue;
        }
        t[i].field = in->op == CEL_OP_DEV_QCMP ? 2 : (uint8_t)in->y;
        if (in->op == CEL_OP_DEV_QCMP)
            t[i].qcost = in->y;
        else if (in->op != CEL_OP_DEV_MATCH)
            t[i].qcost = 0;
        ckey_init(&t[i].dom, &p->consts[in->a], p->hashes[in->a]);
        ckey_init(&t[i].id, &p->consts[in->b], p->hashes[in->b]);
    }
    p->cterms = t;
    return DRA_OK;
}

dra_err cel_compile_ast(dra_cel_env *env, dra_cel_program *p, cel_ast *root, int nlocals,
                        dra_diag *d, const char *src, size_t len)
{
    compiler c;
    memset(&c, 0, sizeof c);
    c.env = env;
    c.p = p;
    c.append_slot = c.insert_slot = -1;
    c.validate = p->env_kind == CEL_ENV_DRA;
    c.d = d;
    c.src = src;
    c.len = len;
    c.nlocals = nlocals;
    fold(&c, root);
    dra_cel_vm_free(c.fold_vm);
    c.fold_vm = NULL;
    comp(&c, root);
    emit(&c, CEL_OP_RET, 0, 0, 0);
    if (!c.rc)
        precompile_regex(&c);
    if (!c.rc) {
        /* Move the growable arrays into the program arena. */
        p->code = dra_arena_array(&p->arena, c.ncode, sizeof *p->code);
        p->consts = dra_arena_array(&p->arena, c.nconsts ? c.nconsts : 1, sizeof *p->consts);
        p->hashes = dra_arena_array(&p->arena, c.nconsts ? c.nconsts : 1, sizeof *p->hashes);
        p->calls = dra_arena_array(&p->arena, c.ncalls ? c.ncalls : 1, sizeof *p->calls);
        p->dsk = dra_arena_array(&p->arena, c.ndsk ? c.ndsk : 1, sizeof *p->dsk);
        if (!p->code || !p->consts || !p->hashes || !p->calls || !p->dsk) {
            c.rc = DRA_ENOMEM;
        } else {
            memcpy(p->code, c.code, c.ncode * sizeof *p->code);
            if (c.nconsts)
                memcpy(p->consts, c.consts, c.nconsts * sizeof *p->consts);
            if (c.ncalls)
                memcpy(p->calls, c.calls, c.ncalls * sizeof *p->calls);
            if (c.ndsk)
                memcpy(p->dsk, c.dsk, c.ndsk * sizeof *p->dsk);
            p->ndsk = c.ndsk;
            for (size_t i = 0; i < c.nconsts; i++)
                p->hashes[i] = cel_value_hash(c.consts[i]);
            p->ncode = c.ncode;
            p->dev_loop_only = dev_loop_shape(p->code, c.ncode);
            /* The conjunction paths do not check the cost limit: only
             * for programs whose worst case is within it (always, at the
             * default limit). */
            p->conj_terms = p->cost_estimate <= p->cost_limit ? conj_shape(p->code, c.ncode) : 0;
            p->nconsts = c.nconsts;
            p->ncalls = c.ncalls;
            p->nlocals = c.nlocals;
            p->max_stack = c.maxsp + 4;
            if (p->conj_terms)
                c.rc = decode_terms(p);
        }
    }
    dra_free(p->mem, c.code);
    dra_free(p->mem, c.consts);
    dra_free(p->mem, c.calls);
    dra_free(p->mem, c.dsk);
    return c.rc;
}
