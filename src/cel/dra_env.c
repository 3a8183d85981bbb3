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

struct dra_cel_prepared {
    const dra_mem *mem;
    dra_arena arena;
    cel_object obj;
    cel_value fields[4];
    cel_value var;
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

/* Builds the two-level map for |n| named values; |get| yields value i. */
static dra_err build_domains(dra_arena *ar, const char *driver, size_t n,
                             const char *(*name_of)(const void *, size_t),
                             cel_value (*value_of)(const void *, size_t), const void *src,
                             cel_value *out)
{
    domain_acc *d = dra_arena_array(ar, n ? n : 1, sizeof *d);
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
            da->e = dra_arena_array(ar, n, sizeof *da->e);
            if (!da->e)
                return DRA_ENOMEM;
        }
        cel_value dummy;
        cel_map tmp = {da->n, da->e, 0, 0, NULL};
        if (cel_map_find_str(&tmp, id, strlen(id), dra_hash(id, strlen(id)), &dummy))
            continue; /* duplicate name: the first wins */
        cel_map_entry_set(&da->e[da->n++], str_value(id, strlen(id)), value_of(src, i));
    }
    outer = dra_arena_array(ar, nd ? nd : 1, sizeof *outer);
    m = dra_arena_zalloc(ar, sizeof *m);
    if (!outer || !m)
        return DRA_ENOMEM;
    for (size_t i = 0; i < nd; i++) {
        cel_map *inner = dra_arena_zalloc(ar, sizeof *inner);
        if (!inner)
            return DRA_ENOMEM;
        inner->n = d[i].n;
        inner->e = d[i].e;
        if (index_map(ar, inner))
            return DRA_ENOMEM;
        cel_map_entry_set(&outer[i], str_value(d[i].name, d[i].len), cel_map_value(inner));
    }
    m->n = nd;
    m->e = outer;
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
    dra_cel_prepared *pd = dra_calloc(mem, 1, sizeof *pd);
    const char *driver = dev->driver ? dev->driver : "";
    dra_err rc;
    *out = NULL;
    if (!pd)
        return DRA_ENOMEM;
    pd->mem = mem;
    dra_arena_init(&pd->arena, mem);
    pd->fields[0] = str_value(driver, strlen(driver));
    rc = build_domains(&pd->arena, driver, dev->nattrs, attr_name, attr_val, dev->attrs,
                       &pd->fields[1]);
    if (!rc)
        rc = build_domains(&pd->arena, driver, dev->ncaps, cap_name, cap_val, dev->caps,
                           &pd->fields[2]);
    if (rc) {
        dra_cel_prepared_free(pd);
        return rc;
    }
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
    if (!pd)
        return;
    dra_arena_fini(&pd->arena);
    dra_free(pd->mem, pd);
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
    if (p->conj_terms == 1 && p->code->op == CEL_OP_DEV_FIELD_EQ) {
        uint64_t cost = 2;
        int b = cel_str_term(p, p->code, &dev->fields[p->code->a], &cost);
        if (b >= 0) {
            vm->c.last_cost = cost;
            *result = b;
            return DRA_OK;
        }
    }
    return eval_device(p, vm, dev, result, d);
}
