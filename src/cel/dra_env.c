/*
 * dra_env.c: the Kubernetes DRA selector environment. The `device`
 * variable (kubernetes.DRADevice), the device activation prepared once
 * per device (attributes and capacities grouped by domain into maps with
 * hashed keys, so constant lookups are direct), and selector evaluation
 * with Kubernetes' result rules.
 */
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
 * is placed on a 64-byte boundary (see dra_cel_device_prepare). */
struct dra_cel_prepared {
    cel_value fields[4];
    cel_value var;
    cel_object obj;
    dra_arena arena; /* owns everything, pd included */
};

typedef struct domain_acc {
    const char *name;
    size_t len;
    cel_map_entry *e;
    size_t n;
} domain_acc;

static cel_value str_value(const char *s, size_t len)
{
    return cel_with_cplen(cel_str(s, len));
}

/* Splits |name| at the first '/': the domain (|driver| when absent). */
static void split_name(const char *name, const char *driver, const char **dom, size_t *dlen,
                       const char **id)
{
    const char *slash = strchr(name, '/');
    if (slash) {
        *dom = name;
        *dlen = (size_t)(slash - name);
        *id = slash + 1;
    } else {
        *dom = driver;
        *dlen = strlen(driver);
        *id = name;
    }
}

static domain_acc *find_domain(domain_acc *d, size_t nd, const char *dom, size_t dlen)
{
    for (size_t i = 0; i < nd; i++)
        if (d[i].len == dlen && !memcmp(d[i].name, dom, dlen))
            return &d[i];
    return NULL;
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

/* Gives |m| its open-addressing index (load at most one half). Up to 8
 * entries the scan over stored hashes is as fast (callgrind: the probe
 * costs more on the bench's 5-attribute domain); over 255 the index
 * would not fit in bytes. */
static dra_err index_map(dra_arena *ar, cel_map *m)
{
    unsigned bits = 1;
    uint8_t *ix;
    if (m->n <= 8 || m->n > 255)
        return DRA_OK;
    while (((size_t)1 << bits) < 2 * m->n)
        bits++;
    ix = dra_arena_zalloc(ar, (size_t)1 << bits);
    if (!ix)
        return DRA_ENOMEM;
    for (size_t i = 0; i < m->n; i++) {
        size_t mask = ((size_t)1 << bits) - 1, j = (size_t)m->e[i].hash & mask;
        while (ix[j])
            j = (j + 1) & mask;
        ix[j] = (uint8_t)(i + 1);
    }
    m->ibits = bits;
    m->index = ix;
    return DRA_OK;
}

/* A zeroed map with room for |n| entries after it, m->e pointing there. */
static cel_map *map_with_entries(dra_arena *ar, size_t n)
{
    cel_map *m;
    if (n > (SIZE_MAX - sizeof *m) / sizeof(cel_map_entry))
        return NULL;
    m = dra_arena_zalloc(ar, sizeof *m + n * sizeof(cel_map_entry));
    if (m)
        m->e = (const cel_map_entry *)(m + 1);
    return m;
}

/* Builds the two-level map for |n| named values in |ar|; |get| yields
 * value i. The domains are gathered in |tmp| first, so |ar| gets only
 * the maps, each followed by its entries, one after the other. */
static dra_err build_domains(dra_arena *ar, dra_arena *tmp, const char *driver, size_t n,
                             const char *(*name_of)(const void *, size_t),
                             cel_value (*value_of)(const void *, size_t), const void *src,
                             cel_value *out)
{
    domain_acc *d = dra_arena_array(tmp, n ? n : 1, sizeof *d);
    cel_map_entry *outer;
    cel_map *m;
    size_t nd = 0;
    if (!d)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *dom, *id;
        size_t dlen;
        domain_acc *da;
        split_name(name_of(src, i), driver, &dom, &dlen, &id);
        da = find_domain(d, nd, dom, dlen);
        if (!da) {
            da = &d[nd++];
            da->name = dom;
            da->len = dlen;
            da->e = dra_arena_array(tmp, n, sizeof *da->e);
            if (!da->e)
                return DRA_ENOMEM;
        }
        cel_value dummy;
        cel_map acc = {da->n, da->e, 0, 0, NULL};
        if (cel_map_find_str(&acc, id, strlen(id), dra_hash(id, strlen(id)), &dummy))
            continue; /* duplicate name: the first wins */
        cel_map_entry_set(&da->e[da->n++], str_value(id, strlen(id)), value_of(src, i));
    }
    /* Each map with its entries right after it (see cel_dev_map_get). */
    m = map_with_entries(ar, nd);
    if (!m)
        return DRA_ENOMEM;
    outer = (cel_map_entry *)(m + 1);
    for (size_t i = 0; i < nd; i++) {
        cel_map *inner = map_with_entries(ar, d[i].n);
        if (!inner)
            return DRA_ENOMEM;
        memcpy(inner + 1, d[i].e, d[i].n * sizeof *d[i].e);
        inner->n = d[i].n;
        if (index_map(ar, inner))
            return DRA_ENOMEM;
        cel_map_entry_set(&outer[i], str_value(d[i].name, d[i].len), cel_map_value(inner));
    }
    m->n = nd;
    m->flags = CEL_MAP_MISSING_EMPTY;
    if (index_map(ar, m))
        return DRA_ENOMEM;
    *out = cel_map_value(m);
    return DRA_OK;
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

dra_err dra_cel_device_prepare(const dra_mem *mem, const dra_cel_device *dev,
                               dra_cel_prepared **out)
{
    const char *driver = dev->driver ? dev->driver : "";
    dra_arena ar, tmp;
    dra_cel_prepared *pd;
    dra_err rc = DRA_ENOMEM;
    *out = NULL;
    /* The device, then its maps, in one block sized for the usual case:
     * what one evaluation reads is a few adjacent cache lines. */
    dra_arena_init(&ar, mem);
    dra_arena_init(&tmp, mem);
    ar.next_block = dev->nattrs + dev->ncaps < 256
                        ? 64 + sizeof *pd + (dev->nattrs + dev->ncaps + 2) *
                                                (sizeof(cel_map) + 2 * sizeof(cel_map_entry))
                        : 65536; /* far beyond Kubernetes' 32 per device: regular blocks */
    pd = dra_arena_zalloc(&ar, sizeof *pd + 48);
    if (pd) {
        /* the arena aligns to 16: move up to the next 64 */
        pd = (dra_cel_prepared *)(void *)((char *)pd + ((64 - ((uintptr_t)pd & 63)) & 63));
        pd->fields[0] = str_value(driver, strlen(driver));
        rc = build_domains(&ar, &tmp, driver, dev->nattrs, attr_name, attr_val, dev->attrs,
                           &pd->fields[1]);
        if (!rc)
            rc = build_domains(&ar, &tmp, driver, dev->ncaps, cap_name, cap_val, dev->caps,
                               &pd->fields[2]);
    }
    dra_arena_fini(&tmp);
    if (rc) {
        dra_arena_fini(&ar);
        return rc;
    }
    pd->arena = ar; /* the arena now owns the block pd lives in */
    pd->fields[3] = cel_bool(dev->allow_multiple_allocations);
    pd->obj.type = &dra_device_type;
    pd->obj.fields = pd->fields;
    pd->var.kind = CEL_K_OBJECT;
    pd->var.u.obj = &pd->obj;
    *out = pd;
    return DRA_OK;
}

void dra_cel_prepared_free(dra_cel_prepared *pd)
{
    dra_arena ar;
    if (!pd)
        return;
    ar = pd->arena; /* pd is in it */
    dra_arena_fini(&ar);
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

dra_err dra_cel_eval_device(const dra_cel_program *p, dra_cel_vm *vm,
                            const dra_cel_prepared *dev, int *result, dra_diag *d)
{
    /* device.driver == '...', the most common DeviceClass selector, with
     * nothing around it (no registers to save, no call). */
    if (p->conj_terms == 1 && p->code->op == CEL_OP_DEV_FIELD_EQ && p->cterms) {
        const cel_cterm *t = p->cterms;
        uint64_t cost = 0;
        int b = cel_cterm_str(t, &dev->fields[t->field], &cost);
        if (b >= 0) {
            vm->c.last_cost = cost;
            *result = b;
            return DRA_OK;
        }
    }
    return eval_device(p, vm, dev, result, d);
}
