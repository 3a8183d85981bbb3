/* Tests for the value-independent parts of the Kubernetes quantity and
 * semver libraries: resource.ParseQuantity's error texts and semver
 * normalisation and blang/semver's messages. */
#include "dra_test.h"

#include "cel/lib_common.h"

static void test_quantity_errors(void **state)
{
    static const struct {
        const char *s, *msg;
    } cases[] = {
        {"Three", "quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        {"Mi", "quantities must match the regular expression "
               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        {"1,3G", "quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        {"200K", "unable to parse quantity's suffix"},
        {"1.2.3", "unable to parse numeric part of quantity"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(lib_quantity_parse_error(cases[i].s, strlen(cases[i].s)),
                            cases[i].msg);
}

static void test_semver_normalize(void **state)
{
    static const struct {
        const char *in, *out, *msg;
    } cases[] = {
        {"v1.0.0", "1.0.0", NULL},
        {"1.0", "1.0.0", NULL},
        {"1", "1.0.0", NULL},
        {"01.01.01", "1.1.1", NULL},
        {"v00.000.0", "0.0.0", NULL},
        {"1.2.3-alpha.1+build.01", "1.2.3-alpha.1+build.01", NULL},
        {"1.2.03-rc", "1.2.3-rc", NULL},
        {"1.2.0-rc", "1.2.0-rc", NULL},
        {"1.2.00-rc", "1.2.0-rc", NULL},
        {"1.2-rc", NULL, "short version cannot contain PreRelease/Build meta data"},
        {"1+b", NULL, "short version cannot contain PreRelease/Build meta data"},
        {"vv1", "0v1.0.0", NULL}, /* Go prefixes a 0 to non-digit parts */
        {"", ".0.0", NULL},
        {"1.", "1..0", NULL},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        const char *msg = NULL;
        size_t n = lib_semver_normalize(cases[i].in, strlen(cases[i].in), out,
                                        sizeof out, &msg);
        if (cases[i].out) {
            assert_null(msg);
            out[n] = '\0';
            assert_string_equal(out, cases[i].out);
        } else {
            assert_int_equal(n, 0);
            assert_string_equal(msg, cases[i].msg);
        }
    }
}

static void test_semver_errors(void **state)
{
    static const struct {
        const char *s, *msg;
    } cases[] = {
        {"", "Version string empty"},
        {"1.0", "No Major.Minor.Patch elements found"},
        {"a.0.0", "Invalid character(s) found in major number \"a\""},
        {"01.0.0", "Major number must not contain leading zeroes \"01\""},
        {"1.x.0", "Invalid character(s) found in minor number \"x\""},
        {"1.0.01", "Patch number must not contain leading zeroes \"01\""},
        {"1.0.0-", "Prerelease is empty"},
        {"1.0.0-a..b", "Prerelease is empty"},
        {"1.0.0-01", "Numeric PreRelease version must not contain leading zeroes \"01\""},
        {"1.0.0-a_b", "Invalid character(s) found in prerelease \"a_b\""},
        {"1.0.0+", "Build meta data is empty"},
        {"1.0.0+a$", "Invalid character(s) found in build meta data \"a$\""},
        {"1..0", "strconv.ParseUint: parsing \"\": invalid syntax"},
        {"1.0.99999999999999999999", "strconv.ParseUint: parsing \"99999999999999999999\": value out of range"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[256];
        assert_string_equal(lib_semver_parse_error(cases[i].s, strlen(cases[i].s),
                                                   buf, sizeof buf),
                            cases[i].msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantity_errors),
        cmocka_unit_test(test_semver_normalize),
        cmocka_unit_test(test_semver_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
