/*
 * test_cel_device_reads.c: dra_cel_program_device_reads, the list of
 * device values a selector reads, which the allocator uses to evaluate a
 * selector once per distinct combination of those values. Checked two
 * ways: the lists for selectors of every fused shape (and -1 for the
 * ones that may read anything), and the promise itself on generated
 * devices: a device that keeps the values read but changes everything
 * else (other attributes and capacities, their kinds, extra entries, the
 * driver or the sharing flag when not read) gets the same result, error
 * message and cost.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dra/base.h"
#include "dra/cel.h"
#include "dra/codec.h"

#define DRV "gpu.example.com"

typedef struct rng {
    uint64_t s;
} rng;

static unsigned next(rng *r, unsigned n)
{
    r->s = r->s * 6364136223846793005u + 1442695040888963407u;
    return (unsigned)((r->s >> 33) % n);
}

static dra_cel_program *compile(dra_cel_env *env, const char *expr)
{
    dra_cel_program *p = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_cel_compile(env, expr, strlen(expr), &p, &d) != DRA_OK)
        fail_msg("%s: %s", expr, dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    dra_diag_fini(&d);
    return p;
}

/* ---- the lists ----------------------------------------------------------------- */

static void read_is(const dra_cel_read *r, dra_cel_read_field f, const char *dom, const char *id)
{
    assert_int_equal(r->field, f);
    if (!dom) {
        assert_null(r->domain);
        return;
    }
    assert_int_equal(r->domain_len, strlen(dom));
    assert_memory_equal(r->domain, dom, r->domain_len);
    assert_int_equal(r->id_len, strlen(id));
    assert_memory_equal(r->id, id, r->id_len);
}

static void test_lists(void **state)
{
    dra_cel_env *env = NULL;
    dra_cel_program *p;
    dra_cel_read r[8];
    (void)state;
    assert_int_equal(dra_cel_env_new_dra(NULL, NULL, &env), DRA_OK);

    p = compile(env, "device.driver == '" DRV "'");
    assert_int_equal(dra_cel_program_device_reads(p, r, 8), 1);
    read_is(&r[0], DRA_CEL_READ_DRIVER, NULL, NULL);
    dra_cel_program_unref(p);

    /* the seed's class: two reads, the attribute once however often */
    p = compile(env, "device.driver == '" DRV "' && device.attributes['" DRV "'].type == 'gpu' "
                     "&& (device.attributes['" DRV "'].type != 'x' || "
                     "device.attributes['" DRV "']['type'] == 'y')");
    assert_int_equal(dra_cel_program_device_reads(p, r, 8), 2);
    read_is(&r[0], DRA_CEL_READ_DRIVER, NULL, NULL);
    read_is(&r[1], DRA_CEL_READ_ATTRIBUTE, DRV, "type");
    /* with less room: the count, the first ones written */
    memset(r, 0, sizeof r);
    assert_int_equal(dra_cel_program_device_reads(p, r, 1), 2);
    read_is(&r[0], DRA_CEL_READ_DRIVER, NULL, NULL);
    assert_int_equal(r[1].field, 0);
    assert_null(r[1].domain);
    assert_int_equal(dra_cel_program_device_reads(p, NULL, 0), 2);
    dra_cel_program_unref(p);

    p = compile(env, "device.capacity['" DRV "'].memory.compareTo(quantity('40Gi')) > 0 && "
                     "device.allowMultipleAllocations");
    assert_int_equal(dra_cel_program_device_reads(p, r, 8), 2);
    read_is(&r[0], DRA_CEL_READ_CAPACITY, DRV, "memory");
    read_is(&r[1], DRA_CEL_READ_ALLOW_MULTIPLE, NULL, NULL);
    dra_cel_program_unref(p);

    /* the regex and the exists-loop shapes */
    p = compile(env, "device.attributes['resource.kubernetes.io'].pciBusID.matches('^0000:[0-3]') "
                     "|| ['a', 'h'].exists(p, device.attributes['" DRV "'].productName.startsWith(p))");
    assert_int_equal(dra_cel_program_device_reads(p, r, 8), 2);
    read_is(&r[0], DRA_CEL_READ_ATTRIBUTE, "resource.kubernetes.io", "pciBusID");
    read_is(&r[1], DRA_CEL_READ_ATTRIBUTE, DRV, "productName");
    dra_cel_program_unref(p);

    p = compile(env, "true");
    assert_int_equal(dra_cel_program_device_reads(p, r, 8), 0);
    dra_cel_program_unref(p);

    /* reads of a whole map, or of the device itself: anything */
    {
        static const char *const any[] = {
            "device.attributes['" DRV "'].size() > 1",
            "'type' in device.attributes['" DRV "']",
            "device.attributes.exists(d, d == 'other.io')",
            "has(device.attributes['" DRV "'].type)",
            "device.capacity.size() == 1",
            "[device][0].driver == 'x'",
        };
        for (size_t i = 0; i < sizeof any / sizeof any[0]; i++) {
            p = compile(env, any[i]);
            if (dra_cel_program_device_reads(p, r, 8) != -1)
                fail_msg("%s: a fixed list of reads", any[i]);
            dra_cel_program_unref(p);
        }
    }
    dra_cel_env_free(env);

    /* plain instructions: no fused reads, so nothing is promised */
    {
        dra_cel_options o;
        memset(&o, 0, sizeof o);
        o.plain_code = 1;
        assert_int_equal(dra_cel_env_new_dra(NULL, &o, &env), DRA_OK);
        p = compile(env, "device.driver == '" DRV "'");
        assert_int_equal(dra_cel_program_device_reads(p, r, 8), -1);
        dra_cel_program_unref(p);
        dra_cel_env_free(env);
    }
}

