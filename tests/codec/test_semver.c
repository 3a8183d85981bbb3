/* Semantic versions: strict 2.0.0 syntax and section-11 precedence. */
#include "dra_test.h"
#include "dra/codec.h"

static void test_parse(void **state)
{
    static const char *const good[] = {
        "0.0.0", "1.2.3", "10.20.30", "1.1.2-prerelease+meta", "1.1.2+meta",
        "1.1.2+meta-valid", "1.0.0-alpha", "1.0.0-beta", "1.0.0-alpha.beta",
        "1.0.0-alpha.beta.1", "1.0.0-alpha.1", "1.0.0-alpha0.valid",
        "1.0.0-alpha.0valid", "1.0.0-alpha-a.b-c-somethinglong+build.1-aef.1-its-okay",
        "1.0.0-rc.1+build.1", "2.0.0-rc.1+build.123", "1.2.3-beta", "10.2.3-DEV-SNAPSHOT",
        "1.2.3-SNAPSHOT-123", "2.0.0+build.1848", "2.0.1-alpha.1227", "1.0.0-alpha+beta",
        "1.2.3----RC-SNAPSHOT.12.9.1--.12+788", "1.2.3----R-S.12.9.1--.12+meta",
        "1.0.0+0.build.1-rc.10000aaa-kk-0.1", "18446744073709551615.0.0",
        "1.0.0-0A.is.legal", "1.0.0+001",
    };
    static const char *const bad[] = {
        "", "1", "1.2", "1.2.3-0123", "1.2.3-0123.0123", "1.1.2+.123", "+invalid",
        "-invalid", "-invalid+invalid", "-invalid.01", "alpha", "alpha.beta",
        "alpha.beta.1", "alpha.1", "alpha+beta", "alpha_beta", "alpha.", "alpha..",
        "beta", "1.0.0-alpha_beta", "-alpha.", "1.0.0-alpha..", "1.0.0-alpha..1",
        "1.0.0-alpha...1", "01.1.1", "1.01.1", "1.1.01", "1.2.3.DEV", "1.2-SNAPSHOT",
        "1.2.31.2.3----RC-SNAPSHOT.12.09.1--..12+788", "1.2-RC-SNAPSHOT",
        "-1.0.3-gamma+b7718", "+justmeta", "9.8.7+meta+meta", "9.8.7-whatever+meta+meta",
        "18446744073709551616.0.0", "1.0.0-18446744073709551616", "1.2.3-", "1.2.3+",
        "1.2.3 ", " 1.2.3", "v1.2.3", "1.2.3-a+b.", "1.2.3-é",
    };
    dra_semver v;
    (void)state;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (dra_semver_parse(good[i], strlen(good[i]), &v) != DRA_OK)
            fail_msg("%s should parse", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (dra_semver_parse(bad[i], strlen(bad[i]), &v) != DRA_EPARSE)
            fail_msg("%s should not parse", bad[i]);
    assert_int_equal(dra_semver_parse("1.2.3-rc.1+b.5", 14, &v), DRA_OK);
    assert_true(v.major == 1 && v.minor == 2 && v.patch == 3);
    assert_int_equal(v.prelen, 4);
    assert_memory_equal(v.pre, "rc.1", 4);
    assert_int_equal(v.buildlen, 3);
    assert_memory_equal(v.build, "b.5", 3);
    /* length-bounded: the text need not be NUL-terminated */
    assert_int_equal(dra_semver_parse("1.2.3xyz", 5, &v), DRA_OK);
}

static int cmp(const char *a, const char *b)
{
    dra_semver x, y;
    assert_int_equal(dra_semver_parse(a, strlen(a), &x), DRA_OK);
    assert_int_equal(dra_semver_parse(b, strlen(b), &y), DRA_OK);
    return dra_semver_cmp(&x, &y);
}

static void test_precedence(void **state)
{
    /* The chain from semver.org section 11, in increasing order. */
    static const char *const chain[] = {
        "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
        "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1",
        "1.1.0", "1.10.0", "2.0.0", "10.0.0",
    };
    size_t n = sizeof chain / sizeof chain[0];
    (void)state;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int want = i < j ? -1 : i > j, got = cmp(chain[i], chain[j]);
            if (got != want)
                fail_msg("cmp(%s, %s) = %d, want %d", chain[i], chain[j], got, want);
        }
    assert_int_equal(cmp("1.0.0+a", "1.0.0+b"), 0);
    assert_int_equal(cmp("1.0.0-1", "1.0.0-a"), -1);
    assert_int_equal(cmp("1.0.0-99999999999999999", "1.0.0-100000000000000000"), -1);
    assert_int_equal(cmp("1.0.0-a.b", "1.0.0-a"), 1);
    assert_int_equal(cmp("1.0.0-A", "1.0.0-a"), -1);
    assert_int_equal(cmp("1.0.0-alpha-1", "1.0.0-alpha"), 1);
    assert_int_equal(cmp("18446744073709551615.0.0", "18446744073709551614.9.9"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_precedence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
