/*
 * vm.c: runs a compiled program. One dispatch switch over a flat
 * instruction array with a value stack and local slots owned by the VM
 * (sized once, reused), cost charged per instruction from the opcode
 * table and checked at loop back-edges and size-dependent operations, and
 * a scratch arena, reset per evaluation, for the rare allocating
 * operations. Errors are values that flow through the stack.
 */
#include <math.h>
#include <stdio.h>

#include "vm.h"

static const uint8_t op_cost[CEL_OP__COUNT] = {
#define CEL_X_COST(name, cost) cost,
    CEL_OPCODES(CEL_X_COST)
#undef CEL_X_COST
};

static const cel_error e_cost = {"actual cost limit exceeded"};
static const cel_error e_memlimit = {"memory limit exceeded"};
static const cel_error e_opt_elem = {"cannot initialize optional entry from non-optional value"};

/* ---- allocation helpers for built-ins ------------------------------------- */

void *cel_alloc(cel_ctx *ctx, size_t size)
{
    void *p;
    if (size <= sizeof ctx->small - ctx->small_used) {
        size_t n = (size + 15) & ~(size_t)15;
        p = ctx->small + ctx->small_used;
        ctx->small_used = n < sizeof ctx->small - ctx->small_used ? ctx->small_used + n
                                                                   : sizeof ctx->small;
        return p;
    }
    if (ctx->scratch.total > CEL_SCRATCH_LIMIT || size > CEL_SCRATCH_LIMIT) {
        ctx->oom = 2;
        return NULL;
    }
    p = dra_arena_alloc(&ctx->scratch, size);
    if (!p)
        ctx->oom = 1;
    return p;
}

static cel_value nomem(cel_ctx *ctx)
{
    return cel_error_value(ctx->oom == 2 ? &e_memlimit : &cel_e_nomem);
}

cel_value cel_err(cel_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    char buf[256];
    int n;
    cel_error *e;
    char *m;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    e = cel_alloc(ctx, sizeof *e);
    m = cel_alloc(ctx, (size_t)n + 1);
    if (!e || !m)
        return nomem(ctx);
    memcpy(m, buf, (size_t)n + 1);
    e->msg = m;
    return cel_error_value(e);
}

cel_value cel_str_new(cel_ctx *ctx, const char *s, size_t len)
{
    char *p;
    if (len > UINT32_MAX)
        return cel_error_value(&e_memlimit);
    p = cel_alloc(ctx, len + 1);
    if (!p)
        return nomem(ctx);
    if (len)
        memcpy(p, s, len);
    p[len] = 0;
    return cel_str(p, len);
}

cel_value cel_bytes_new(cel_ctx *ctx, const char *s, size_t len)
{
    cel_value v = cel_str_new(ctx, s, len);
    if (v.kind == CEL_K_STRING)
        v.kind = CEL_K_BYTES;
    return v;
}

cel_value cel_list_new(cel_ctx *ctx, size_t n, cel_value **items)
{
    cel_list *l = cel_alloc(ctx, sizeof *l);
    cel_value *v = n ? cel_alloc(ctx, n * sizeof *v) : NULL;
    if (!l || (n && !v) || (n && n > SIZE_MAX / sizeof *v))
        return nomem(ctx);
    l->n = n;
    l->v = v;
    *items = v;
    return cel_list_value(l);
}

cel_value cel_map_new(cel_ctx *ctx, size_t n, cel_map_entry **entries)
{
    cel_map *m = cel_alloc(ctx, sizeof *m);
    cel_map_entry *e = n ? cel_alloc(ctx, n * sizeof *e) : NULL;
    if (!m || (n && !e))
        return nomem(ctx);
    m->n = n;
    m->e = e;
    m->flags = 0;
    m->ibits = 0;
    m->index = NULL;
    *entries = e;
    return cel_map_value(m);
}

cel_value cel_quantity_new(cel_ctx *ctx, const dra_quantity *q)
{
    dra_quantity *b = cel_alloc(ctx, sizeof *b);
    cel_value v = {0};
    if (!b)
        return nomem(ctx);
    *b = *q;
    v.kind = CEL_K_QUANTITY;
    v.u.q = b;
    return v;
}

cel_value cel_semver_new(cel_ctx *ctx, const dra_semver *sv)
{
    dra_semver *b = cel_alloc(ctx, sizeof *b);
    cel_value v = {0};
    if (!b)
        return nomem(ctx);
    *b = *sv;
    v.kind = CEL_K_SEMVER;
    v.u.sv = b;
    return v;
}

cel_value cel_optional_new(cel_ctx *ctx, const cel_value *x)
{
    cel_value v = {0};
    v.kind = CEL_K_OPTIONAL;
    if (x) {
        cel_value *b = cel_alloc(ctx, sizeof *b);
        if (!b)
            return nomem(ctx);
        *b = *x;
        v.u.opt = b;
    }
    return v;
}

cel_value cel_opaque_new(cel_ctx *ctx, const cel_opaque_type *t, const void *data)
{
    cel_opaque *o = cel_alloc(ctx, sizeof *o);
    cel_value v = {0};
    if (!o)
        return nomem(ctx);
    o->type = t;
    o->data = data;
    v.kind = CEL_K_OPAQUE;
    v.u.op = o;
    return v;
}

void cel_ctx_charge(cel_ctx *ctx, uint64_t cost)
{
    ctx->cost += cost;
}

void **cel_ctx_slot(cel_ctx *ctx, const void *key, void (*fini)(void *p, const dra_mem *mem))
{
    for (size_t i = 0; i < CEL_CTX_SLOTS; i++) {
        if (ctx->slots[i].key == key)
            return &ctx->slots[i].p;
        if (!ctx->slots[i].key) {
            ctx->slots[i].key = key;
            ctx->slots[i].fini = fini;
            return &ctx->slots[i].p;
        }
    }
    return NULL;
}

const dra_mem *cel_ctx_mem(cel_ctx *ctx)
{
    return ctx->mem;
}

uint64_t cel_value_size_slow(cel_value v)
{
    switch (v.kind) {
    case CEL_K_STRING:
        return (v.flags & CEL_VF_CPLEN) ? v.pad : cel_utf8_len(v.u.s, v.n);
    case CEL_K_BYTES: return v.n;
    case CEL_K_LIST: return v.u.list->n;
    case CEL_K_MAP: return v.u.map->n;
    default: return 1;
    }
}


/* ---- dispatch ------------------------------------------------------------- */

static int arg_fits(const cel_callsite *cs, size_t i, size_t k, cel_value v)
{
    int8_t want = cs->kinds[i][k];
    if (want < 0)
        return 1;
    if (v.kind != (uint8_t)want)
        return 0;
    if (want == CEL_K_OPAQUE && cs->tnames[i][k])
        return !strcmp(cs->tnames[i][k], v.u.op->type->name);
    return 1;
}

cel_value cel_vm_dispatch(cel_ctx *c, const cel_callsite *cs, cel_value *args)
{
    size_t n = cs->nargs;
    for (size_t i = 0; i < cs->n; i++) {
        const cel_overload *ov = cs->ovs[i];
        size_t k;
        if (!(ov->flags & CEL_OV_NONSTRICT))
            for (k = 0; k < n; k++)
                if (args[k].kind == CEL_K_ERROR)
                    return args[k];
        for (k = 0; k < n; k++)
            if (!arg_fits(cs, i, k, args[k]))
                break;
        if (k < n)
            continue;
        cel_value r = ov->fn(c, args, n);
        c->cost += ov->cost ? ov->cost(args, n, r) : 1;
        return r;
    }
    for (size_t k = 0; k < n; k++)
        if (args[k].kind == CEL_K_ERROR)
            return args[k];
    c->cost += 1;
    if (cs->n == 0 && cs->name)
        return cel_err(c, "no such overload: %s", cs->name);
    return cel_error_value(&cel_e_no_overload);
}

