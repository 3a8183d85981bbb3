/* The DRA selector environment: device fields, attribute domains, the
 * "no such key" and empty-domain rules, capacity quantities, semver
 * attributes, result typing, cost limits, and no allocation per
 * evaluation. */
#include "dra_test.h"

#include <pthread.h>

#include "dra/cel.h"

typedef struct fixture {
    dra_cel_env *env;
    dra_cel_vm *vm;
    dra_cel_prepared *dev;
    dra_cel_attr attrs[8];
    dra_cel_capacity caps[2];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    dra_cel_device dev = {0};
    assert_non_null(f);
    f->attrs[0] = (dra_cel_attr){.name = "type", .kind = DRA_CEL_ATTR_STRING, .s = "gpu"};
    f->attrs[1] = (dra_cel_attr){.name = "productName", .kind = DRA_CEL_ATTR_STRING,
                                 .s = "NVIDIA H100 80GB HBM3"};
    f->attrs[2] = (dra_cel_attr){.name = "gpu.nvidia.com/index", .kind = DRA_CEL_ATTR_INT,
                                 .i = 3};
    f->attrs[3] = (dra_cel_attr){.name = "resource.kubernetes.io/pciBusID",
                                 .kind = DRA_CEL_ATTR_STRING, .s = "0000:07:00.0"};
    f->attrs[4] = (dra_cel_attr){.name = "mig", .kind = DRA_CEL_ATTR_BOOL, .b = 1};
    f->attrs[5] = (dra_cel_attr){.name = "driverVersion", .kind = DRA_CEL_ATTR_VERSION,
                                 .s = "550.54.15"};
    assert_int_equal(dra_semver_parse("550.54.15", 9, &f->attrs[5].version), DRA_OK);
    f->attrs[6] = (dra_cel_attr){.name = "namespace", .kind = DRA_CEL_ATTR_STRING,
                                 .s = "kw"};
    f->caps[0].name = "memory";
    assert_int_equal(dra_quantity_parse("80Gi", 4, &f->caps[0].value), DRA_OK);
    f->caps[1].name = "example.com/slots";
    assert_int_equal(dra_quantity_parse("4", 1, &f->caps[1].value), DRA_OK);
    dev.driver = "gpu.nvidia.com";
    dev.attrs = f->attrs;
    dev.nattrs = 7;
    dev.caps = f->caps;
    dev.ncaps = 2;
    assert_int_equal(dra_cel_env_new_dra(NULL, NULL, &f->env), DRA_OK);
    assert_int_equal(dra_cel_vm_new(NULL, &f->vm), DRA_OK);
    assert_int_equal(dra_cel_device_prepare(NULL, &dev, &f->dev), DRA_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dra_cel_prepared_free(f->dev);
    dra_cel_vm_free(f->vm);
    dra_cel_env_free(f->env);
    free(f);
    return 0;
}

/* Compiles and evaluates; returns the dra_err and the bool / message. */
static dra_err run(fixture *f, const char *expr, int *result, char *msg, size_t msgsz)
{
    dra_cel_program *p = NULL;
    dra_diag d;
    dra_err rc;
    dra_diag_init(&d, NULL);
    *result = -1;
    rc = dra_cel_compile(f->env, expr, strlen(expr), &p, &d);
    if (!rc)
        rc = dra_cel_eval_device(p, f->vm, f->dev, result, &d);
    if (msg)
        snprintf(msg, msgsz, "%s", dra_diag_first(&d) ? dra_diag_first(&d) : "");
    dra_cel_program_unref(p);
    dra_diag_fini(&d);
    return rc;
}

static void expect(fixture *f, const char *expr, int want)
{
    int r;
    char msg[512];
    dra_err rc = run(f, expr, &r, msg, sizeof msg);
    if (rc != DRA_OK || r != want)
        fail_msg("%s: rc=%s result=%d want %d (%s)", expr, dra_errname(rc), r, want, msg);
}

static void expect_err(fixture *f, const char *expr, dra_err want, const char *substr)
{
    int r;
    char msg[512];
    dra_err rc = run(f, expr, &r, msg, sizeof msg);
    if (rc != want || !strstr(msg, substr))
        fail_msg("%s: rc=%s want %s, message '%s' lacks '%s'", expr, dra_errname(rc),
                 dra_errname(want), msg, substr);
}

static void test_driver_and_attributes(void **state)
{
    fixture *f = *state;
    expect(f, "device.driver == 'gpu.nvidia.com'", 1);
    expect(f, "device.driver == 'other'", 0);
    expect(f, "device.driver != ''", 1);
    expect(f, "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", 1);
    expect(f, "device.attributes['gpu.nvidia.com']['type'] == 'gpu'", 1);
    expect(f, "device.attributes['gpu.nvidia.com'].index == 3", 1);
    expect(f, "device.attributes['gpu.nvidia.com'].index > 2u", 1);
    expect(f, "device.attributes['gpu.nvidia.com'].mig", 1);
    expect(f, "device.attributes['resource.kubernetes.io'].pciBusID.startsWith('0000:07')", 1);
    expect(f, "device.attributes['gpu.nvidia.com'].productName.matches('^NVIDIA H1[0-9]{2}')", 1);
    expect(f, "device.attributes['gpu.nvidia.com'].namespace == 'kw'", 1);
    expect(f, "device.allowMultipleAllocations", 0);
    expect(f, "'gpu.nvidia.com' in device.attributes", 1);
    expect(f, "'nope.example.com' in device.attributes", 0);
    expect(f, "'index' in device.attributes['gpu.nvidia.com']", 1);
    expect(f, "has(device.attributes['gpu.nvidia.com'].type)", 1);
    expect(f, "has(device.attributes['gpu.nvidia.com'].nope)", 0);
    expect(f, "size(device.attributes['gpu.nvidia.com']) == 6", 1);
    expect(f, "device.attributes.exists_one(d, d == 'resource.kubernetes.io')", 1);
    expect(f, "cel.bind(g, device.attributes['gpu.nvidia.com'], g.type == 'gpu' && g.index == 3)", 1);
    expect(f, "device.attributes['gpu.nvidia.com'].?nope.orValue('x') == 'x'", 1);
    /* A device value at the end of a conditional is not the whole operand. */
    expect(f, "(has(device.attributes['gpu.nvidia.com'].index) ? 'h100' : device.driver) == 'h100'", 1);
    expect(f, "(false ? 'x' : device.attributes['gpu.nvidia.com'].type) == 'gpu'", 1);
}

static void test_missing(void **state)
{
    fixture *f = *state;
    /* An unknown domain is an empty map; a missing id is an error. */
    expect(f, "size(device.attributes['nope.example.com']) == 0", 1);
    expect_err(f, "device.attributes['nope.example.com'].x == 1", DRA_EEVAL, "no such key: x");
    expect_err(f, "device.attributes['gpu.nvidia.com'].noSuchAttr == 'a'", DRA_EEVAL,
               "no such key: noSuchAttr");
    expect_err(f, "device.attributes['gpu.nvidia.com']['noSuchAttr'] == 'a'", DRA_EEVAL,
               "no such key: noSuchAttr");
    /* Errors are absorbed only by && / || with a deciding side. */
    expect(f, "device.driver == 'x' && device.attributes['a'].b == 1", 0);
    expect(f, "device.attributes['a'].b == 1 || true", 1);
}

static void test_capacity_and_version(void **state)
{
    fixture *f = *state;
    expect(f, "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0", 1);
    expect(f, "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('100Gi'))", 0);
    expect(f, "device.capacity['gpu.nvidia.com'].memory == quantity('80Gi')", 1);
    expect(f, "device.capacity['example.com'].slots.asInteger() == 4", 1);
    expect(f, "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('500.0.0'))", 1);
    expect(f, "device.attributes['gpu.nvidia.com'].driverVersion.major() == 550", 1);
    /* Opaque == another type is an error, not false (cel-go). */
    expect_err(f, "device.attributes['gpu.nvidia.com'].driverVersion == '550.54.15'", DRA_EEVAL,
               "no such overload");
    expect(f, "'550.54.15' == device.attributes['gpu.nvidia.com'].driverVersion", 0);
}

static void test_compile_errors(void **state)
{
    fixture *f = *state;
    expect_err(f, "device.nope == 1", DRA_ETYPE, "undefined field 'nope'");
    expect_err(f, "1", DRA_ETYPE, "must evaluate to bool or the unknown type, not int");
    expect_err(f, "device.driver +", DRA_EPARSE, "<input>:1:");
    expect_err(f, "dev.driver == 'a'", DRA_ETYPE, "undeclared reference to 'dev'");
    expect_err(f, "device.driver == 1", DRA_ETYPE, "found no matching overload for '_==_'");
    expect_err(f, "device.attributes['gpu.nvidia.com'].productName", DRA_ETYPE,
               "could not be converted to bool");
    /* Constant arguments are validated at compile time, as Kubernetes does. */
    expect_err(f, "device.driver.matches('[')", DRA_ETYPE, "invalid matches argument");
    expect_err(f, "device.driver.matches('(a)\\\\1')", DRA_ETYPE, "invalid matches argument");
    expect_err(f, "duration('1x') > duration('1s')", DRA_ETYPE, "invalid duration argument");
    expect_err(f, "timestamp('yesterday') < timestamp('2024-01-01T00:00:00Z')", DRA_ETYPE,
               "invalid timestamp argument");
    expect(f, "duration('1h') > duration('1s')", 1);
    /* Literals passed to format() are exempt from the homogeneous rule. */
    expect(f, "'%s %d'.format(['a', 1]) == 'a 1'", 1);
    expect_err(f, "[1, 'a'] == []", DRA_ETYPE, "expected type 'int' but found 'string'");
}

static void test_caret(void **state)
{
    fixture *f = *state;
    dra_cel_program *p = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_cel_compile(f->env, "device.driver == 'a' &&\n  device.nope", 37, &p, &d),
                     DRA_ETYPE);
    assert_string_equal(dra_diag_first(&d), "ERROR: <input>:2:9: undefined field 'nope'\n"
                                            " |   device.nope\n"
                                            " | ........^");
    dra_diag_fini(&d);
}

