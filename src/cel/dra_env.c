/*
 * dra_env.c: the Kubernetes DRA selector environment. The `device`
 * variable (kubernetes.DRADevice), the device activation prepared once
 * per device (attributes and capacities grouped by domain into maps with
 * hashed keys, so constant lookups are direct), and selector evaluation
 * with Kubernetes' result rules.
 */
#include <limits.h>
#include <stdio.h>

#include "vm.h"

static const char *const dev_field_names[] = {"driver", "attributes", "capacity",
                                              "allowMultipleAllocations"};
static const char *const dev_field_types[] = {
    "string", "map(string, map(string, dyn))",
    "map(string, map(string, kubernetes.Quantity))", "bool"};
static const cel_object_type dra_device_type = {"kubernetes.DRADevice", 4, dev_field_names,
                                                dev_field_types};

dra_err dra_cel_env_new_dra(const dra_mem *mem, const dra_cel_options *opts, dra_cel_env **out)
{
    dra_cel_env *env;
    const cel_type *t;
    dra_cel_options o = {0};
    dra_err rc;
    if (opts)
        o = *opts;
    /* Kubernetes' base environment always has homogeneous literals. */
    o.homogeneous_literals = 1;
    if (!o.strings_version)
        o.strings_version = 2;
    rc = cel_env_new_kind(mem, &o, CEL_ENV_DRA, &env);
    if (rc)
        return rc;
    rc = cel_env_add_object_type(env, &dra_device_type);
    if (!rc) {
        t = cel_env_find_type(env, dra_device_type.name, strlen(dra_device_type.name));
        env->device_type = t;
        rc = t ? cel_env_declare_type(env, "device", t) : DRA_ENOMEM;
    }
    if (rc) {
        dra_cel_env_free(env);
        return rc;
    }
    *out = env;
    return DRA_OK;
}

/* ---- prepared devices ------------------------------------------------------- */

/* What an evaluation reads first, fields, is one cache line: the struct
 * is placed on a 64-byte boundary (see dra_cel_device_prepare). The
 * maps follow it in the same block, sized exactly: the block is all a
 * prepared device holds (about 1 KiB for a GPU with 13 attributes). */
struct dra_cel_prepared {
    cel_value fields[4];
    cel_value var;
    cel_object obj;
    const dra_mem *mem;
    void *block; /* the one allocation, pd inside it */
};

/* One attribute or capacity name, split as the device map splits it:
 * at the first '/', a bare name in the driver's domain. |dom| numbers
 * the domains in order of first appearance; |dup| marks a name seen
 * before in its domain (the first wins). */
typedef struct dev_item {
    const char *dom, *id;
    size_t dlen, idlen;
    size_t d;
    int dup;
} dev_item;

/* Up to this many names are split on the stack; more (far beyond
 * Kubernetes' 32 per device) in a heap array freed at once. */
#define DEV_ITEMS_STACK 64

static cel_value str_value(const char *s, size_t len)
{
    return cel_with_cplen(cel_str(s, len));
}

static cel_value attr_value(const dra_cel_attr *a)
{
    cel_value v = {0};
    switch (a->kind) {
    case DRA_CEL_ATTR_INT: return cel_int(a->i);
    case DRA_CEL_ATTR_BOOL: return cel_bool(a->b);
    case DRA_CEL_ATTR_STRING: return str_value(a->s ? a->s : "", a->s ? strlen(a->s) : 0);
    case DRA_CEL_ATTR_VERSION:
        v.kind = CEL_K_SEMVER;
        v.u.sv = &a->version;
        return v;
    }
    return cel_null();
}

static const char *attr_name(const void *src, size_t i)
{
    return ((const dra_cel_attr *)src)[i].name;
}
static cel_value attr_val(const void *src, size_t i)
{
    return attr_value(&((const dra_cel_attr *)src)[i]);
}
static const char *cap_name(const void *src, size_t i)
{
    return ((const dra_cel_capacity *)src)[i].name;
}
static cel_value cap_val(const void *src, size_t i)
{
    cel_value v = {0};
    v.kind = CEL_K_QUANTITY;
    v.u.q = &((const dra_cel_capacity *)src)[i].value;
    return v;
}

/* One group of named values (the attributes, or the capacities). */
typedef struct dev_group {
    size_t n;
    const char *(*name_of)(const void *, size_t);
    cel_value (*value_of)(const void *, size_t);
    const void *src;
    dev_item *it;
    size_t ndom;
    size_t *count; /* per domain: distinct ids (it is sized n) */
} dev_group;

/* Splits every name and numbers the domains; O(n^2) over a device's few
 * names, no allocation. */