/* A call site with one overload whose arguments have fixed kinds (the
 * checker's common answer) calls it directly when they fit; anything
 * else (errors, other kinds, opaque types) goes through dispatch. */
static inline cel_value call_site(cel_ctx *c, const cel_callsite *cs, cel_value *args)
{
    if (cs->n == 1) {
        const cel_overload *ov = cs->ovs[0];
        size_t k, n = cs->nargs;
        cel_value r;
        for (k = 0; k < n; k++) {
            int8_t want = cs->kinds[0][k];
            if (want < 0 || want == CEL_K_OPAQUE || args[k].kind != (uint8_t)want)
                return cel_vm_dispatch(c, cs, args);
        }
        r = ov->fn(c, args, n);
        c->cost += ov->cost ? ov->cost(args, n, r) : 1;
        return r;
    }
    return cel_vm_dispatch(c, cs, args);
}

static cel_value fallback(cel_ctx *c, int32_t cs, cel_value *args)
{
    if (cs >= 0)
        return cel_vm_dispatch(c, &c->prog->calls[cs], args);
    c->cost += 1;
    return cel_error_value(&cel_e_no_overload);
}

/* ---- field selection and indexing ------------------------------------------- */

static cel_value empty_map(void)
{
    static const cel_map empty = {0, NULL, 0, 0, NULL};
    return cel_map_value(&empty);
}

static cel_value no_such_key(cel_ctx *c, cel_value k)
{
    dra_buf b;
    cel_value r;
    if (k.kind == CEL_K_STRING)
        return cel_err(c, "no such key: %.*s", (int)(k.n > 200 ? 200 : k.n), k.u.s);
    dra_buf_init(&b, c->mem);
    cel_value_format(k, &b);
    r = b.oom ? nomem(c) : cel_err(c, "no such key: %s", b.p);
    dra_buf_fini(&b);
    return r;
}

static int object_field(const cel_object *o, const char *name, size_t len, cel_value *out)
{
    for (size_t i = 0; i < o->type->nfields; i++)
        if (strlen(o->type->field_names[i]) == len &&
            !memcmp(o->type->field_names[i], name, len)) {
            *out = o->fields[i];
            return 1;
        }
    return 0;
}

static cel_value select_str(cel_ctx *c, cel_value x, cel_value k, uint64_t h)
{
    cel_value out;
    const cel_value *pv;
    switch (x.kind) {
    case CEL_K_MAP:
        pv = cel_map_get_str(x.u.map, k.u.s, k.n, h);
        if (pv)
            return *pv;
        if (x.u.map->flags & CEL_MAP_MISSING_EMPTY)
            return empty_map();
        return no_such_key(c, k);
    case CEL_K_OBJECT:
        if (object_field(x.u.obj, k.u.s, k.n, &out))
            return out;
        return cel_err(c, "no such field: %.*s", (int)k.n, k.u.s);
    case CEL_K_ERROR:
        return x;
    case CEL_K_OPTIONAL:
        if (!x.u.opt)
            return x;
        out = *x.u.opt;
        if (out.kind == CEL_K_MAP) {
            pv = cel_map_get_str(out.u.map, k.u.s, k.n, h);
            return cel_optional_new(c, pv);
        }
        out = select_str(c, out, k, h);
        return out.kind == CEL_K_ERROR ? out : cel_optional_new(c, &out);
    default:
        return cel_err(c, "type '%s' does not support field selection",
                       cel_kind_name((cel_kind)x.kind));
    }
}

/* A list index as int64 (int, uint, or integral double). */
static int list_index(cel_value k, int64_t *i)
{
    switch (k.kind) {
    case CEL_K_INT: *i = k.u.i; return 1;
    case CEL_K_UINT: *i = k.u.u > (uint64_t)INT64_MAX ? -1 : (int64_t)k.u.u; return 1;
    case CEL_K_DOUBLE:
        if (k.u.d != trunc(k.u.d) || !(fabs(k.u.d) < 9e18))
            return 0;
        *i = (int64_t)k.u.d;
        return 1;
    default: return 0;
    }
}

static cel_value index_value(cel_ctx *c, cel_value x, cel_value k)
{
    cel_value out;
    int64_t i;
    if (x.kind == CEL_K_ERROR)
        return x;
    if (k.kind == CEL_K_ERROR)
        return k;
    switch (x.kind) {
    case CEL_K_LIST:
        /* cel-go's messages. */
        if (!list_index(k, &i)) {
            if (k.kind == CEL_K_DOUBLE) {
                char d[40];
                cel_format_double(k.u.d, d, sizeof d);
                return cel_err(c, "unsupported index value %s in list", d);
            }
            return cel_err(c, "unsupported index type '%s' in list",
                           cel_kind_name((cel_kind)k.kind));
        }
        if (i < 0 || (uint64_t)i >= x.u.list->n)
            return cel_err(c, "index '%lld' out of range in list size '%zu'", (long long)i,
                           x.u.list->n);
        return x.u.list->v[i];
    case CEL_K_MAP:
        if (k.kind != CEL_K_STRING && k.kind != CEL_K_INT && k.kind != CEL_K_UINT &&
            k.kind != CEL_K_BOOL && k.kind != CEL_K_DOUBLE)
            return cel_err(c, "unsupported key type");
        if (cel_map_find(x.u.map, k, &out))
            return out;
        if (x.u.map->flags & CEL_MAP_MISSING_EMPTY)
            return empty_map();
        return no_such_key(c, k);
    case CEL_K_OBJECT:
        if (k.kind == CEL_K_STRING)
            return select_str(c, x, k, 0);
        return cel_error_value(&cel_e_no_overload);
    case CEL_K_OPTIONAL:
        if (!x.u.opt)
            return x;
        out = *x.u.opt;
        if (out.kind == CEL_K_MAP) {
            cel_value f;
            return cel_map_find(out.u.map, k, &f) ? cel_optional_new(c, &f)
                                                  : cel_optional_new(c, NULL);
        }
        if (out.kind == CEL_K_LIST && list_index(k, &i) &&
            (i < 0 || (uint64_t)i >= out.u.list->n))
            return cel_optional_new(c, NULL);
        out = index_value(c, out, k);
        return out.kind == CEL_K_ERROR ? out : cel_optional_new(c, &out);
    default:
        return cel_error_value(&cel_e_no_overload);
    }
}

static cel_value has_field(cel_ctx *c, cel_value x, cel_value k)
{
    cel_value out;
    switch (x.kind) {
    case CEL_K_MAP:
        if (x.u.map->flags & CEL_MAP_MISSING_EMPTY)
            return cel_bool(1);
        return cel_bool(cel_map_find(x.u.map, k, &out));
    case CEL_K_OBJECT:
        if (object_field(x.u.obj, k.u.s, k.n, &out))
            return cel_bool(1);
        return cel_err(c, "no such field: %.*s", (int)k.n, k.u.s);
    case CEL_K_ERROR: return x;
    case CEL_K_OPTIONAL:
        if (!x.u.opt)
            return cel_bool(0);
        return has_field(c, *x.u.opt, k);
    default:
        return cel_err(c, "invalid type for field selection");
    }
}