static void test_cost_limit(void **state)
{
    fixture *f = *state;
    int r;
    char msg[256];
    const char *hostile =
        "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, "
        "[1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, "
        "[1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(g, "
        "[1,2,3,4,5,6,7,8,9,10].all(h, a + b + c + d + e + g + h > 0)))))))";
    assert_int_equal(run(f, hostile, &r, msg, sizeof msg), DRA_ECOST);
    assert_string_equal(msg, "actual cost limit exceeded");
    /* Doubling a string through bindings stops on cost, not memory. */
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_buf_puts(&b, "cel.bind(s0, 'abcdefghijklmnop', ");
    for (int i = 1; i < 40; i++)
        dra_buf_printf(&b, "cel.bind(s%d, s%d + s%d, ", i, i - 1, i - 1);
    dra_buf_puts(&b, "size(s39) > 0");
    for (int i = 0; i < 40; i++)
        dra_buf_putc(&b, ')');
    assert_int_equal(run(f, b.p, &r, msg, sizeof msg), DRA_ECOST);
    dra_buf_fini(&b);
    assert_int_equal(dra_cel_vm_last_cost(f->vm) > DRA_CEL_COST_LIMIT, 1);
}

static void test_costs(void **state)
{
    fixture *f = *state;
    dra_cel_program *p = NULL;
    int r;
    assert_int_equal(dra_cel_compile(f->env, "device.driver == 'gpu.nvidia.com'", 33, &p, NULL),
                     DRA_OK);
    assert_int_equal(dra_cel_eval_device(p, f->vm, f->dev, &r, NULL), DRA_OK);
    /* ident 1 + select 1 + string equality ceil(14 * 0.1) = 2 */
    assert_int_equal(dra_cel_vm_last_cost(f->vm), 4);
    dra_cel_program_unref(p);
}