/* ---- the promise ------------------------------------------------------------------ */

#define MAXA 12

typedef struct gdev {
    char driver[32];
    char names[MAXA][40];
    char svals[MAXA][16];
    dra_cel_attr attrs[MAXA];
    size_t nattrs;
    char cnames[4][40];
    dra_cel_capacity caps[4];
    size_t ncaps;
    int multi;
} gdev;

static const char *const k_doms[] = {DRV, "other.io"};
static const char *const k_ids[] = {"type", "model", "index", "ok", "ver", "name", "productName"};
static const char *const k_strs[] = {"gpu", "nic", "a100", "h100", "a7", "b", ""};
static const char *const k_vers[] = {"1.2.0", "1.10.1", "0.9.0-rc.1", "2.0.0"};
static const char *const k_qtys[] = {"80Gi", "40Gi", "189471Mi", "1", "500m", "0"};
static const char *const k_drivers[] = {DRV, "other.io", "x.example.org"};

static void gen_value(rng *r, gdev *g, size_t i)
{
    dra_cel_attr *a = &g->attrs[i];
    const char *s;
    memset(a, 0, sizeof *a);
    a->name = g->names[i];
    switch (next(r, 4)) {
    case 0:
        a->kind = DRA_CEL_ATTR_INT;
        a->i = (int64_t)next(r, 6) - 1;
        break;
    case 1:
        a->kind = DRA_CEL_ATTR_BOOL;
        a->b = (int)next(r, 2);
        break;
    case 2:
        a->kind = DRA_CEL_ATTR_STRING;
        snprintf(g->svals[i], sizeof g->svals[i], "%s", k_strs[next(r, 7)]);
        a->s = g->svals[i];
        break;
    default:
        a->kind = DRA_CEL_ATTR_VERSION;
        s = k_vers[next(r, 4)];
        snprintf(g->svals[i], sizeof g->svals[i], "%s", s);
        a->s = g->svals[i];
        assert_int_equal(dra_semver_parse(a->s, strlen(a->s), &a->version), DRA_OK);
    }
}

/* A name of a pool domain and id, bare (the driver's domain) or not. */
static void gen_name(rng *r, char *out, size_t cap)
{
    const char *dom = k_doms[next(r, 2)], *id = k_ids[next(r, 7)];
    if (next(r, 3) == 0)
        snprintf(out, cap, "%s", id);
    else
        snprintf(out, cap, "%s/%s", dom, id);
}

static void gen_qty(rng *r, gdev *g, size_t i)
{
    const char *q = k_qtys[next(r, 6)];
    g->caps[i].name = g->cnames[i];
    assert_int_equal(dra_quantity_parse(q, strlen(q), &g->caps[i].value), DRA_OK);
}