/* x.?f and x[?k]. */
static cel_value opt_index(cel_ctx *c, cel_value x, cel_value k)
{
    cel_value out;
    int64_t i;
    if (x.kind == CEL_K_ERROR)
        return x;
    if (k.kind == CEL_K_ERROR)
        return k;
    if (x.kind == CEL_K_OPTIONAL) {
        if (!x.u.opt)
            return x;
        x = *x.u.opt;
    }
    switch (x.kind) {
    case CEL_K_MAP:
        if (cel_map_find(x.u.map, k, &out))
            return cel_optional_new(c, &out);
        if (x.u.map->flags & CEL_MAP_MISSING_EMPTY) {
            out = empty_map();
            return cel_optional_new(c, &out);
        }
        return cel_optional_new(c, NULL);
    case CEL_K_LIST:
        if (!list_index(k, &i))
            return cel_error_value(&cel_e_no_overload);
        if (i < 0 || (uint64_t)i >= x.u.list->n)
            return cel_optional_new(c, NULL);
        return cel_optional_new(c, &x.u.list->v[i]);
    case CEL_K_OBJECT:
        if (k.kind == CEL_K_STRING && object_field(x.u.obj, k.u.s, k.n, &out))
            return cel_optional_new(c, &out);
        return cel_optional_new(c, NULL);
    default:
        return cel_error_value(&cel_e_no_overload);
    }
}

/* ---- operators ---------------------------------------------------------------- */

static uint64_t cmp_cost(cel_value a, cel_value b)
{
    if ((a.kind == CEL_K_STRING || a.kind == CEL_K_BYTES || a.kind == CEL_K_LIST ||
         a.kind == CEL_K_MAP) ||
        (b.kind == CEL_K_STRING || b.kind == CEL_K_BYTES || b.kind == CEL_K_LIST ||
         b.kind == CEL_K_MAP)) {
        uint64_t x = cel_value_size(a), y = cel_value_size(b);
        return cel_tenth(x < y ? x : y);
    }
    return 1;
}

static cel_value op_equal(cel_value a, cel_value b, int ne)
{
    int r;
    if (a.kind == CEL_K_ERROR)
        return a;
    if (b.kind == CEL_K_ERROR)
        return b;
    r = cel_value_equal(a, b);
    if (r < 0)
        return cel_error_value(&cel_e_no_overload);
    return cel_bool(ne ? !r : r);
}

static cel_value op_order(cel_ctx *c, cel_value *args, int32_t fb, int which)
{
    int cmp;
    if (args[0].kind == CEL_K_ERROR)
        return args[0];
    if (args[1].kind == CEL_K_ERROR)
        return args[1];
    if (cel_value_compare(args[0], args[1], &cmp) < 0)
        return fallback(c, fb, args);
    c->cost += cmp_cost(args[0], args[1]);
    if (cmp == 2)
        return cel_bool(0);
    switch (which) {
    case 0: return cel_bool(cmp < 0);
    case 1: return cel_bool(cmp <= 0);
    case 2: return cel_bool(cmp > 0);
    default: return cel_bool(cmp >= 0);
    }
}

static cel_value concat(cel_ctx *c, cel_value a, cel_value b)
{
    char *p;
    uint64_t cost = cel_tenth(cel_value_size(a) + cel_value_size(b));
    c->cost += cost;
    if (c->cost > c->limit)
        return cel_error_value(&e_cost);
    if ((uint64_t)a.n + b.n > UINT32_MAX)
        return cel_error_value(&e_memlimit);
    p = cel_alloc(c, (size_t)a.n + b.n + 1);
    if (!p)
        return nomem(c);
    if (a.n)
        memcpy(p, a.u.s, a.n);
    if (b.n)
        memcpy(p + a.n, b.u.s, b.n);
    p[a.n + b.n] = 0;
    a.u.s = p;
    a.n += b.n;
    a.flags = 0;
    return a;
}

static cel_value list_concat(cel_ctx *c, cel_value a, cel_value b)
{
    cel_value *v, r;
    size_t na = a.u.list->n, nb = b.u.list->n;
    if (!nb)
        return a;
    if (!na)
        return b;
    r = cel_list_new(c, na + nb, &v);
    if (r.kind == CEL_K_ERROR)
        return r;
    memcpy(v, a.u.list->v, na * sizeof *v);
    memcpy(v + na, b.u.list->v, nb * sizeof *v);
    return r;
}

static cel_value op_add(cel_ctx *c, cel_value *args, int32_t fb)
{
    cel_value a = args[0], b = args[1];
    int64_t i;
    uint64_t u;
    if (a.kind == CEL_K_ERROR) return a;
    if (b.kind == CEL_K_ERROR) return b;
    switch (a.kind * 32 + b.kind) {
    case CEL_K_INT * 32 + CEL_K_INT:
        c->cost++;
        if (__builtin_add_overflow(a.u.i, b.u.i, &i)) return cel_error_value(&cel_e_overflow);
        return cel_int(i);
    case CEL_K_UINT * 32 + CEL_K_UINT:
        c->cost++;
        if (__builtin_add_overflow(a.u.u, b.u.u, &u)) return cel_error_value(&cel_e_overflow);
        return cel_uint(u);
    case CEL_K_DOUBLE * 32 + CEL_K_DOUBLE: c->cost++; return cel_double(a.u.d + b.u.d);
    case CEL_K_STRING * 32 + CEL_K_STRING:
    case CEL_K_BYTES * 32 + CEL_K_BYTES: return concat(c, a, b);
    case CEL_K_LIST * 32 + CEL_K_LIST: c->cost++; return list_concat(c, a, b);
    default: return fallback(c, fb, args);
    }
}

static cel_value op_sub(cel_ctx *c, cel_value *args, int32_t fb)
{
    cel_value a = args[0], b = args[1];
    int64_t i;
    uint64_t u;
    if (a.kind == CEL_K_ERROR) return a;
    if (b.kind == CEL_K_ERROR) return b;
    c->cost++;
    switch (a.kind * 32 + b.kind) {
    case CEL_K_INT * 32 + CEL_K_INT:
        if (__builtin_sub_overflow(a.u.i, b.u.i, &i)) return cel_error_value(&cel_e_overflow);
        return cel_int(i);
    case CEL_K_UINT * 32 + CEL_K_UINT:
        if (__builtin_sub_overflow(a.u.u, b.u.u, &u)) return cel_error_value(&cel_e_overflow);
        return cel_uint(u);
    case CEL_K_DOUBLE * 32 + CEL_K_DOUBLE: return cel_double(a.u.d - b.u.d);
    default: c->cost--; return fallback(c, fb, args);
    }
}

static cel_value op_muldiv(cel_ctx *c, cel_value *args, int32_t fb, int op)
{
    cel_value a = args[0], b = args[1];
    int64_t i;
    uint64_t u;
    if (a.kind == CEL_K_ERROR) return a;
    if (b.kind == CEL_K_ERROR) return b;
    c->cost++;
    if (a.kind == CEL_K_INT && b.kind == CEL_K_INT) {
        if (op == 0) {
            if (__builtin_mul_overflow(a.u.i, b.u.i, &i)) return cel_error_value(&cel_e_overflow);
            return cel_int(i);
        }
        if (b.u.i == 0) return cel_error_value(op == 1 ? &cel_e_div_zero : &cel_e_mod_zero);
        if (a.u.i == INT64_MIN && b.u.i == -1) return cel_error_value(&cel_e_overflow);
        return cel_int(op == 1 ? a.u.i / b.u.i : a.u.i % b.u.i);
    }
    if (a.kind == CEL_K_UINT && b.kind == CEL_K_UINT) {
        if (op == 0) {
            if (__builtin_mul_overflow(a.u.u, b.u.u, &u)) return cel_error_value(&cel_e_overflow);
            return cel_uint(u);
        }
        if (b.u.u == 0) return cel_error_value(op == 1 ? &cel_e_div_zero : &cel_e_mod_zero);
        return cel_uint(op == 1 ? a.u.u / b.u.u : a.u.u % b.u.u);
    }
    if (a.kind == CEL_K_DOUBLE && b.kind == CEL_K_DOUBLE && op < 2)
        return cel_double(op == 0 ? a.u.d * b.u.d : a.u.d / b.u.d);
    c->cost--;
    return fallback(c, fb, args);
}