/* lowerAscii/upperAscii return an already-converted string as is and keep
 * the code-point count for the cost tracker: results and costs must not
 * depend on which path ran. productName has 21 code points. */
static uint64_t case_cost(fixture *f, const char *expr, int want)
{
    dra_cel_program *p = NULL;
    int r = -1;
    assert_int_equal(dra_cel_compile(f->env, expr, strlen(expr), &p, NULL), DRA_OK);
    assert_int_equal(dra_cel_eval_device(p, f->vm, f->dev, &r, NULL), DRA_OK);
    assert_int_equal(r, want);
    dra_cel_program_unref(p);
    return dra_cel_vm_last_cost(f->vm);
}

static void test_ascii_case(void **state)
{
    fixture *f = *state;
#define PN "device.attributes['gpu.nvidia.com'].productName"
    /* select 4, lowerAscii ceil(2.1), contains ceil(2.1) * ceil(0.4) */
    uint64_t once = case_cost(f, PN ".lowerAscii().contains('h100')", 1);
    assert_int_equal(once, 4 + 3 + 3);
    /* The second lowerAscii finds nothing to convert (borrowed path). */
    assert_int_equal(case_cost(f, PN ".lowerAscii().lowerAscii().contains('h100')", 1),
                     once + 3);
    assert_int_equal(case_cost(f, PN ".lowerAscii().upperAscii().contains('H100')", 1),
                     once + 3);
    assert_int_equal(case_cost(f, PN ".upperAscii().upperAscii().contains('NVIDIA H100')", 1),
                     once + 3 + 3);
    case_cost(f, PN ".lowerAscii().upperAscii() == 'NVIDIA H100 80GB HBM3'", 1);
    case_cost(f, PN ".lowerAscii() == 'nvidia h100 80gb hbm3'", 1);
    case_cost(f, "device.attributes['gpu.nvidia.com'].type.lowerAscii() == 'gpu'", 1);
    case_cost(f, "device.attributes['gpu.nvidia.com'].type.upperAscii() == 'GPU'", 1);
#undef PN
}