static void group_items(dev_group *g, const char *driver)
{
    g->ndom = 0;
    for (size_t i = 0; i < g->n; i++) {
        dev_item *x = &g->it[i];
        const char *name = g->name_of(g->src, i), *slash = strchr(name, '/');
        size_t j;
        x->dom = slash ? name : driver;
        x->dlen = slash ? (size_t)(slash - name) : strlen(driver);
        x->id = slash ? slash + 1 : name;
        x->idlen = strlen(x->id);
        x->dup = 0;
        for (j = 0; j < i; j++)
            if (g->it[j].dlen == x->dlen && !memcmp(g->it[j].dom, x->dom, x->dlen))
                break;
        x->d = j < i ? g->it[j].d : g->ndom++;
        for (; j < i && !x->dup; j++)
            x->dup = g->it[j].d == x->d && g->it[j].idlen == x->idlen &&
                     !memcmp(g->it[j].id, x->id, x->idlen);
        if (!x->dup)
            g->count[x->d]++;
    }
}

/* Bytes of the open-addressing index of an n-entry map (load at most
 * one half). Up to 8 entries the scan over stored hashes is as fast
 * (callgrind: the probe costs more on the bench's 5-attribute domain);
 * over 255 the index would not fit in bytes. */
static size_t index_bits(size_t n)
{
    unsigned bits = 1;
    if (n <= 8 || n > 255)
        return 0;
    while (((size_t)1 << bits) < 2 * n)
        bits++;
    return bits;
}

/* 16-byte steps, as the arena the maps used to come from placed them:
 * bench_cel's shapes run at their old speed with this layout. */
#define ALIGN16(x) (((x) + 15) & ~(size_t)15)

static size_t entries_bytes(size_t n)
{
    return ALIGN16(sizeof(cel_map) + n * sizeof(cel_map_entry));
}

static size_t map_bytes(size_t n)
{
    size_t ib = index_bits(n);
    return entries_bytes(n) + (ib ? ALIGN16((size_t)1 << ib) : 0);
}

static size_t group_bytes(const dev_group *g)
{
    size_t b = map_bytes(g->ndom);
    for (size_t d = 0; d < g->ndom; d++)
        b += map_bytes(g->count[d]);
    return b;
}

/* A map at |*p| with its n entries right after it (see cel_dev_map_get)
 * and its index after those; *p moves past it all. */
static cel_map *place_map(char **p, size_t n)
{
    cel_map *m = (cel_map *)(void *)*p;
    memset(m, 0, map_bytes(n));
    m->e = (const cel_map_entry *)(m + 1);
    *p += map_bytes(n);
    return m;
}

static void fill_index(cel_map *m)
{
    unsigned bits = (unsigned)index_bits(m->n);
    uint8_t *ix = (uint8_t *)m + entries_bytes(m->n);
    size_t mask = ((size_t)1 << bits) - 1;
    if (!bits)
        return;
    for (size_t i = 0; i < m->n; i++) {
        size_t j = (size_t)m->e[i].hash & mask;
        while (ix[j])
            j = (j + 1) & mask;
        ix[j] = (uint8_t)(i + 1);
    }
    m->ibits = bits;
    m->index = ix;
}

/* The two-level map of |g| at |*p|: the domains' map, then each domain's
 * map of its values. */
static cel_value build_group(char **p, const dev_group *g)
{
    cel_map *outer = place_map(p, g->ndom);
    cel_map_entry *oe = (cel_map_entry *)(outer + 1);
    for (size_t d = 0; d < g->ndom; d++) {
        cel_map *inner = place_map(p, g->count[d]);
        cel_map_entry *ie = (cel_map_entry *)(inner + 1);
        const dev_item *first = NULL;
        for (size_t i = 0; i < g->n; i++) {
            const dev_item *x = &g->it[i];
            if (x->d != d || x->dup)
                continue;
            if (!first)
                first = x;
            cel_map_entry_set(&ie[inner->n++], str_value(x->id, x->idlen),
                              g->value_of(g->src, i));
        }
        fill_index(inner);
        cel_map_entry_set(&oe[d], str_value(first->dom, first->dlen), cel_map_value(inner));
    }
    outer->n = g->ndom;
    outer->flags = CEL_MAP_MISSING_EMPTY;
    fill_index(outer);
    return cel_map_value(outer);
}