static cel_value op_in(cel_ctx *c, cel_value *args, int32_t fb)
{
    cel_value x = args[0], col = args[1], out;
    if (x.kind == CEL_K_ERROR) return x;
    if (col.kind == CEL_K_ERROR) return col;
    if (col.kind == CEL_K_LIST) {
        c->cost += col.u.list->n;
        for (size_t i = 0; i < col.u.list->n; i++)
            if (cel_value_equal(x, col.u.list->v[i]) == 1)
                return cel_bool(1);
        return cel_bool(0);
    }
    if (col.kind == CEL_K_MAP) {
        c->cost++;
        if (x.kind != CEL_K_STRING && x.kind != CEL_K_INT && x.kind != CEL_K_UINT &&
            x.kind != CEL_K_BOOL && x.kind != CEL_K_DOUBLE)
            return cel_bool(0);
        return cel_bool(cel_map_find(col.u.map, x, &out));
    }
    return fallback(c, fb, args);
}

/* a && b after a was not false; b is on top. */
static inline cel_value op_and(cel_value a, cel_value b, int is_and)
{
    int absorb = !is_and; /* the value that decides: false for &&, true for || */
    if (b.kind == CEL_K_BOOL && b.u.b == absorb)
        return b;
    if (a.kind == CEL_K_BOOL) {
        if (b.kind == CEL_K_BOOL || b.kind == CEL_K_ERROR)
            return b;
        return cel_error_value(&cel_e_no_overload);
    }
    if (a.kind == CEL_K_ERROR)
        return a;
    return b.kind == CEL_K_ERROR ? b : cel_error_value(&cel_e_no_overload);
}

/* ---- aggregates ------------------------------------------------------------------ */

static cel_value make_list(cel_ctx *c, cel_value *items, size_t n, int32_t flags)
{
    cel_value *v, r;
    const uint8_t *f = flags >= 0 ? (const uint8_t *)c->prog->consts[flags].u.s : NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i].kind == CEL_K_ERROR)
            return items[i];
        if (f && f[i] && items[i].kind != CEL_K_OPTIONAL)
            return cel_error_value(&e_opt_elem);
    }
    r = cel_list_new(c, n, &v);
    if (r.kind == CEL_K_ERROR)
        return r;
    for (size_t i = 0; i < n; i++) {
        if (f && f[i]) {
            if (items[i].u.opt)
                v[m++] = *items[i].u.opt;
        } else {
            v[m++] = items[i];
        }
    }
    ((cel_list *)r.u.list)->n = m;
    return r;
}

static int valid_key(cel_value k)
{
    return k.kind == CEL_K_STRING || k.kind == CEL_K_INT || k.kind == CEL_K_UINT ||
           k.kind == CEL_K_BOOL;
}

static cel_value make_map(cel_ctx *c, cel_value *kv, size_t n, int32_t flags)
{
    cel_map_entry *e;
    cel_value r, dummy;
    const uint8_t *f = flags >= 0 ? (const uint8_t *)c->prog->consts[flags].u.s : NULL;
    for (size_t i = 0; i < 2 * n; i++)
        if (kv[i].kind == CEL_K_ERROR)
            return kv[i];
    r = cel_map_new(c, n, &e);
    if (r.kind == CEL_K_ERROR)
        return r;
    cel_map *m = (cel_map *)r.u.map;
    m->n = 0;
    for (size_t i = 0; i < n; i++) {
        cel_value k = kv[2 * i], v = kv[2 * i + 1];
        if (!valid_key(k))
            return cel_err(c, "unsupported key type: %s", cel_kind_name((cel_kind)k.kind));
        if (f && f[i]) {
            if (v.kind != CEL_K_OPTIONAL)
                return cel_error_value(&e_opt_elem);
            if (!v.u.opt)
                continue;
            v = *v.u.opt;
        }
        if (cel_map_find(m, k, &dummy))
            return cel_err(c, "Failed with repeated key");
        cel_map_entry_set(&e[m->n++], k, v);
    }
    return r;
}

/* Growable list used as a map/filter accumulator; only the VM sees it
 * mutable (the accumulator name is not reachable from user code). */
typedef struct list_builder {
    cel_list l;
    size_t cap;
} list_builder;

static cel_value builder_new(cel_ctx *c)
{
    list_builder *b = cel_alloc(c, sizeof *b);
    if (!b)
        return nomem(c);
    memset(b, 0, sizeof *b);
    return cel_list_value(&b->l);
}

static cel_value builder_append(cel_ctx *c, cel_value acc, cel_value item)
{
    list_builder *b = (list_builder *)acc.u.list;
    if (b->l.n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 8;
        cel_value *nv = cel_alloc(c, ncap * sizeof *nv);
        if (!nv)
            return nomem(c);
        if (b->l.n)
            memcpy(nv, b->l.v, b->l.n * sizeof *nv);
        b->l.v = nv;
        b->cap = ncap;
    }
    ((cel_value *)b->l.v)[b->l.n++] = item;
    return acc;
}

typedef struct map_builder {
    cel_map m;
    size_t cap;
} map_builder;

static cel_value mbuilder_new(cel_ctx *c)
{
    map_builder *b = cel_alloc(c, sizeof *b);
    if (!b)
        return nomem(c);
    memset(b, 0, sizeof *b);
    return cel_map_value(&b->m);
}

static cel_value mbuilder_insert(cel_ctx *c, cel_value acc, cel_value k, cel_value v)
{
    map_builder *b = (map_builder *)acc.u.map;
    cel_value dummy;
    if (cel_map_find(&b->m, k, &dummy))
        return cel_err(c, "insert failed: key already exists");
    if (b->m.n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 8;
        cel_map_entry *ne = cel_alloc(c, ncap * sizeof *ne);
        if (!ne)
            return nomem(c);
        if (b->m.n)
            memcpy(ne, b->m.e, b->m.n * sizeof *ne);
        b->m.e = ne;
        b->cap = ncap;
    }
    cel_map_entry_set((cel_map_entry *)&b->m.e[b->m.n++], k, v);
    return acc;
}

/* ---- the interpreter ------------------------------------------------------------- */

static dra_err reserve(cel_ctx *c, const dra_cel_program *p)
{
    size_t need_stack = (size_t)p->max_stack, need_locals = (size_t)p->nlocals + 1;
    if (need_stack > c->stack_cap &&
        dra_grow(c->mem, (void **)&c->stack, &c->stack_cap, need_stack, sizeof *c->stack))
        return DRA_ENOMEM;
    if (need_locals > c->locals_cap &&
        dra_grow(c->mem, (void **)&c->locals, &c->locals_cap, need_locals, sizeof *c->locals))
        return DRA_ENOMEM;
    return DRA_OK;
}

/* cel-go's Go type names, as its runtime errors print them. */
static const char *go_type_name(cel_value v)
{
    switch (v.kind) {
    case CEL_K_NULL: return "types.Null";
    case CEL_K_BOOL: return "types.Bool";
    case CEL_K_INT: return "types.Int";
    case CEL_K_UINT: return "types.Uint";
    case CEL_K_DOUBLE: return "types.Double";
    case CEL_K_STRING: return "types.String";
    case CEL_K_BYTES: return "types.Bytes";
    case CEL_K_TYPE: return "*types.Type";
    case CEL_K_DURATION: return "types.Duration";
    case CEL_K_TIMESTAMP: return "types.Timestamp";
    case CEL_K_OPTIONAL: return "*types.Optional";
    case CEL_K_QUANTITY: return "cel.Quantity";
    case CEL_K_SEMVER: return "cel.Semver";
    default: return cel_kind_name((cel_kind)v.kind);
    }
}