/* Cost of |expr| on the fixture device; *rc gets the evaluation's code. */
static uint64_t cost_of(fixture *f, const char *expr, dra_err *rc, int *r)
{
    char msg[256];
    *rc = run(f, expr, r, msg, sizeof msg);
    return dra_cel_vm_last_cost(f->vm);
}

/* A call in a comprehension body that reads no local (here the product
 * name's lowerAscii()) is computed once per comprehension run and reused;
 * the same expression reading the device through a bound local is not.
 * Results, errors and costs must match (the bound form costs 1 more: the
 * `device` identifier of its cel.bind). */
static void test_hoisted_invariants(void **state)
{
    fixture *f = *state;
    static const char *const bodies[] = {
        "['a100', 'h100', 'gb200'].exists(p, %s.attributes['gpu.nvidia.com'].productName"
        ".lowerAscii().contains(p))",
        "['a100', 'gb200'].exists(p, %s.attributes['gpu.nvidia.com'].productName"
        ".lowerAscii().contains(p))",
        "['x', 'y'].all(p, p == 'x' || %s.attributes['gpu.nvidia.com'].missing"
        ".lowerAscii() == p)",
        "['y', 'x'].exists(p, p == 'x' || %s.attributes['gpu.nvidia.com'].missing"
        ".lowerAscii() == p)",
        "[].exists(p, %s.attributes['gpu.nvidia.com'].missing.lowerAscii() == p)",
        "[1, 2, 3].map(i, [10, 20].filter(j, %s.attributes['gpu.nvidia.com'].productName"
        ".lowerAscii().size() * i > j)).size() == 3",
        "['A', 'B'].all(o, [1, 2].exists(i, o.lowerAscii() + %s.attributes["
        "'gpu.nvidia.com'].type.upperAscii() == 'aGPU'))",
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(a, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(b, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(c, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(d, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(e, %s.attributes['gpu.nvidia.com'].productName"
        ".lowerAscii().size() > 0)))))",
    };
    static const int want_rc[] = {DRA_OK, DRA_OK, DRA_EEVAL, DRA_OK, DRA_OK, DRA_OK,
                                  DRA_OK, DRA_ECOST};
    static const int want_r[] = {1, 0, 0, 1, 0, 1, 0, 0};
    char plain[1024], bound[1024];
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        dra_err rc1, rc2;
        int r1, r2;
        char tmp[900];
        snprintf(plain, sizeof plain, bodies[i], "device");
        snprintf(tmp, sizeof tmp, bodies[i], "dv");
        snprintf(bound, sizeof bound, "cel.bind(dv, device, %s)", tmp);
        uint64_t c1 = cost_of(f, plain, &rc1, &r1);
        uint64_t c2 = cost_of(f, bound, &rc2, &r2);
        /* Stopped on cost: where it stops shifts with the extra unit, so
         * compare with the figure the engine gave before hoisting. */
        uint64_t want_c2 = rc1 == DRA_ECOST ? 1000001 : c1 + 1;
        if (rc1 == DRA_ECOST && c1 != 1000010)
            fail_msg("%s: stopped at cost %llu, want 1000010", plain, (unsigned long long)c1);
        if ((int)rc1 != want_rc[i] || r1 != want_r[i] || rc2 != rc1 || r2 != r1 ||
            c2 != want_c2)
            fail_msg("%s: rc %s/%s result %d/%d cost %llu/%llu", plain, dra_errname(rc1),
                     dra_errname(rc2), r1, r2, (unsigned long long)c1,
                     (unsigned long long)c2);
    }
}

/* The optimised code (fused device reads and comparisons, DEV_QCMP, the
 * conjunction path, fused exists/all loops, hoisted invariants) against
 * the plain instructions (dra_cel_options.plain_code): results, error
 * messages and costs must be the same. */
static void test_fused_matches_plain(void **state)
{
    fixture *f = *state;
    static const char *const exprs[] = {
#define CAP "device.capacity['gpu.nvidia.com'].memory"
#define PN "device.attributes['gpu.nvidia.com'].productName"
        CAP ".compareTo(quantity('40Gi')) > 0",
        CAP ".compareTo(quantity('80Gi')) > 0",
        CAP ".compareTo(quantity('80Gi')) >= 0",
        CAP ".compareTo(quantity('80Gi')) == 0",
        CAP ".compareTo(quantity('80Gi')) != 0",
        CAP ".compareTo(quantity('81920Mi')) <= 0",
        CAP ".compareTo(quantity('85899345920')) == 0",
        CAP ".compareTo(quantity('85899345921')) < 0",
        CAP ".compareTo(quantity('0.5Ti')) < 0",
        CAP ".compareTo(quantity('1e11')) < 1",
        CAP ".compareTo(quantity('100m')) > -1",
        CAP ".compareTo(quantity('1Ti')) == -1",
        CAP ".compareTo(quantity('1Ti')) > -5",
        CAP ".compareTo(quantity('1k')) >= 2",
        CAP ".isGreaterThan(quantity('80Gi'))",
        CAP ".isGreaterThan(quantity('79Gi'))",
        CAP ".isLessThan(quantity('81Gi'))",
        CAP ".isLessThan(quantity('-1'))",
        "device.capacity['gpu.nvidia.com']['memory'].compareTo(quantity('80Gi')) == 0",
        "device.capacity['example.com'].slots.isLessThan(quantity('5'))",
        "device.capacity['gpu.nvidia.com'].missing.compareTo(quantity('1')) > 0",
        "device.capacity['nope.example.com'].memory.isGreaterThan(quantity('1'))",
        "device.driver == 'gpu.nvidia.com' && " CAP ".compareTo(quantity('40Gi')) > 0",
        CAP ".isLessThan(quantity('1Gi')) && device.driver == 'gpu.nvidia.com'",
        "device.attributes['gpu.nvidia.com'].missing == 'x' && " CAP ".isLessThan(quantity('1Gi'))",
        CAP ".isLessThan(quantity('1Gi')) || device.attributes['gpu.nvidia.com'].missing == 'x'",
        "[1, 2].exists(i, " CAP ".compareTo(quantity('40Gi')) > i)",
        "device.driver == 'gpu.nvidia.com'",
        "device.driver != 'gpu.nvidia.com'",
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
        "device.attributes['gpu.nvidia.com'].index == 3 && device.attributes['gpu.nvidia.com'].mig",
        "device.attributes['gpu.nvidia.com'].missing == 'gpu' && device.driver == 'x'",
        "device.driver == 'x' && device.attributes['gpu.nvidia.com'].missing == 'gpu'",
        "device.attributes['gpu.nvidia.com'].missing == ''",
        PN " != 'NVIDIA H100 80GB HBM3'",
        "['a100', 'h100', 'gb200'].exists(p, " PN ".lowerAscii().contains(p))",
        "['a100', 'gb200'].exists(p, " PN ".lowerAscii().contains(p))",
        "['a100', 'gb200'].all(p, !" PN ".lowerAscii().contains(p))",
        "['h100', 'a100'].all(p, " PN ".lowerAscii().contains(p))",
        "[].exists(p, " PN ".contains(p))",
        "[].all(p, " PN ".contains(p))",
        "['x', 'y'].exists(p, device.attributes['gpu.nvidia.com'].missing == p)",
        "['x', 'y'].all(p, device.attributes['gpu.nvidia.com'].missing == p)",
        "['x', 'y'].exists(p, p == 'y' || device.attributes['gpu.nvidia.com'].missing == p)",
        "['y', 'x'].exists(p, p == 'y' || device.attributes['gpu.nvidia.com'].missing == p)",
        "['x', 'y'].all(p, p == 'y' && device.attributes['gpu.nvidia.com'].missing == p)",
        "['y', 'x'].all(p, p == 'x' || device.attributes['gpu.nvidia.com'].missing == p)",
        "[1, 2, 3].exists_one(i, i == device.attributes['gpu.nvidia.com'].index)",
        "{'a': 1, 'b': 2}.exists(k, k == 'b')",
        "{'a': 1, 'b': 2}.all(k, k != 'c')",
        "[[1, 2], [3]].exists(l, l.all(i, i > 2))",
        "[[1, 2], [3]].all(l, l.exists(i, i > 2))",
        "[1, 2, 3].map(i, [10, 20].filter(j, " PN ".lowerAscii().size() * i > j)).size() == 3",
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(a, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(b, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(c, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(d, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(e, " PN ".lowerAscii().size() > 0)))))",
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].exists(a, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].exists(b, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].exists(c, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].exists(d, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].exists(e, " PN ".size() < 0)))))",
        "['a', 1].exists(x, x == 1)",
        "[1, 'a'].all(x, x == 1)",
        "[1, 2].exists(x, x / 0 == 1)",
        "[1, 2].all(x, x / 0 == 1)",
        "[0, 2].exists(x, 2 / x == 1)",
        "[2, 0].all(x, 2 / x == 1)",
        "['nvidia', 'x'].exists(p, " PN ".lowerAscii().startsWith(p))",
        "['HBM3', 'x'].all(p, " PN ".endsWith(p))",
        "['H100', 'h100'].exists(p, " PN ".upperAscii().contains(p))",
        "['h1.0', '^nv'].exists(p, " PN ".lowerAscii().matches(p))",
        "['a', 'b'].exists(p, device.attributes['gpu.nvidia.com'].missing.lowerAscii().contains(p))",
        "['a', 'b'].all(p, device.attributes['nope.example.com'].type.contains(p))",
        "['3', 'b'].exists(p, device.attributes['gpu.nvidia.com'].index.contains(p))",
        "['gpu', 'b'].exists(p, device.attributes['gpu.nvidia.com'].type.contains(p))",
        "['gpu', 'b'].all(p, device.attributes['gpu.nvidia.com']['type'].contains(p))",
        "[quantity('1Gi'), quantity('100Gi')].exists(q, " CAP ".isGreaterThan(q))",
        "[quantity('1Gi'), quantity('100Gi')].all(q, " CAP ".isGreaterThan(q))",
        "[1, 'x'].exists(p, " PN ".contains(p))",
        "[].all(p, " PN ".lowerAscii().contains(p))",
#undef PN
#undef CAP
    };
    /* Default limit, then limits that stop the loops at every point. */
    static const uint64_t limits[] = {0, 3, 5, 8, 9, 12, 14, 17, 20, 25, 31};
    char m1[256], m2[256];
    int bad = 0;
    dra_cel_env *env = f->env;
    for (size_t li = 0; li < sizeof limits / sizeof limits[0]; li++) {
        dra_cel_options fast = {.cost_limit = limits[li]};
        dra_cel_options o = {.cost_limit = limits[li], .plain_code = 1};
        dra_cel_env *fast_env, *plain_env;
        assert_int_equal(dra_cel_env_new_dra(NULL, &fast, &fast_env), DRA_OK);
        assert_int_equal(dra_cel_env_new_dra(NULL, &o, &plain_env), DRA_OK);
        for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
            int r1, r2;
            dra_err rc1, rc2;
            uint64_t c1, c2;
            f->env = fast_env;
            rc1 = run(f, exprs[i], &r1, m1, sizeof m1);
            c1 = dra_cel_vm_last_cost(f->vm);
            f->env = plain_env;
            rc2 = run(f, exprs[i], &r2, m2, sizeof m2);
            c2 = dra_cel_vm_last_cost(f->vm);
            if (rc1 != rc2 || r1 != r2 || strcmp(m1, m2) || c1 != c2) {
                print_error("limit %llu: %s: rc %s/%s result %d/%d cost %llu/%llu msg '%s'/'%s'\n",
                            (unsigned long long)limits[li], exprs[i], dra_errname(rc1),
                            dra_errname(rc2), r1, r2, (unsigned long long)c1,
                            (unsigned long long)c2, m1, m2);
                bad++;
            }
        }
        dra_cel_env_free(fast_env);
        dra_cel_env_free(plain_env);
    }
    f->env = env;
    assert_int_equal(bad, 0);
}

