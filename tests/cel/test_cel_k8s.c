/* Kubernetes' DRA selector cases (the scenarios of
 * k8s.io/dynamic-resource-allocation/cel's compile tests): the result or
 * error each expression gives on its device, and the worst-case cost
 * estimate Kubernetes computes for it. */
#include "dra_test.h"

#include "dra/cel.h"

typedef struct kcase {
    const char *name, *expr;
    int want;            /* 1/0 result; -1 evaluation error; -2 compile error */
    const char *msg;     /* substring of the error */
    uint64_t cost;       /* expected estimate; 0 = not checked */
} kcase;

static const kcase cases[] = {
    {"true", "true", 1, NULL, 0},
    {"syntax-error", "?!", -2, "Syntax error", 0},
    {"type-error", "1", -2, "must evaluate to bool or the unknown type, not int", 0},
    {"runtime-error-lookup-identifier",
     "device.attributes[\"no-such-domain\"].noSuchAttr.isGreaterThan(quantity(\"0\"))", -1,
     "no such key: noSuchAttr", 6},
    {"runtime-error-lookup-map",
     "device.attributes[\"no-such-domain\"][\"noSuchAttr\"].isGreaterThan(quantity(\"0\"))", -1,
     "no such key: noSuchAttr", 6},
    {"domain-check-negative", "\"no-such-domain\" in device.attributes", 0, NULL, 3},
    {"domain-check-positive", "\"dra.example.com\" in device.attributes", 1, NULL, 3},
    {"empty-driver-name", "device.driver == \"\"", 0, NULL, 2},
    {"real-driver-name", "device.driver == \"dra.example.com\"", 1, NULL, 4},
    {"driver-name-qualifier", "device.attributes[\"dra.example.com\"].name", 1, NULL, 4},
    {"driver-name-qualifier-map-lookup", "device.attributes[\"dra.example.com\"][\"name\"]", 1,
     NULL, 4},
    {"bind", "cel.bind(dra, device.attributes[\"dra.example.com\"], dra.name)", 1, NULL, 15},
    {"qualified-attribute-name", "device.attributes[\"other.example.com\"].name", 1, NULL, 4},
    {"int", "device.attributes[\"dra.example.com\"].int > 0", 1, NULL, 5},
    {"string", "device.attributes[\"dra.example.com\"].string == \"fish\"", 1, NULL, 5},
    {"macro-exists-on-int", "device.attributes[\"dra.example.com\"].int.exists(x, x > 0)", -1,
     "got 'types.Int', expected iterable type", 389},
    {"macro-exists-on-string",
     "device.attributes[\"dra.example.com\"].string.exists(x, x == \"fish\")", -1,
     "got 'types.String', expected iterable type", 389},
    {"macro-exists-on-version",
     "device.attributes[\"dra.example.com\"].version.exists(x, x.isGreaterThan(semver(\"0.0.1\")))",
     -1, "got 'cel.Semver', expected iterable type", 5 + 7 * 64},
    {"version", "device.attributes[\"dra.example.com\"].version.isGreaterThan(semver(\"0.0.1\"))",
     1, NULL, 6},
    {"version_v",
     "device.attributes[\"dra.example.com\"].version.isGreaterThan(semver(\"v0.0.1\", true)) && "
     "isSemver(\"v1.0.0\", true)",
     1, NULL, 7},
    {"quantity", "device.capacity[\"dra.example.com\"].quantity.isGreaterThan(quantity(\"1Ki\"))",
     1, NULL, 6},
    {"check-positive",
     "\"quantity\" in device.capacity[\"dra.example.com\"] && "
     "device.capacity[\"dra.example.com\"].quantity.isGreaterThan(quantity(\"1Ki\"))",
     1, NULL, 10},
    {"check-negative",
     "!(\"name\" in device.capacity[\"dra.example.com\"]) || "
     "device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
     1, NULL, 11},
    {"all",
     "device.capacity[\"dra.example.com\"].quantity.isGreaterThan(quantity(\"1Ki\")) &&\n"
     "device.attributes[\"dra.example.com\"].bool &&\n"
     "device.attributes[\"dra.example.com\"].int > 0 &&\n"
     "device.attributes[\"dra.example.com\"].string == \"fish\" &&\n"
     "device.attributes[\"dra.example.com\"].version.isGreaterThan(semver(\"0.0.1\")) &&\n"
     "device.capacity[\"dra.example.com\"][\"quantity\"].isGreaterThan(quantity(\"1Ki\")) &&\n"
     "device.attributes[\"dra.example.com\"][\"bool\"] &&\n"
     "device.attributes[\"dra.example.com\"][\"int\"] > 0 &&\n"
     "device.attributes[\"dra.example.com\"][\"string\"] == \"fish\" &&\n"
     "device.attributes[\"dra.example.com\"][\"version\"].isGreaterThan(semver(\"0.0.1\"))",
     1, NULL, 52},
    {"check_attribute_domains", "device.attributes.exists_one(x, x == \"dra.example.com\")", 1,
     NULL, 164},
    {"check_attribute_ids", "device.attributes[\"dra.example.com\"].exists_one(x, x == \"services\")",
     1, NULL, 133},
    {"split_attribute",
     "device.attributes[\"dra.example.com\"].services.split(\"example\").size() >= 2", 1, NULL, 19},
    {"regexp_attribute", "device.attributes[\"dra.example.com\"].services.matches(\"[^a]?sym\")", 0,
     NULL, 18},
    {"check_capacity_domains", "device.capacity.exists_one(x, x == \"dra.example.com\")", 1, NULL,
     164},
    {"check_capacity_ids", "device.capacity[\"dra.example.com\"].exists_one(x, x == \"quantity\")",
     1, NULL, 133},
    {"expensive",
     "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, "
     "5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, "
     "9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, "
     "10].all(z5, int('1'.find('[0-9]*')) < 100)))))))",
     -1, "actual cost limit exceeded", 85555551},
    {"allow_multiple_allocations", "device.allowMultipleAllocations == false", 1, NULL, 3},
};