static cel_value iter_init(cel_ctx *c, cel_value r, cel_value *loc)
{
    if (r.kind == CEL_K_ERROR)
        return r;
    if (r.kind != CEL_K_LIST && r.kind != CEL_K_MAP)
        return cel_err(c, "got '%s', expected iterable type", go_type_name(r));
    loc[0] = r;
    loc[1] = cel_int(0);
    return cel_null();
}

/* Next element into loc[2] (and loc[3]); 0 when done. */
static inline int iter_next(cel_value *loc, int two)
{
    uint64_t i = (uint64_t)loc[1].u.i;
    if (loc[0].kind == CEL_K_LIST) {
        const cel_list *l = loc[0].u.list;
        if (i >= l->n)
            return 0;
        if (two) {
            loc[2] = cel_int((int64_t)i);
            loc[3] = l->v[i];
        } else {
            loc[2] = l->v[i];
        }
    } else {
        const cel_map *m = loc[0].u.map;
        if (i >= m->n)
            return 0;
        loc[2] = m->e[i].k;
        loc[3] = m->e[i].v;
    }
    loc[1].u.i++;
    return 1;
}

/* device.<field>['<const a>'].<const b> of the device in vars[0]: field
 * y, or the capacity for DEV_QCMP (whose y is a cost). */
static inline const cel_value *dev_value(const dra_cel_program *p, const cel_insn *in,
                                         const cel_value *vars)
{
    return cel_dev_entry(p, vars[0].u.obj->fields, in->op == CEL_OP_DEV_QCMP ? 2 : in->y, in->a,
                         in->b);
}

/* DEV_MATCH's call on the device value |v|: what call_site gives for
 * matches (the string overload) and charges to c->cost. */
static cel_value dev_match(cel_ctx *c, const dra_cel_program *p, const cel_insn *in,
                           const cel_value *v)
{
    const cel_value *pat = &p->consts[in->c];
    const cel_fixre *fix = p->fixre[in->c];
    const cel_regex *re;
    cel_value err = cel_null();
    int r;
    if (v->kind != CEL_K_STRING) { /* no overload fits */
        c->cost += 1;
        return cel_error_value(&cel_e_no_overload);
    }
    c->cost += cel_tenth(1 + cel_value_size(*v)) * ((cel_value_size(*pat) + 3) / 4);
    if (fix)
        return cel_bool(cel_fixre_match(fix, v->u.s, v->n));
    if (!(re = cel_regex_get(c, pat->u.s, pat->n, &err)))
        return err;
    r = cel_regex_matches(c, re, v->u.s, v->n, &err);
    return r < 0 ? err : cel_bool(r);
}

/* One device comparison term of a conjunction program: 1, 0, or -1
 * with *err set. */
static int dev_cmp(cel_ctx *c, const dra_cel_program *p, const cel_insn *in,
                   const cel_value *vars, uint64_t *cost, cel_value *err)
{
    const cel_value *k = p->consts, *v;
    if (in->op == CEL_OP_DEV_MATCH) {
        cel_value r;
        *cost += 4;
        if (!(v = dev_value(p, in, vars))) {
            *err = no_such_key(c, k[in->b]);
            return -1;
        }
        if (v->kind == CEL_K_STRING && cel_value_size(*v) > CEL_DRA_EST_STRLEN)
            return -2; /* its cost may pass the limit: cel_vm_run's */
        c->cost = *cost;
        r = dev_match(c, p, in, v);
        *cost = c->cost;
        if (r.kind == CEL_K_BOOL)
            return r.u.b;
        *err = r;
        return -1;
    }
    if (in->op == CEL_OP_DEV_FIELD_EQ) {
        v = &vars[0].u.obj->fields[in->a];
        *cost += 2;
    } else {
        v = dev_value(p, in, vars);
        *cost += 4;
        if (!v) {
            *err = no_such_key(c, k[in->b]);
            /* The comparison is charged for the error too, as the
             * generic instructions do (compareTo is not). */
            if (in->op == CEL_OP_DEV_ATTR_EQ)
                *cost += cmp_cost(*err, k[in->c]);
            else if (in->op == CEL_OP_DEV_QCMP)
                *cost += (in->x & CEL_QCMP_EQ_ON_ERROR) != 0;
            return -1;
        }
        if (in->op == CEL_OP_DEV_QCMP) {
            if (v->kind != CEL_K_QUANTITY) {
                *cost += 1 + ((in->x & CEL_QCMP_EQ_ON_ERROR) != 0);
                *err = cel_error_value(&cel_e_no_overload);
                return -1;
            }
            *cost += in->y;
            return cel_qcmp_bit(p, in, v);
        }
    }
    if (v->kind == CEL_K_STRING) {
        uint64_t x = (v->flags & CEL_VF_CPLEN) ? v->pad : cel_value_size(*v), y = k[in->c].pad;
        *cost += cel_tenth(x < y ? x : y);
        return (v->n == k[in->c].n && cel_bytes_eq(v->u.s, k[in->c].u.s, v->n)) ^ in->x;
    }
    *cost += cmp_cost(*v, k[in->c]);
    cel_value r = op_equal(*v, k[in->c], in->x);
    if (r.kind == CEL_K_BOOL)
        return r.u.b;
    *err = r;
    return -1;
}

int cel_vm_conj(cel_ctx *c, const dra_cel_program *p, const cel_value *vars, cel_value *err)
{
    uint64_t cost = 0;
    int n = p->conj_terms, have_err = 0;
    if (c->scratch.used)
        dra_arena_reset(&c->scratch);
    c->small_used = 0;
    c->oom = 0;
    /* false wins; otherwise the first error; otherwise true. */
    for (int i = 0; i < n; i++) {
        cel_value e;
        int r = dev_cmp(c, p, cel_conj_term(p->code, i), vars, &cost, &e);
        if (r == -2)
            return -2;
        if (r == 0) {
            c->last_cost = cost;
            return 0;
        }
        if (r < 0 && !have_err) {
            have_err = 1;
            *err = e;
        }
    }
    c->last_cost = cost;
    return have_err ? -1 : 1;
}

/* 1 when the only overload of |cs| (two arguments) takes |a| and every
 * element of |l| as they are, as call_site would find. */
static int fits_one(const cel_callsite *cs, cel_value a, const cel_list *l)
{
    int8_t w0 = cs->n == 1 ? cs->kinds[0][0] : -1, w1 = cs->n == 1 ? cs->kinds[0][1] : -1;
    if (w0 < 0 || w1 < 0 || w0 == CEL_K_OPAQUE || w1 == CEL_K_OPAQUE || a.kind != (uint8_t)w0)
        return 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].kind != (uint8_t)w1)
            return 0;
    return 1;
}

/* ANY_DEV: the exists/all loop whose head (ANY_NEXT) is at in + y, over
 * the constant list c, with the predicate INV.f(x): INV the device value
 * (field EXT.c)[a].b, or its EXT.b method; f call site EXT.a. Charges
 * and checks what ANY_NEXT, the (hoisted) INV code and ANY_CALL charge
 * and check, in the same order, so results, errors and the point where
 * the cost limit stops are those of the generic loop. 1: done, the
 * accumulator stored; 0: the device value is missing, nothing done, run
 * the generic loop; -1: over the cost limit (c->cost). */