/* Domains with more than 8 entries get a hash index: every attribute
 * and capacity must still be found, and a missing one reported. */
static void test_many_attributes(void **state)
{
    fixture *f = *state;
    dra_cel_attr attrs[40];
    dra_cel_capacity caps[12];
    char names[40][32], cnames[12][16], expr[160], msg[256];
    dra_cel_device dev = {.driver = "gpu.nvidia.com", .attrs = attrs, .nattrs = 40,
                          .caps = caps, .ncaps = 12};
    dra_cel_prepared *saved = f->dev, *pd = NULL;
    int r;
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], i % 2 ? "a%d" : "gpu.nvidia.com/a%d", i);
        attrs[i] = (dra_cel_attr){.name = names[i], .kind = DRA_CEL_ATTR_INT, .i = i};
    }
    for (int i = 0; i < 12; i++) {
        snprintf(cnames[i], sizeof cnames[i], "c%d", i);
        caps[i].name = cnames[i];
        assert_int_equal(dra_quantity_parse("4Gi", 3, &caps[i].value), DRA_OK);
        caps[i].value.mant += i;
    }
    assert_int_equal(dra_cel_device_prepare(NULL, &dev, &pd), DRA_OK);
    f->dev = pd;
    for (int i = 0; i < 40; i++) {
        snprintf(expr, sizeof expr, "device.attributes['gpu.nvidia.com'].a%d == %d", i, i);
        if (run(f, expr, &r, msg, sizeof msg) != DRA_OK)
            fail_msg("%s: %s", expr, msg);
        assert_int_equal(r, 1);
    }
    for (int i = 0; i < 12; i++) {
        snprintf(expr, sizeof expr,
                 "device.capacity['gpu.nvidia.com'].c%d.compareTo(quantity('4Gi')) == %d", i,
                 i ? 1 : 0);
        assert_int_equal(run(f, expr, &r, msg, sizeof msg), DRA_OK);
        assert_int_equal(r, 1);
    }
    assert_int_equal(run(f, "device.attributes['gpu.nvidia.com'].a40 == 40", &r, msg, sizeof msg),
                     DRA_EEVAL);
    assert_string_equal(msg, "no such key: a40");
    assert_int_equal(run(f, "'a39' in device.attributes['gpu.nvidia.com'] && "
                            "!('a40' in device.attributes['gpu.nvidia.com'])",
                         &r, msg, sizeof msg),
                     DRA_OK);
    assert_int_equal(r, 1);
    f->dev = saved;
    dra_cel_prepared_free(pd);
}