static void gen_device(rng *r, gdev *g)
{
    memset(g, 0, sizeof *g);
    snprintf(g->driver, sizeof g->driver, "%s", k_drivers[next(r, 3)]);
    g->nattrs = next(r, 8);
    for (size_t i = 0; i < g->nattrs; i++) {
        gen_name(r, g->names[i], sizeof g->names[i]);
        gen_value(r, g, i);
    }
    g->ncaps = next(r, 3);
    for (size_t i = 0; i < g->ncaps; i++) {
        snprintf(g->cnames[i], sizeof g->cnames[i], "%s%s",
                 next(r, 2) ? DRV "/" : "", next(r, 2) ? "memory" : "cores");
        gen_qty(r, g, i);
    }
    g->multi = (int)next(r, 2);
}

/* Pointers into the struct itself: fixed after a copy. */
static void fix_pointers(gdev *g)
{
    for (size_t i = 0; i < g->nattrs; i++) {
        g->attrs[i].name = g->names[i];
        if (g->attrs[i].kind == DRA_CEL_ATTR_STRING || g->attrs[i].kind == DRA_CEL_ATTR_VERSION) {
            g->attrs[i].s = g->svals[i];
            if (g->attrs[i].kind == DRA_CEL_ATTR_VERSION)
                dra_semver_parse(g->svals[i], strlen(g->svals[i]), &g->attrs[i].version);
        }
    }
    for (size_t i = 0; i < g->ncaps; i++)
        g->caps[i].name = g->cnames[i];
}

/* Whether the entry |name| of a device with |driver| is what read |r|
 * (of |field|) names: CEL splits names at the first '/'; bare ones are in
 * the driver's domain. */
static int is_read(const dra_cel_read *r, size_t n, dra_cel_read_field field, const char *name,
                   const char *driver)
{
    const char *slash = strchr(name, '/');
    const char *dom = slash ? name : driver, *id = slash ? slash + 1 : name;
    size_t dlen = slash ? (size_t)(slash - name) : strlen(driver);
    for (size_t i = 0; i < n; i++)
        if (r[i].field == field && r[i].domain_len == dlen && !memcmp(r[i].domain, dom, dlen) &&
            r[i].id_len == strlen(id) && !memcmp(r[i].id, id, r[i].id_len))
            return 1;
    return 0;
}

static int reads_field(const dra_cel_read *r, size_t n, dra_cel_read_field f)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].field == f)
            return 1;
    return 0;
}

/* |g| changed everywhere the reads do not look. */
static void vary(rng *r, const gdev *g, gdev *v, const dra_cel_read *rd, size_t n)
{
    *v = *g;
    fix_pointers(v);
    if (!reads_field(rd, n, DRA_CEL_READ_DRIVER)) {
        /* Bare names keep their domain: written out in full first. */
        for (size_t i = 0; i < v->nattrs; i++)
            if (!strchr(v->names[i], '/')) {
                char tmp[40];
                snprintf(tmp, sizeof tmp, "%s", v->names[i]);
                snprintf(v->names[i], sizeof v->names[i], "%.20s/%.18s", g->driver, tmp);
            }
        for (size_t i = 0; i < v->ncaps; i++)
            if (!strchr(v->cnames[i], '/')) {
                char tmp[40];
                snprintf(tmp, sizeof tmp, "%s", v->cnames[i]);
                snprintf(v->cnames[i], sizeof v->cnames[i], "%.20s/%.18s", g->driver, tmp);
            }
        snprintf(v->driver, sizeof v->driver, "%s", k_drivers[next(r, 3)]);
    }
    if (!reads_field(rd, n, DRA_CEL_READ_ALLOW_MULTIPLE))
        v->multi = (int)next(r, 2);
    for (size_t i = 0; i < v->nattrs; i++)
        if (!is_read(rd, n, DRA_CEL_READ_ATTRIBUTE, v->names[i], v->driver))
            gen_value(r, v, i);
    for (size_t i = 0; i < v->ncaps; i++)
        if (!is_read(rd, n, DRA_CEL_READ_CAPACITY, v->cnames[i], v->driver))
            gen_qty(r, v, i);
    /* extra entries under names nothing reads */
    while (v->nattrs < MAXA && next(r, 2)) {
        gen_name(r, v->names[v->nattrs], sizeof v->names[v->nattrs]);
        if (is_read(rd, n, DRA_CEL_READ_ATTRIBUTE, v->names[v->nattrs], v->driver))
            continue;
        gen_value(r, v, v->nattrs);
        v->nattrs++;
    }
    fix_pointers(v);
}