dra_err dra_cel_device_prepare(const dra_mem *mem, const dra_cel_device *dev,
                               dra_cel_prepared **out)
{
    const char *driver = dev->driver ? dev->driver : "";
    dev_item stack_items[DEV_ITEMS_STACK];
    size_t stack_count[DEV_ITEMS_STACK];
    size_t n = dev->nattrs + dev->ncaps, size;
    dev_item *items = stack_items;
    size_t *count = stack_count;
    dev_group g[2];
    dra_cel_prepared *pd;
    char *block, *p;
    *out = NULL;
    if (n > DEV_ITEMS_STACK) {
        items = dra_calloc(mem, n, sizeof *items);
        count = dra_calloc(mem, n, sizeof *count);
        if (!items || !count) {
            dra_free(mem, items);
            dra_free(mem, count);
            return DRA_ENOMEM;
        }
    }
    memset(count, 0, n * sizeof *count);
    g[0] = (dev_group){dev->nattrs, attr_name, attr_val, dev->attrs, items, 0, count};
    g[1] = (dev_group){dev->ncaps, cap_name, cap_val, dev->caps, items + dev->nattrs, 0,
                       count + dev->nattrs};
    group_items(&g[0], driver);
    group_items(&g[1], driver);
    /* The device on a 64-byte boundary (the allocator gives 16), then
     * the maps: what one evaluation reads is a few adjacent lines. */
    size = 48 + ((sizeof *pd + 15) & ~(size_t)15) + group_bytes(&g[0]) + group_bytes(&g[1]);
    block = dra_malloc(mem, size);
    if (block) {
        pd = (dra_cel_prepared *)(void *)(block + ((64 - ((uintptr_t)block & 63)) & 63));
        memset(pd, 0, sizeof *pd);
        p = (char *)pd + ((sizeof *pd + 15) & ~(size_t)15);
        pd->mem = mem;
        pd->block = block;
        pd->fields[0] = str_value(driver, strlen(driver));
        pd->fields[1] = build_group(&p, &g[0]);
        pd->fields[2] = build_group(&p, &g[1]);
        pd->fields[3] = cel_bool(dev->allow_multiple_allocations);
        pd->obj.type = &dra_device_type;
        pd->obj.fields = pd->fields;
        pd->var.kind = CEL_K_OBJECT;
        pd->var.u.obj = &pd->obj;
        *out = pd;
    }
    if (items != stack_items) {
        dra_free(mem, items);
        dra_free(mem, count);
    }
    return block ? DRA_OK : DRA_ENOMEM;
}

void dra_cel_prepared_free(dra_cel_prepared *pd)
{
    if (pd)
        dra_free(pd->mem, pd->block);
}

static CEL_NOINLINE dra_err eval_device(const dra_cel_program *p, dra_cel_vm *vm,
                                        const dra_cel_prepared *dev, int *result, dra_diag *d)
{
    dra_err rc;
    cel_value r;
    if (p->conj_terms) {
        /* Device comparisons only: inline, the full path on anything
         * unusual (see cel_cterm_fast). */
        const cel_cterm *t = p->cterms;
        uint64_t cost = 0;
        int b = -1;
        if (t) {
            const cel_cterm *end = t + p->conj_terms;
            do
                b = cel_cterm_fast(t, dev->fields, &cost);
            while (b > 0 && ++t < end);
        }
        if (b >= 0) {
            vm->c.last_cost = cost;
            *result = b;
            return DRA_OK;
        }
        b = cel_vm_conj(&vm->c, p, &dev->var, &r);
        if (b >= 0) {
            *result = b;
            return DRA_OK;
        }
        if (b == -2) /* a long string for a regex term: with the limit */
            r = cel_vm_run(&vm->c, p, &dev->var, &rc);
        else
            rc = vm->c.oom == 1 ? DRA_ENOMEM : DRA_OK;
    } else if (p->dev_loop_only) {
        /* The string kernel inline; the full path on anything unusual. */
        uint64_t cost = 0;
        int b;
        if (cel_dev_kernel(p, dev->fields, &cost, &b) > 0 &&
            cost + CEL_COST_LOCAL <= p->cost_limit) {
            vm->c.last_cost = cost + CEL_COST_LOCAL;
            *result = b;
            return DRA_OK;
        }
        if (!cel_vm_dev_loop(&vm->c, p, &dev->var, &r, &rc))
            r = cel_vm_run(&vm->c, p, &dev->var, &rc);
    } else {
        r = cel_vm_run(&vm->c, p, &dev->var, &rc);
    }
    if (r.kind == CEL_K_BOOL && !rc) {
        *result = r.u.b;
        return DRA_OK;
    }
    *result = 0;
    if (rc == DRA_ECOST) {
        dra_diag_add(d, "", 0, 0, "actual cost limit exceeded");
        return DRA_ECOST;
    }
    if (rc)
        return rc;
    if (r.kind == CEL_K_ERROR) {
        dra_diag_add(d, "", 0, 0, "%s", r.u.err->msg);
        return DRA_EEVAL;
    }
    dra_diag_add(d, "", 0, 0, "CEL result of type %s could not be converted to bool",
                 cel_kind_name((cel_kind)r.kind));
    return DRA_ETYPE;
}

/* A selector of one device comparison other than device.driver's (one
 * attribute, capacity or regex test): the inline path in a function of
 * its own, which saves fewer registers than eval_device. */