/* lowerAscii/upperAscii work eight bytes at a time: every length around
 * the word size, letters at the range edges, and multi-byte UTF-8 that
 * must stay as it is, against a byte-by-byte reference. */
static void test_ascii_case_words(void **state)
{
    fixture *f = *state;
    static const char *const pieces[] = {"@", "A", "Z", "[", "`", "a", "z", "{", "\xc3\x89",
                                         "\xc3\xa9", "0", " ", "~", "M", "m"};
    unsigned seed = 12345;
    for (int len = 0; len <= 40; len++) {
        for (int rep = 0; rep < 6; rep++) {
            char in[200] = "", lo[200], up[200], expr[1024];
            size_t n = 0;
            int r;
            for (int i = 0; i < len; i++) {
                seed = seed * 1103515245u + 12345u;
                const char *pc = pieces[(seed >> 16) % (sizeof pieces / sizeof *pieces)];
                memcpy(in + n, pc, strlen(pc));
                n += strlen(pc);
            }
            in[n] = '\0';
            for (size_t i = 0; i <= n; i++) {
                unsigned char ch = (unsigned char)in[i];
                lo[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch ^ 32 : ch);
                up[i] = (char)(ch >= 'a' && ch <= 'z' ? ch ^ 32 : ch);
            }
            snprintf(expr, sizeof expr, "'%s'.lowerAscii() == '%s' && '%s'.upperAscii() == '%s'",
                     in, lo, in, up);
            assert_int_equal(run(f, expr, &r, NULL, 0), DRA_OK);
            if (r != 1)
                fail_msg("%s", expr);
        }
    }
}