static CEL_NOINLINE int dev_loop(cel_ctx *c, const dra_cel_program *p, const cel_insn *in,
                                 const cel_value *vars, cel_value *accu_out)
{
    const cel_insn *ext = in + 1, *head = in + in->y;
    const cel_list *l = p->consts[in->c].u.list;
    const cel_callsite *fcs = &p->calls[ext->a], *ccs = ext->b >= 0 ? &p->calls[ext->b] : NULL;
    const cel_value *v = cel_dev_entry(p, vars[0].u.obj->fields, ext->c, in->a, in->b);
    uint64_t cost = c->cost, limit = c->limit, inv_cost = 4;
    int all = head->y, direct = -1;
    cel_value accu = cel_bool(all), inv;
    if (!v)
        return 0;
    inv = *v;
    if (ext->x && inv.kind == CEL_K_STRING) {
        int b, done = cel_dev_str_loop(p->dsk[ext->y], inv, limit, &c->cost, &b);
        if (done > 0)
            *accu_out = cel_bool(b);
        if (done)
            return done;
    }
    for (size_t i = 0; i < l->n && cel_any_goes_on(accu, all, &cost); i++) {
        cel_value r, args[2];
        if (i == 0) {
            uint64_t before = cost;
            cost += 4; /* DEV_ATTR */
            if (ccs) {
                args[0] = inv;
                args[1] = cel_null(); /* not read: a method of no arguments */
                c->cost = cost;
                inv = call_site(c, ccs, args);
                cost = c->cost;
                if (cost > limit)
                    return -1;
            }
            inv_cost = cost - before;
        } else {
            /* HOIST_GET's cached value, or DEV_ATTR again */
            cost += inv_cost;
            if (ccs && cost > limit) {
                c->cost = cost;
                return -1;
            }
        }
        cost += op_cost[CEL_OP_ANY_CALL];
        args[0] = inv;
        args[1] = l->v[i];
        if (direct < 0) /* once: does f's only overload take these kinds? */
            direct = fits_one(fcs, inv, l);
        if (direct) {
            r = fcs->ovs[0]->fn(c, args, 2);
            cost += fcs->ovs[0]->cost ? fcs->ovs[0]->cost(args, 2, r) : 1;
        } else {
            c->cost = cost;
            r = call_site(c, fcs, args);
            cost = c->cost;
        }
        if (cost > limit) {
            c->cost = cost;
            return -1;
        }
        /* bool with bool in place: through op_and's returned value it
         * costs (d) ~6% (callgrind) */
        if (r.kind == CEL_K_BOOL && accu.kind == CEL_K_BOOL)
            accu.u.b = all ? accu.u.b && r.u.b : accu.u.b || r.u.b;
        else
            accu = op_and(accu, r, all);
    }
    *accu_out = accu;
    c->cost = cost;
    return 1;
}

/* cel_vm_dev_loop's result from dev_loop's |done| (not 0), the
 * accumulator and the cost so far, with the result's LOCAL and RET. */
static int dev_loop_result(cel_ctx *c, const dra_cel_program *p, int done, cel_value accu,
                           uint64_t cost, cel_value *out, dra_err *rc)
{
    cost += done > 0 ? op_cost[CEL_OP_LOCAL] : 0;
    c->last_cost = cost;
    if (done < 0 || cost > p->cost_limit) {
        *rc = DRA_ECOST;
        *out = cel_error_value(&e_cost);
        return 1;
    }
    *rc = c->oom == 1 ? DRA_ENOMEM : DRA_OK;
    *out = accu;
    return 1;
}

int cel_vm_dev_loop(cel_ctx *c, const dra_cel_program *p, const cel_value *vars, cel_value *out,
                    dra_err *rc)
{
    cel_value accu;
    int done;
    uint64_t cost = 0;
    int b;
    /* The string kernel needs no context: nothing to reset. */
    done = cel_dev_kernel(p, vars[0].u.obj->fields, &cost, &b);
    if (done) {
        c->oom = 0;
        return dev_loop_result(c, p, done, cel_bool(b), cost, out, rc);
    }
    if (c->scratch.used)
        dra_arena_reset(&c->scratch);
    c->small_used = 0;
    c->prog = p;
    c->vars = vars;
    c->oom = 0;
    c->limit = p->cost_limit;
    c->cost = 0;
    done = dev_loop(c, p, p->code, vars, &accu);
    return done ? dev_loop_result(c, p, done, accu, c->cost, out, rc) : 0;
}