static void test_k8s_cases(void **state)
{
    dra_cel_env *env;
    dra_cel_vm *vm;
    dra_cel_prepared *pd;
    dra_cel_attr attrs[6] = {
        {.name = "bool", .kind = DRA_CEL_ATTR_BOOL, .b = 1},
        {.name = "int", .kind = DRA_CEL_ATTR_INT, .i = 1},
        {.name = "string", .kind = DRA_CEL_ATTR_STRING, .s = "fish"},
        {.name = "version", .kind = DRA_CEL_ATTR_VERSION, .s = "1.0.0"},
        {.name = "services", .kind = DRA_CEL_ATTR_STRING, .s = "some_example_value"},
        {.name = "other.example.com/name", .kind = DRA_CEL_ATTR_BOOL, .b = 1},
    };
    dra_cel_attr name_attr = {.name = "name", .kind = DRA_CEL_ATTR_BOOL, .b = 1};
    dra_cel_attr all[7];
    dra_cel_capacity caps[1];
    dra_cel_device dev = {0};
    int bad = 0;
    (void)state;
    assert_int_equal(dra_semver_parse("1.0.0", 5, &attrs[3].version), DRA_OK);
    memcpy(all, attrs, sizeof attrs);
    all[6] = name_attr;
    caps[0].name = "quantity";
    assert_int_equal(dra_quantity_parse("1Mi", 3, &caps[0].value), DRA_OK);
    dev.driver = "dra.example.com";
    dev.attrs = all;
    dev.nattrs = 7;
    dev.caps = caps;
    dev.ncaps = 1;
    assert_int_equal(dra_cel_env_new_dra(NULL, NULL, &env), DRA_OK);
    assert_int_equal(dra_cel_vm_new(NULL, &vm), DRA_OK);
    assert_int_equal(dra_cel_device_prepare(NULL, &dev, &pd), DRA_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const kcase *k = &cases[i];
        dra_cel_program *p = NULL;
        dra_diag d;
        int r = -9;
        dra_err rc;
        dra_diag_init(&d, NULL);
        rc = dra_cel_compile(env, k->expr, strlen(k->expr), &p, &d);
        if (!rc) {
            if (k->cost && dra_cel_program_cost_estimate(p) != k->cost) {
                print_error("%s: estimate %llu, want %llu\n", k->name,
                            (unsigned long long)dra_cel_program_cost_estimate(p),
                            (unsigned long long)k->cost);
                bad++;
            }
            rc = dra_cel_eval_device(p, vm, pd, &r, &d);
            if (!rc && k->cost && dra_cel_vm_last_cost(vm) > k->cost) {
                print_error("%s: actual cost %llu above the estimate %llu\n", k->name,
                            (unsigned long long)dra_cel_vm_last_cost(vm),
                            (unsigned long long)k->cost);
                bad++;
            }
        }
        int got = rc == DRA_OK ? r : (p ? -1 : -2);
        if (got != k->want || (k->msg && !(dra_diag_first(&d) && strstr(dra_diag_first(&d), k->msg)))) {
            print_error("%s: got %d (%s), want %d (%s)\n", k->name, got,
                        dra_diag_first(&d) ? dra_diag_first(&d) : "", k->want,
                        k->msg ? k->msg : "");
            bad++;
        }
        dra_cel_program_unref(p);
        dra_diag_fini(&d);
    }
    dra_cel_prepared_free(pd);
    dra_cel_vm_free(vm);
    dra_cel_env_free(env);
    if (bad)
        fail_msg("%d mismatch(es)", bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_k8s_cases)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