static void test_length_limit(void **state)
{
    fixture *f = *state;
    char *big = malloc(DRA_CEL_MAX_EXPR_LEN + 2);
    int r;
    char msg[256];
    assert_non_null(big);
    memset(big, ' ', DRA_CEL_MAX_EXPR_LEN + 1);
    memcpy(big, "true", 4);
    big[DRA_CEL_MAX_EXPR_LEN + 1] = 0;
    assert_int_equal(run(f, big, &r, msg, sizeof msg), DRA_ELIMIT);
    big[DRA_CEL_MAX_EXPR_LEN] = 0;
    assert_int_equal(run(f, big, &r, msg, sizeof msg), DRA_OK);
    free(big);
}

/* After the first evaluation, evaluating again allocates nothing. */
static void test_no_alloc(void **state)
{
    fixture *f = *state;
    dra_failmem fm;
    dra_cel_vm *vm;
    dra_cel_program *p = NULL;
    int r;
    const char *e = "device.driver == 'gpu.nvidia.com' && "
                    "device.attributes['gpu.nvidia.com'].type == 'gpu' && "
                    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0";
    dra_failmem_init(&fm, -1);
    assert_int_equal(dra_cel_vm_new(&fm.mem, &vm), DRA_OK);
    assert_int_equal(dra_cel_compile(f->env, e, strlen(e), &p, NULL), DRA_OK);
    assert_int_equal(dra_cel_eval_device(p, vm, f->dev, &r, NULL), DRA_OK);
    assert_int_equal(r, 1);
    long before = fm.allocs;
    for (int i = 0; i < 100; i++)
        assert_int_equal(dra_cel_eval_device(p, vm, f->dev, &r, NULL), DRA_OK);
    assert_int_equal(fm.allocs, before);
    dra_cel_program_unref(p);
    dra_cel_vm_free(vm);
    assert_int_equal(fm.live, 0);
}