cel_value cel_vm_run(cel_ctx *c, const dra_cel_program *p, const cel_value *vars, dra_err *rc)
{
    const cel_insn *code = p->code, *in;
    const cel_value *k = p->consts;
    cel_value *sp, *loc, r;
    uint64_t cost = 0, limit = p->cost_limit;
    if (c->scratch.used)
        dra_arena_reset(&c->scratch);
    c->small_used = 0;
    if (reserve(c, p)) {
        *rc = DRA_ENOMEM;
        return cel_error_value(&cel_e_nomem);
    }
    c->prog = p;
    c->vars = vars;
    c->oom = 0;
    c->limit = limit;
    sp = c->stack - 1;
    loc = c->locals;
    in = code;
    for (;;) {
        cost += op_cost[in->op];
        switch ((cel_op)in->op) {
        /* CONST a: push constant a. */
        case CEL_OP_CONST: *++sp = k[in->a]; break;
        /* VAR a: push activation variable a. */
        case CEL_OP_VAR: *++sp = vars[in->a]; break;
        /* LOCAL a / LOCAL_RAW a: push local slot a. */
        case CEL_OP_LOCAL:
        case CEL_OP_LOCAL_RAW: *++sp = loc[in->a]; break;
        /* STORE a: pop into local slot a. */
        case CEL_OP_STORE: loc[in->a] = *sp--; break;
        /* POP: drop the top. */
        case CEL_OP_POP: sp--; break;
        /* DEV_FIELD a: field a of the device object (variable 0). */
        case CEL_OP_DEV_FIELD: *++sp = vars[0].u.obj->fields[in->a]; break;
        /* DEV_DOMAIN a b: device field b (attributes or capacity) indexed
         * by the constant domain a; an absent domain is an empty map. */
        case CEL_OP_DEV_DOMAIN: {
            const cel_value *m = cel_map_get_str(vars[0].u.obj->fields[in->b].u.map, k[in->a].u.s,
                                                 k[in->a].n, p->hashes[in->a]);
            *++sp = m ? *m : empty_map();
            break;
        }
        /* DEV_ATTR a b y: device field y, domain constant a, id constant b:
         * device.attributes['dom'].id in one step. */
        case CEL_OP_DEV_ATTR: {
            const cel_value *v = dev_value(p, in, vars);
            *++sp = v ? *v : no_such_key(c, k[in->b]);
            break;
        }
        /* DEV_QCMP a b c x y: device.capacity[a].b compared with the
         * quantity constant c; the result is bit sign+1 of x, and y more
         * units are charged on success (see comp_capacity_compare). */
        case CEL_OP_DEV_QCMP: {
            const cel_value *v = dev_value(p, in, vars);
            int ok = v && v->kind == CEL_K_QUANTITY;
            if (!v) {
                r = no_such_key(c, k[in->b]);
            } else {
                cost += 1; /* the call, or its "no such overload" */
                r = ok ? cel_bool(cel_qcmp_bit(p, in, v))
                       : cel_error_value(&cel_e_no_overload);
            }
            if (cost > limit) /* where the call checks */
                goto over;
            if (ok)
                cost += in->y - 1u; /* compareTo's int comparison */
            else if (in->x & CEL_QCMP_EQ_ON_ERROR)
                cost += 1; /* == / != charge for an error too */
            *++sp = r;
            break;
        }
        /* DEV_MATCH a b c y: device field y, domain constant a, id
         * constant b, .matches(pattern constant c): DEV_ATTR and the call
         * in one step, charged and checked as they are. */
        case CEL_OP_DEV_MATCH: {
            const cel_value *v = dev_value(p, in, vars);
            if (!v) {
                r = no_such_key(c, k[in->b]);
            } else {
                c->cost = cost;
                r = dev_match(c, p, in, v);
                cost = c->cost;
            }
            if (cost > limit) /* where the call checks */
                goto over;
            *++sp = r;
            break;
        }
        /* DEV_FIELD_EQ a c x: device field a == (x: !=) string constant c. */
        case CEL_OP_DEV_FIELD_EQ:
            r = vars[0].u.obj->fields[in->a];
            goto eq_const;
        /* DEV_ATTR_EQ a b y c x: DEV_ATTR then == (x: !=) constant c. */
        case CEL_OP_DEV_ATTR_EQ: {
            const cel_value *v = dev_value(p, in, vars);
            r = v ? *v : no_such_key(c, k[in->b]);
        eq_const:
            if (r.kind == CEL_K_STRING && k[in->c].kind == CEL_K_STRING) {
                uint64_t x = (r.flags & CEL_VF_CPLEN) ? r.pad : cel_value_size(r);
                uint64_t y = k[in->c].pad;
                int eq = r.n == k[in->c].n && cel_bytes_eq(r.u.s, k[in->c].u.s, r.n);
                cost += cel_tenth(x < y ? x : y);
                *++sp = cel_bool(eq ^ in->x);
            } else {
                cost += cmp_cost(r, k[in->c]);
                *++sp = op_equal(r, k[in->c], in->x);
            }
            break;
        }
        /* SELECT a: top.f with f = constant string a (hash precomputed). */
        case CEL_OP_SELECT: *sp = select_str(c, *sp, k[in->a], p->hashes[in->a]); break;
        /* HAS a: has(top.f). */
        case CEL_OP_HAS: *sp = has_field(c, *sp, k[in->a]); break;
        /* OPT_SELECT a: top.?f. */
        case CEL_OP_OPT_SELECT: *sp = opt_index(c, *sp, k[in->a]); break;
        /* INDEX: x[k] with k on top. */
        case CEL_OP_INDEX: sp--; *sp = index_value(c, sp[0], sp[1]); break;
        /* INDEX_CONST a: top[constant a]; string keys use the hash. */
        case CEL_OP_INDEX_CONST:
            if (k[in->a].kind == CEL_K_STRING && (sp->kind == CEL_K_MAP || sp->kind == CEL_K_OBJECT))
                *sp = select_str(c, *sp, k[in->a], p->hashes[in->a]);
            else
                *sp = index_value(c, *sp, k[in->a]);
            break;
        /* OPT_INDEX: x[?k]. */
        case CEL_OP_OPT_INDEX: sp--; *sp = opt_index(c, sp[0], sp[1]); break;
        /* EQ / NE: CEL equality of the top two. */
        case CEL_OP_EQ:
        case CEL_OP_NE:
            sp--;
            cost += cmp_cost(sp[0], sp[1]);
            *sp = op_equal(sp[0], sp[1], in->op == CEL_OP_NE);
            break;
        /* EQ_CONST a / NE_CONST a: compare the top with constant a. */
        case CEL_OP_EQ_CONST:
        case CEL_OP_NE_CONST:
            if (sp->kind == CEL_K_STRING && k[in->a].kind == CEL_K_STRING) {
                uint64_t x = (sp->flags & CEL_VF_CPLEN) ? sp->pad : cel_value_size(*sp);
                uint64_t y = (k[in->a].flags & CEL_VF_CPLEN) ? k[in->a].pad
                                                             : cel_value_size(k[in->a]);
                int eq = sp->n == k[in->a].n && cel_bytes_eq(sp->u.s, k[in->a].u.s, sp->n);
                cost += cel_tenth(x < y ? x : y);
                *sp = cel_bool(in->op == CEL_OP_EQ_CONST ? eq : !eq);
            } else {
                cost += cmp_cost(*sp, k[in->a]);
                *sp = op_equal(*sp, k[in->a], in->op == CEL_OP_NE_CONST);
            }
            break;
        /* LT LE GT GE a: ordering; a is the library fallback call site. */
        case CEL_OP_LT:
        case CEL_OP_LE:
        case CEL_OP_GT:
        case CEL_OP_GE:
            sp--;
            if (sp[0].kind == CEL_K_INT && sp[1].kind == CEL_K_INT) {
                /* int with int (`compareTo(...) > 0`) inline; cost 1 as
                 * op_order charges. */
                int cmp = (sp[0].u.i > sp[1].u.i) - (sp[0].u.i < sp[1].u.i);
                cost += 1;
                *sp = cel_bool(in->op == CEL_OP_LT   ? cmp < 0
                               : in->op == CEL_OP_LE ? cmp <= 0
                               : in->op == CEL_OP_GT ? cmp > 0
                                                     : cmp >= 0);
                break;
            }
            c->cost = cost;
            *sp = op_order(c, sp, in->a, in->op - CEL_OP_LT);
            cost = c->cost;
            break;
        /* ADD SUB MUL DIV MOD a: arithmetic, checked; a is the fallback. */
        case CEL_OP_ADD:
            sp--;
            c->cost = cost;
            *sp = op_add(c, sp, in->a);
            cost = c->cost;
            if (cost > limit)
                goto over;
            break;
        case CEL_OP_SUB:
            sp--;
            c->cost = cost;
            *sp = op_sub(c, sp, in->a);
            cost = c->cost;
            break;
        case CEL_OP_MUL:
        case CEL_OP_DIV:
        case CEL_OP_MOD:
            sp--;
            c->cost = cost;
            *sp = op_muldiv(c, sp, in->a, in->op - CEL_OP_MUL);
            cost = c->cost;
            break;
        /* NEG a: unary minus. */
        case CEL_OP_NEG:
            if (sp->kind == CEL_K_INT) {
                if (sp->u.i == INT64_MIN)
                    *sp = cel_error_value(&cel_e_overflow);
                else
                    sp->u.i = -sp->u.i;
            } else if (sp->kind == CEL_K_DOUBLE) {
                sp->u.d = -sp->u.d;
            } else if (sp->kind != CEL_K_ERROR) {
                c->cost = cost;
                *sp = fallback(c, in->a, sp);
                cost = c->cost - 1;
            }
            break;
        /* NOT: logical not of a bool. */
        case CEL_OP_NOT:
            if (sp->kind == CEL_K_BOOL)
                sp->u.b = !sp->u.b;
            else if (sp->kind != CEL_K_ERROR)
                *sp = cel_error_value(&cel_e_no_overload);
            break;
        /* IN a b: x in list/map; b > 0: x is string constant b-1, whose
         * hash is precomputed. */
        case CEL_OP_IN:
            sp--;
            if (in->b > 0 && sp[1].kind == CEL_K_MAP) {
                const cel_value *kv = &k[in->b - 1];
                cost++;
                *sp = cel_bool(cel_map_get_str(sp[1].u.map, kv->u.s, kv->n,
                                               p->hashes[in->b - 1]) != NULL);
                break;
            }
            c->cost = cost;
            *sp = op_in(c, sp, in->a);
            cost = c->cost;
            break;
        /* JMP a: jump; a backward jump is a loop edge, where cost is checked. */
        case CEL_OP_JMP:
            in = code + in->a;
            if (cost > limit)
                goto over;
            continue;
        /* JF_KEEP a / JT_KEEP a: short-circuit && / || keeping the top. */
        case CEL_OP_JF_KEEP:
            if (sp->kind == CEL_K_BOOL && !sp->u.b) {
                in = code + in->a;
                continue;
            }
            break;
        case CEL_OP_JT_KEEP:
            if (sp->kind == CEL_K_BOOL && sp->u.b) {
                in = code + in->a;
                continue;
            }
            break;
        /* AND / OR: combine with error absorption (commutative). */
        case CEL_OP_AND:
        case CEL_OP_OR:
            sp--;
            *sp = op_and(sp[0], sp[1], in->op == CEL_OP_AND);
            break;
        /* COND a b: pop the condition; false jumps to a; a non-bool pushes
         * an error and jumps to b (the end). */
        case CEL_OP_COND:
            r = *sp--;
            if (r.kind == CEL_K_BOOL) {
                if (!r.u.b) {
                    in = code + in->a;
                    continue;
                }
                break;
            }
            *++sp = r.kind == CEL_K_ERROR ? r : cel_error_value(&cel_e_no_overload);
            in = code + in->b;
            continue;
        /* NOT_STRICTLY_FALSE: true unless the top is false. */
        case CEL_OP_NOT_STRICTLY_FALSE:
            *sp = cel_bool(!(sp->kind == CEL_K_BOOL && !sp->u.b));
            break;
        /* CALL a x: call site a with x arguments. */
        case CEL_OP_CALL:
            sp -= in->x - 1;
            c->cost = cost;
            *sp = call_site(c, &p->calls[in->a], sp);
            cost = c->cost;
            if (cost > limit)
                goto over;
            break;
        /* LIST a b: a items into a list; b = optional-element flags. */
        case CEL_OP_LIST:
            sp -= in->a - 1;
            *sp = make_list(c, sp, (size_t)in->a, in->b);
            break;
        /* MAP a b: a key/value pairs into a map. */
        case CEL_OP_MAP:
            sp -= 2 * in->a - 1;
            *sp = make_map(c, sp, (size_t)in->a, in->b);
            break;
        /* ITER_INIT a b: pop the range into slots a, a+1; bad range: push
         * an error and jump to b. */
        case CEL_OP_ITER_INIT:
            r = iter_init(c, *sp--, loc + in->a);
            if (r.kind == CEL_K_ERROR) {
                *++sp = r;
                in = code + in->b;
                continue;
            }
            break;
        /* ITER_NEXT a b x: next element into slot a+2 (and a+3); done: b. */
        case CEL_OP_ITER_NEXT:
            if (!iter_next(loc + in->a, in->x == 2)) {
                in = code + in->b;
                continue;
            }
            break;
        /* LOOP_COND a: pop; leave the loop (to a) unless true. */
        case CEL_OP_LOOP_COND:
            r = *sp--;
            if (!(r.kind == CEL_K_BOOL && r.u.b)) {
                in = code + in->a;
                continue;
            }
            break;
        /* ANY_NEXT a b c x y: exists (y 0) / all (y 1) loop head:
         * ITER_NEXT a b x, then the loop condition on the accumulator in
         * slot c (cel_any_goes_on); leaving goes to b. */
        case CEL_OP_ANY_NEXT:
            if (!iter_next(loc + in->a, in->x == 2) || !cel_any_goes_on(loc[in->c], in->y, &cost)) {
                in = code + in->b;
                continue;
            }
            break;
        /* ANY_STEP a c y: accu (slot c) = accu || / && the popped
         * predicate, with error absorption; then JMP a. */
        case CEL_OP_ANY_STEP:
            loc[in->c] = op_and(loc[in->c], *sp--, in->y);
            in = code + in->a;
            if (cost > limit)
                goto over;
            continue;
        /* ANY_CALL a b c: the predicate INV.f(x) of the exists/all loop
         * whose ANY_NEXT is at a: x is local c, INV on the top; call site
         * b; then ANY_STEP. Charges LOCAL's 1 (base) and the call's.
         * When INV is the value cached by the HOIST_GET right after the
         * loop head, the next iterations run here, doing what ANY_NEXT,
         * HOIST_GET and this instruction do in that order, without the
         * dispatch; anything else (INV not cached yet or over the limit,
         * the loop ending) goes back to those instructions. */
        case CEL_OP_ANY_CALL: {
            const cel_insn *head = code + in->a, *hg = head + 1;
            const cel_value *hs = loc + hg->a;
            int inner = hg->op == CEL_OP_HOIST_GET && code + hg->b == in;
            for (;;) {
                sp[1] = loc[in->c];
                c->cost = cost;
                r = call_site(c, &p->calls[in->b], sp);
                cost = c->cost;
                if (cost > limit)
                    goto over;
                loc[head->c] = op_and(loc[head->c], r, head->y);
                sp--;
                if (!inner) {
                    in = head;
                    break;
                }
                if (!iter_next(loc + head->a, head->x == 2) ||
                    !cel_any_goes_on(loc[head->c], head->y, &cost)) {
                    in = code + head->b;
                    break;
                }
                if (!(hs[1].n && cost <= limit && hs[1].u.u <= limit - cost)) {
                    in = hg;
                    break;
                }
                cost += hs[1].u.u;
                *++sp = hs[0];
                cost += op_cost[CEL_OP_ANY_CALL];
            }
            continue;
        }
        /* ANY_DEV a b c y, EXT a b c: see dev_loop; done: on to the loop
         * head's exit; missing device value: the generic loop after EXT. */
        case CEL_OP_ANY_DEV: {
            int done;
            c->cost = cost;
            done = dev_loop(c, p, in, vars, &r);
            cost = c->cost;
            if (done < 0)
                goto over;
            if (done)
                loc[in[in->y].c] = r;
            in = done ? code + in[in->y].b : in + 2;
            continue;
        }
        /* LIST_BUILDER a: an empty appendable list in slot a. */
        case CEL_OP_LIST_BUILDER: loc[in->a] = builder_new(c); break;
        /* APPEND a: append the top to the builder in slot a; push it. */
        case CEL_OP_APPEND:
            if (loc[in->a].kind != CEL_K_ERROR)
                loc[in->a] = sp->kind == CEL_K_ERROR ? *sp : builder_append(c, loc[in->a], *sp);
            *sp = loc[in->a];
            break;
        case CEL_OP_MAP_BUILDER: loc[in->a] = mbuilder_new(c); break;
        /* MAP_INSERT a: insert key, value (top) into the map in slot a. */
        case CEL_OP_MAP_INSERT:
            sp--;
            if (loc[in->a].kind != CEL_K_ERROR) {
                if (sp[0].kind == CEL_K_ERROR || sp[1].kind == CEL_K_ERROR)
                    loc[in->a] = sp[0].kind == CEL_K_ERROR ? sp[0] : sp[1];
                else
                    loc[in->a] = mbuilder_insert(c, loc[in->a], sp[0], sp[1]);
            }
            *sp = loc[in->a];
            break;
        /* RET: the top is the result. */
        /* HOIST_RESET a b: forget the loop invariants cached in the slot
         * pairs a..b-1 (at each comprehension start). */
        case CEL_OP_HOIST_RESET:
            for (int32_t s = in->a; s < in->b; s += 2)
                loc[s + 1].n = 0;
            break;
        /* HOIST_GET a b: the loop invariant cached in slot a (its cost in
         * a+1): push it, charge its cost again, jump to b. Not cached yet,
         * or its cost would pass the limit (the uncached code then stops
         * where it always did): note the cost so far and compute it. */
        case CEL_OP_HOIST_GET:
            if (loc[in->a + 1].n && cost <= limit && loc[in->a + 1].u.u <= limit - cost) {
                cost += loc[in->a + 1].u.u;
                *++sp = loc[in->a];
                in = code + in->b;
                continue;
            }
            loc[in->a + 1].u.u = cost;
            break;
        /* HOIST_SET a: cache the top (kept) and its cost in slots a, a+1. */
        case CEL_OP_HOIST_SET:
            loc[in->a] = *sp;
            loc[in->a + 1].u.u = cost - loc[in->a + 1].u.u;
            loc[in->a + 1].n = 1;
            break;
        case CEL_OP_RET:
            c->last_cost = cost;
            if (cost > limit)
                goto over;
            *rc = c->oom == 1 ? DRA_ENOMEM : DRA_OK;
            return *sp;
        default:
            goto over;
        }
        in++;
    }
over:
    c->last_cost = cost;
    *rc = DRA_ECOST;
    return cel_error_value(&e_cost);
}