typedef struct outcome {
    dra_err rc;
    int result;
    uint64_t cost;
    char msg[256];
} outcome;

static outcome run(const dra_cel_program *p, dra_cel_vm *vm, const gdev *g)
{
    dra_cel_device dev;
    dra_cel_prepared *pd = NULL;
    outcome o;
    dra_diag d;
    memset(&o, 0, sizeof o);
    memset(&dev, 0, sizeof dev);
    dev.driver = g->driver;
    dev.attrs = g->attrs;
    dev.nattrs = g->nattrs;
    dev.caps = g->caps;
    dev.ncaps = g->ncaps;
    dev.allow_multiple_allocations = g->multi;
    assert_int_equal(dra_cel_device_prepare(NULL, &dev, &pd), DRA_OK);
    dra_diag_init(&d, NULL);
    o.rc = dra_cel_eval_device(p, vm, pd, &o.result, &d);
    o.cost = dra_cel_vm_last_cost(vm);
    snprintf(o.msg, sizeof o.msg, "%s", dra_diag_first(&d) ? dra_diag_first(&d) : "");
    dra_diag_fini(&d);
    dra_cel_prepared_free(pd);
    return o;
}

static void test_same_reads_same_result(void **state)
{
    static const char *const exprs[] = {
        "device.driver == '" DRV "'",
        "device.attributes['" DRV "'].type == 'gpu'",
        "device.attributes['" DRV "'].type == 'gpu' && device.attributes['other.io'].model.startsWith('a')",
        "device.capacity['" DRV "'].memory.compareTo(quantity('40Gi')) > 0",
        "device.capacity['" DRV "'].cores.isLessThan(quantity('1')) || device.driver.endsWith('.io')",
        "device.attributes['" DRV "'].index > 2",
        "['a', 'h'].exists(p, device.attributes['other.io'].model.startsWith(p))",
        "['a1', 'H1'].all(p, device.attributes['" DRV "'].productName.lowerAscii().contains(p))",
        "device.attributes['" DRV "'].ver.isGreaterThan(semver('1.2.0'))",
        "device.allowMultipleAllocations || device.attributes['" DRV "'].ok",
        "device.attributes['" DRV "'].name.matches('^a[0-9]+$')",
        "device.attributes['" DRV "']['model'] == 'nic' ? device.attributes['other.io'].index == 1 : "
        "device.attributes['other.io'].ok",
        "[1, 2, 3].map(x, x * device.attributes['" DRV "'].index).exists(y, y > 4)",
    };
    dra_cel_env *env = NULL;
    dra_cel_vm *vm = NULL;
    rng r = {42};
    size_t checked = 0;
    (void)state;
    assert_int_equal(dra_cel_env_new_dra(NULL, NULL, &env), DRA_OK);
    assert_int_equal(dra_cel_vm_new(NULL, &vm), DRA_OK);
    for (size_t e = 0; e < sizeof exprs / sizeof exprs[0]; e++) {
        dra_cel_program *p = compile(env, exprs[e]);
        dra_cel_read rd[8];
        long n = dra_cel_program_device_reads(p, rd, 8);
        if (n < 0 || n > 8)
            fail_msg("%s: no fixed reads (%ld)", exprs[e], n);
        for (int i = 0; i < 400; i++) {
            gdev g, v;
            outcome a, b;
            gen_device(&r, &g);
            fix_pointers(&g);
            vary(&r, &g, &v, rd, (size_t)n);
            a = run(p, vm, &g);
            b = run(p, vm, &v);
            if (a.rc != b.rc || a.result != b.result || a.cost != b.cost || strcmp(a.msg, b.msg))
                fail_msg("%s: the same reads gave %s/%d/%llu/'%s' and %s/%d/%llu/'%s'", exprs[e],
                         dra_errname(a.rc), a.result, (unsigned long long)a.cost, a.msg,
                         dra_errname(b.rc), b.result, (unsigned long long)b.cost, b.msg);
            checked++;
        }
        dra_cel_program_unref(p);
    }
    print_message("%zu device pairs with the same reads agreed\n", checked);
    dra_cel_vm_free(vm);
    dra_cel_env_free(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_same_reads_same_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