/* Every allocation failure during env/compile/eval is reported, never a
 * crash or a leak. */
static void test_failmalloc(void **state)
{
    fixture *f = *state;
    const char *e = "device.attributes['gpu.nvidia.com'].exists(k, k.startsWith('p')) && "
                    "[1, 2].map(x, x * 2)[1] == 4";
    for (long n = 0; n < 2000; n++) {
        dra_failmem fm;
        dra_cel_env *env = NULL;
        dra_cel_program *p = NULL;
        dra_cel_vm *vm = NULL;
        int r = -1;
        dra_err rc;
        dra_failmem_init(&fm, n);
        rc = dra_cel_env_new_dra(&fm.mem, NULL, &env);
        if (!rc)
            rc = dra_cel_compile(env, e, strlen(e), &p, NULL);
        if (!rc)
            rc = dra_cel_vm_new(&fm.mem, &vm);
        if (!rc)
            rc = dra_cel_eval_device(p, vm, f->dev, &r, NULL);
        dra_cel_program_unref(p);
        dra_cel_vm_free(vm);
        dra_cel_env_free(env);
        assert_int_equal(fm.live, 0);
        if (!fm.failed) {
            assert_int_equal(rc, DRA_OK);
            assert_int_equal(r, 1);
            return;
        }
        if (rc != DRA_ENOMEM && rc != DRA_EEVAL)
            fail_msg("allocation %ld: %s", n, dra_errname(rc));
    }
    fail_msg("failmalloc loop did not finish");
}

/* One program shared by threads, each with its own VM. */
typedef struct shared_run {
    const dra_cel_program *p;
    const dra_cel_prepared *dev;
    int bad;
} shared_run;

static void *eval_thread(void *arg)
{
    shared_run *sr = arg;
    dra_cel_vm *vm;
    int r;
    if (dra_cel_vm_new(NULL, &vm)) {
        sr->bad = 1;
        return NULL;
    }
    for (int i = 0; i < 20000; i++)
        if (dra_cel_eval_device(sr->p, vm, sr->dev, &r, NULL) != DRA_OK || r != 1)
            sr->bad = 1;
    dra_cel_vm_free(vm);
    return NULL;
}

static void test_threads(void **state)
{
    fixture *f = *state;
    const char *e = "device.attributes['gpu.nvidia.com'].productName.matches('^NVIDIA') && "
                    "[1, 2, 3].map(x, x * 2).exists(y, y == 6) && 'v' + 'w' == 'vw'";
    dra_cel_program *p = NULL;
    pthread_t t[4];
    shared_run sr[4];
    assert_int_equal(dra_cel_compile(f->env, e, strlen(e), &p, NULL), DRA_OK);
    for (int i = 0; i < 4; i++) {
        sr[i] = (shared_run){p, f->dev, 0};
        assert_int_equal(pthread_create(&t[i], NULL, eval_thread, &sr[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(sr[i].bad, 0);
    }
    dra_cel_program_unref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_driver_and_attributes),
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_capacity_and_version),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_caret),
        cmocka_unit_test(test_cost_limit),
        cmocka_unit_test(test_costs),
        cmocka_unit_test(test_ascii_case),
        cmocka_unit_test(test_hoisted_invariants),
        cmocka_unit_test(test_fused_matches_plain),
        cmocka_unit_test(test_many_attributes),
        cmocka_unit_test(test_ascii_case_words),
        cmocka_unit_test(test_length_limit),
        cmocka_unit_test(test_no_alloc),
        cmocka_unit_test(test_failmalloc),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