static CEL_NOINLINE dra_err eval_one_term(const dra_cel_program *p, dra_cel_vm *vm,
                                          const dra_cel_prepared *dev, int *result,
                                          dra_diag *d)
{
    uint64_t cost = 0;
    int b = cel_cterm_fast(p->cterms, dev->fields, &cost);
    if (b >= 0) {
        vm->c.last_cost = cost;
        *result = b;
        return DRA_OK;
    }
    return eval_device(p, vm, dev, result, d);
}

dra_err dra_cel_eval_device(const dra_cel_program *p, dra_cel_vm *vm,
                            const dra_cel_prepared *dev, int *result, dra_diag *d)
{
    /* device.driver == '...', the most common DeviceClass selector, with
     * nothing around it (no registers to save, no call); another single
     * term in eval_one_term. */
    if (p->conj_terms == 1 && p->cterms) {
        const cel_cterm *t = p->cterms;
        uint64_t cost = 0;
        int b;
        if (p->code->op != CEL_OP_DEV_FIELD_EQ)
            return eval_one_term(p, vm, dev, result, d);
        b = cel_cterm_str(t, &dev->fields[t->field], &cost);
        if (b >= 0) {
            vm->c.last_cost = cost;
            *result = b;
            return DRA_OK;
        }
    }
    return eval_device(p, vm, dev, result, d);
}

/* ---- what a selector reads of the device ------------------------------------- */

/* The device read instruction |i| of |p| makes: 1 with *r filled, 0 for
 * an instruction that reads nothing of the device, -1 for one that may
 * read anything (`device` itself, a whole attribute or capacity map, a
 * domain map). */
static int insn_read(const dra_cel_program *p, size_t i, dra_cel_read *r)
{
    static const dra_cel_read_field by_field[] = {DRA_CEL_READ_DRIVER, DRA_CEL_READ_ATTRIBUTE,
                                                  DRA_CEL_READ_CAPACITY,
                                                  DRA_CEL_READ_ALLOW_MULTIPLE};
    const cel_insn *in = &p->code[i];
    const cel_value *k = p->consts;
    int field;
    memset(r, 0, sizeof *r);
    switch ((cel_op)in->op) {
    case CEL_OP_VAR:
    case CEL_OP_DEV_DOMAIN:
        return -1;
    case CEL_OP_DEV_FIELD:
    case CEL_OP_DEV_FIELD_EQ:
        if (in->a != 0 && in->a != 3)
            return -1;
        r->field = by_field[in->a];
        return 1;
    case CEL_OP_DEV_ATTR:
    case CEL_OP_DEV_ATTR_EQ:
    case CEL_OP_DEV_MATCH:
    case CEL_OP_DEV_QCMP:
    case CEL_OP_ANY_DEV:
        /* DEV_QCMP reads a capacity (its y is a cost); ANY_DEV's field is
         * in the EXT that follows it. */
        field = in->op == CEL_OP_DEV_QCMP ? 2
                : in->op == CEL_OP_ANY_DEV ? (i + 1 < p->ncode ? (int)p->code[i + 1].c : -1)
                                           : (int)in->y;
        if ((field != 1 && field != 2) || k[in->a].kind != CEL_K_STRING ||
            k[in->b].kind != CEL_K_STRING)
            return -1;
        r->field = by_field[field];
        r->domain = k[in->a].u.s;
        r->domain_len = k[in->a].n;
        r->id = k[in->b].u.s;
        r->id_len = k[in->b].n;
        return 1;
    default:
        return 0;
    }
}

static int same_read(const dra_cel_read *x, const dra_cel_read *y)
{
    return x->field == y->field && x->domain_len == y->domain_len && x->id_len == y->id_len &&
           (!x->domain || (!memcmp(x->domain, y->domain, x->domain_len) &&
                           !memcmp(x->id, y->id, x->id_len)));
}

/* The fused device instructions are the only way a program compiled for
 * the DRA environment sees the device (plain code reads `device` with
 * VAR). A read is new when no earlier instruction made it, so the count
 * is right whatever room |out| has. */
long dra_cel_program_device_reads(const dra_cel_program *p, dra_cel_read *out, size_t max)
{
    size_t n = 0;
    if (p->env_kind != CEL_ENV_DRA || p->opts.plain_code)
        return -1;
    for (size_t i = 0; i < p->ncode; i++) {
        dra_cel_read r, q;
        int k = insn_read(p, i, &r), seen = 0;
        if (k < 0)
            return -1;
        for (size_t j = 0; k && !seen && j < i; j++)
            seen = insn_read(p, j, &q) > 0 && same_read(&q, &r);
        if (!k || seen)
            continue;
        if (n < max)
            out[n] = r;
        n++;
    }
    return n > (size_t)LONG_MAX ? -1 : (long)n;
}
