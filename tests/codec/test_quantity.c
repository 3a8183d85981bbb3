/* resource.Quantity: parse -> String() tables cross-checked against the
 * expectations of apimachinery's quantity_test.go (rewritten here as our
 * own table), exact comparison, arithmetic, AsInt64 and range errors. */
#include <math.h>

#include "dra_test.h"
#include "dra/codec.h"

/* What upstream's String()/MarshalJSON prints for a parsed quantity: the
 * text itself when upstream keeps it, else the canonical form. */
static void upstream_string(const char *in, const dra_quantity *q, char *buf, size_t n)
{
    if (q->flags & DRA_QTY_F_TEXT)
        snprintf(buf, n, "%s", in);
    else
        dra_quantity_str(q, buf, n);
}

struct pcase {
    const char *in;
    const char *out; /* upstream String(); NULL: must fail */
    dra_err err;
};

static const struct pcase parse_cases[] = {
    /* zeros in every suffix */
    {"0", "0", 0}, {"0n", "0", 0}, {"0u", "0", 0}, {"0m", "0", 0},
    {"0Ki", "0", 0}, {"0k", "0", 0}, {"0Mi", "0", 0}, {"0M", "0", 0},
    {"0Gi", "0", 0}, {"0G", "0", 0}, {"0Ti", "0", 0}, {"0T", "0", 0},
    {"0Pi", "0", 0}, {"0P", "0", 0}, {"0Ei", "0", 0}, {"0E", "0", 0},
    {"00", "0", 0}, {"-0", "0", 0}, {"0.0", "0", 0}, {"0e5", "0", 0},
    /* binary suffixes */
    {"1Ki", "1Ki", 0}, {"8Ki", "8Ki", 0}, {"7Mi", "7Mi", 0}, {"6Gi", "6Gi", 0},
    {"5Ti", "5Ti", 0}, {"4Pi", "4Pi", 0}, {"3Ei", "3Ei", 0}, {"10Ti", "10Ti", 0},
    {"100Ti", "100Ti", 0}, {"1024Mi", "1Gi", 0}, {"1024Ki", "1Mi", 0},
    {"307200Ki", "300Mi", 0}, {"1025024Mi", "1001Gi", 0}, {"1024Gi", "1Ti", 0},
    {"1.5Gi", "1536Mi", 0}, {"0.5Mi", "512Ki", 0}, {"0.05Gi", "53687091200m", 0},
    {"0.025Ti", "27487790694400m", 0}, {"100.035Ki", "102435840m", 0},
    {"1025Ki", "1025Ki", 0}, {"189471Mi", "189471Mi", 0}, {"185Gi", "185Gi", 0},
    {"64Ki", "64Ki", 0}, {"80Gi", "80Gi", 0}, {"1.Ki", "1.Ki", 0},
    {".001Ki", "1024m", 0}, {".000001Ki", "1024u", 0}, {".000000001Ki", "1024n", 0},
    {".000000000001Ki", "2n", 0}, {"0.000000000001Ki", "2n", 0},
    {"9Ei", "9223372036854775807", 0}, {"8Ei", "9223372036854775807", 0},
    {"9223372036854775807Ki", "9223372036854775807", 0},
    {"-9Ei", "-9223372036854775807", 0}, {"7Ei", "7Ei", 0},
    /* decimal suffixes */
    {"5n", "5n", 0}, {"4u", "4u", 0}, {"3m", "3m", 0}, {"9", "9", 0},
    {"8k", "8k", 0}, {"50k", "50k", 0}, {"7M", "7M", 0}, {"6G", "6G", 0},
    {"5T", "5T", 0}, {"40T", "40T", 0}, {"300T", "300T", 0}, {"2P", "2P", 0},
    {"1E", "1E", 0}, {"12E", "12E", 0}, {"100M", "100M", 0}, {"1000M", "1G", 0},
    {"1000m", "1", 0}, {"1500m", "1500m", 0}, {"1000u", "1m", 0}, {"1.08", "1080m", 0},
    {"1080000000n", "1080m", 0}, {"0.001T", "1G", 0}, {"1500", "1500", 0},
    {"100", "100", 0}, {"1000", "1k", 0}, {"10000", "10k", 0}, {"2000k", "2M", 0},
    /* decimal exponents */
    {"1E-3", "1E-3", 0}, {"1e3", "1e3", 0}, {"1E6", "1E6", 0}, {"1e9", "1e9", 0},
    {"1E12", "1E12", 0}, {"1e15", "1e15", 0}, {"1E18", "1E18", 0}, {"1e14", "100e12", 0},
    {"1e13", "10e12", 0}, {"1e+3", "1e+3", 0}, {"10e3", "10e3", 0}, {"100e3", "100e3", 0},
    {"1000e3", "1e6", 0}, {".001e12", "1e9", 0}, {"0.001e0", "1e-3", 0},
    {"1000e-12", "1e-9", 0}, {"80e-3", "80e-3", 0}, {"1.2e3", "1200", 0},
    {"1.3E+6", "1300e3", 0}, {"1.40e9", "1400e6", 0}, {"1.53E12", "1530e9", 0},
    {"1.6e15", "1600e12", 0}, {"1.7E18", "1700e15", 0}, {"1e21", "1e21", 0},
    {"1e100", "10e99", 0}, {"1e-100", "1e-9", 0}, {"1e2147483647", "10e2147483646", 0},
    /* floating point look-alikes */
    {"0.001", "1m", 0}, {"0.0005k", "500m", 0}, {"0.005", "5m", 0}, {"0.05", "50m", 0},
    {"0.5", "500m", 0}, {"0.00050k", "500m", 0}, {"0.00500", "5m", 0},
    {"0.05000", "50m", 0}, {"0.50000", "500m", 0}, {"0.5e0", "500e-3", 0},
    {"0.5e-1", "50e-3", 0}, {"0.5e-2", "5e-3", 0}, {"10.035M", "10.035M", 0},
    {"9.01", "9010m", 0}, {"8.1k", "8100", 0}, {"7.123456M", "7.123456M", 0},
    {"6.987654321G", "6.987654321G", 0}, {"5.444T", "5.444T", 0}, {"40.1T", "40100G", 0},
    {"300.2T", "300200G", 0}, {"2.5P", "2500T", 0}, {"1.01E", "1010P", 0},
    {"100.035k", "100.035k", 0}, {"6.987654321G x", NULL, DRA_EPARSE},
    /* rounding up to nano */
    {"3.001n", "4n", 0}, {"1.1E-9", "2e-9", 0}, {"0.0000000001", "1n", 0},
    {"0.0000000005", "1n", 0}, {"0.00000000050", "1n", 0}, {"0.5e-9", "1e-9", 0},
    {"0.9n", "1n", 0}, {"0.00000012345", "124n", 0}, {"0.00000012354", "124n", 0},
    {"-0.1n", "-1n", 0}, {"-3.001n", "-4n", 0},
    /* signs, odd but accepted spellings (upstream keeps their text) */
    {"+1", "+1", 0}, {"-1", "-1", 0}, {"01", "01", 0}, {"1.", "1.", 0},
    {"1.G", "1.G", 0}, {".001", "1m", 0}, {".0001k", "100m", 0}, {"-5m", "-5m", 0},
    {"+10Ki", "+10Ki", 0}, {"010Ki", "010Ki", 0}, {".", "0", 0}, {"+", "0", 0},
    {"Ki", "0", 0}, {"-1.5Gi", "-1536Mi", 0},
    /* big decimals keep exact digits */
    {"9223372036854775807", "9223372036854775807", 0},
    {"9223372036854775808", "9223372036854775808", 0},
    {"123456789012345678901234567890", "123456789012345678901234567890", 0},
    {"100000000000000000000000000000000000000000000000000", "100e48", 0},
    /* errors */
    {"", NULL, DRA_EPARSE}, {"1.1.M", NULL, DRA_EPARSE}, {"1+1.0M", NULL, DRA_EPARSE},
    {"0.1mi", NULL, DRA_EPARSE}, {"0.1am", NULL, DRA_EPARSE}, {"aoeu", NULL, DRA_EPARSE},
    {".5i", NULL, DRA_EPARSE}, {"1i", NULL, DRA_EPARSE}, {"-3.01i", NULL, DRA_EPARSE},
    {"-3.01e-", NULL, DRA_EPARSE}, {" 1", NULL, DRA_EPARSE}, {"1 ", NULL, DRA_EPARSE},
    {"1ki", NULL, DRA_EPARSE}, {"1e", NULL, DRA_EPARSE}, {"1K", NULL, DRA_EPARSE},
    {"1Mb", NULL, DRA_EPARSE}, {"1e3.5", NULL, DRA_EPARSE}, {"--1", NULL, DRA_EPARSE},
    {"1Ki5", NULL, DRA_EPARSE}, {"1e3e4", NULL, DRA_EPARSE}, {"0x10", NULL, DRA_EPARSE},
    {"1e2147483648", NULL, DRA_ERANGE}, {"1e-2147483649", NULL, DRA_ERANGE},
    {"1e99999999999999999999", NULL, DRA_ERANGE},
    {"123456789012345678901234567890123456789", NULL, DRA_ERANGE},
    {"1.0000000000000000000000000000000000001", "1000000001n", 0},
    {"1.0000000000000000001Ki", NULL, DRA_ERANGE},
};

static void test_parse_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof parse_cases / sizeof parse_cases[0]; i++) {
        const struct pcase *c = &parse_cases[i];
        dra_quantity q;
        char buf[DRA_QTY_STR_MAX];
        dra_err err = dra_quantity_parse(c->in, strlen(c->in), &q);
        if (!c->out) {
            if (err != c->err)
                fail_msg("%s: want %s, got %s", c->in, dra_errname(c->err), dra_errname(err));
            continue;
        }
        if (err != DRA_OK)
            fail_msg("%s: unexpected %s", c->in, dra_errname(err));
        upstream_string(c->in, &q, buf, sizeof buf);
        if (strcmp(buf, c->out) != 0)
            fail_msg("%s: want \"%s\", got \"%s\"", c->in, c->out, buf);
        /* Canonical output re-parses to an equal value with the same
         * canonical text (String() is stable). */
        {
            dra_quantity r;
            char buf2[DRA_QTY_STR_MAX];
            dra_quantity_str(&q, buf, sizeof buf);
            if (dra_quantity_parse(buf, strlen(buf), &r) != DRA_OK)
                fail_msg("%s: canonical %s does not parse", c->in, buf);
            if (dra_quantity_cmp(&q, &r) != 0)
                fail_msg("%s: canonical %s is a different value", c->in, buf);
            dra_quantity_str(&r, buf2, sizeof buf2);
            if (strcmp(buf, buf2) != 0)
                fail_msg("%s: canonical %s re-prints as %s", c->in, buf, buf2);
        }
    }
}

/* The canonical form alone, where it differs from the kept text. */
static void test_canonical(void **state)
{
    static const char *const cases[][2] = {
        {"+1", "1"}, {"01", "1"}, {"1.", "1"}, {"1.G", "1G"}, {"1E3", "1e3"},
        {"1e+3", "1e3"}, {"+10Ki", "10Ki"}, {"010Ki", "10Ki"}, {"1E", "1E"},
        {"1000E", "1e21"}, {"0", "0"}, {"5Ei", "5Ei"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dra_quantity q;
        char buf[DRA_QTY_STR_MAX];
        assert_int_equal(dra_quantity_parse(cases[i][0], strlen(cases[i][0]), &q), DRA_OK);
        dra_quantity_str(&q, buf, sizeof buf);
        if (strcmp(buf, cases[i][1]) != 0)
            fail_msg("%s: want %s, got %s", cases[i][0], cases[i][1], buf);
    }
}

static int qcmp(const char *a, const char *b)
{
    dra_quantity x, y;
    assert_int_equal(dra_quantity_parse(a, strlen(a), &x), DRA_OK);
    assert_int_equal(dra_quantity_parse(b, strlen(b), &y), DRA_OK);
    return dra_quantity_cmp(&x, &y);
}

static void test_compare(void **state)
{
    static const struct { const char *a, *b; int want; } cases[] = {
        {"189471Mi", "185Gi", 1}, {"189440Mi", "185Gi", 0}, {"189439Mi", "185Gi", -1},
        {"1", "1000m", 0}, {"1Ki", "1024", 0}, {"0.5", "1", -1}, {"-1", "0", -1},
        {"1e3", "1k", 0}, {"1E", "1Ei", -1}, {"12E", "9Ei", 1}, {"1n", "0", 1},
        {"-1n", "0", -1}, {"-2", "-1", -1}, {"1e100", "1e99", 1}, {"1e-100", "1e-9", 0},
        {"80Gi", "85899345920", 0}, {"80Gi", "85899345921", -1}, {"1.5Gi", "1536Mi", 0},
        {"123456789012345678901234567890", "123456789012345678901234567891", -1},
        {"1e38", "99999999999999999999999999999999999999", 1},
        {"0", "-0", 0}, {"100m", "0.1", 0}, {"1Ti", "1099511627776", 0},
        {"40Gi", "40G", 1}, {"1u", "1000n", 0}, {"-1e100", "-1e99", -1},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = qcmp(cases[i].a, cases[i].b), rev = qcmp(cases[i].b, cases[i].a);
        if (got != cases[i].want || rev != -cases[i].want)
            fail_msg("cmp(%s, %s) = %d/%d, want %d", cases[i].a, cases[i].b, got, rev,
                     cases[i].want);
    }
}

static dra_quantity P(const char *s)
{
    dra_quantity q;
    assert_int_equal(dra_quantity_parse(s, strlen(s), &q), DRA_OK);
    return q;
}

static void check_str(const dra_quantity *q, const char *want)
{
    char buf[DRA_QTY_STR_MAX];
    dra_quantity_str(q, buf, sizeof buf);
    assert_string_equal(buf, want);
}

static void test_arith(void **state)
{
    dra_quantity a = P("1Gi"), b = P("512Mi"), r, big;
    (void)state;
    assert_int_equal(dra_quantity_add(&a, &b, &r), DRA_OK);
    check_str(&r, "1536Mi");
    assert_int_equal(r.format, DRA_QTY_BINARY_SI);
    assert_int_equal(dra_quantity_sub(&a, &b, &r), DRA_OK);
    check_str(&r, "512Mi");
    assert_int_equal(dra_quantity_sub(&b, &a, &r), DRA_OK);
    check_str(&r, "-512Mi");
    assert_int_equal(dra_quantity_sign(&r), -1);
    a = P("100m"), b = P("2");
    assert_int_equal(dra_quantity_add(&a, &b, &r), DRA_OK);
    check_str(&r, "2100m");
    /* zero takes the other's format */
    a = P("0"), b = P("1Ki");
    assert_int_equal(dra_quantity_add(&a, &b, &r), DRA_OK);
    assert_int_equal(r.format, DRA_QTY_BINARY_SI);
    check_str(&r, "1Ki");
    assert_int_equal(dra_quantity_sub(&a, &b, &r), DRA_OK);
    check_str(&r, "-1Ki");
    /* int64 overflow goes exact (inf.Dec) and stops being an integer */
    a = P("9223372036854775807"), b = P("1");
    a = dra_quantity_from_int64(INT64_MAX, DRA_QTY_DECIMAL_SI);
    assert_int_equal(dra_quantity_add(&a, &b, &r), DRA_OK);
    check_str(&r, "9223372036854775808");
    assert_true(r.flags & DRA_QTY_F_DEC);
    assert_false(dra_quantity_is_integer(&r));
    /* what cannot be held exactly is an error, not rounding */
    a = P("1e100"), b = P("1n");
    assert_int_equal(dra_quantity_add(&a, &b, &r), DRA_ERANGE);
    big = P("99999999999999999999999999999999999999");
    assert_int_equal(dra_quantity_add(&big, &big, &r), DRA_ERANGE);
    b = P("-1");
    assert_int_equal(dra_quantity_add(&big, &b, &r), DRA_OK);
    check_str(&r, "99999999999999999999999999999999999998");
    b = P("0");
    assert_int_equal(dra_quantity_sign(&b), 0);
}

static int64_t V(const char *s)
{
    dra_quantity q = P(s);
    return dra_quantity_value(&q);
}

static double D(const char *s)
{
    dra_quantity q = P(s);
    return dra_quantity_to_double(&q);
}

static void test_int64(void **state)
{
    static const struct { const char *in; int ok; int64_t v; } cases[] = {
        {"1k", 1, 1000}, {"1Ki", 1, 1024}, {"1e3", 1, 1000}, {"5", 1, 5},
        {"-5", 1, -5}, {"1000m", 0, 0}, {"1.0", 0, 0}, {"1.5Gi", 0, 0},
        {"1Pi", 0, 0}, {"1Ti", 1, 1099511627776}, {"100000000000000000", 1, 100000000000000000},
        {"9223372036854775807", 0, 0}, {"10E", 0, 0}, {"9E", 1, 9000000000000000000},
        {"0", 1, 0}, {"500m", 0, 0}, {"1e19", 0, 0}, {"0e793303725", 1, 0},
        {"5e18", 1, 5000000000000000000}, {"10e18", 0, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dra_quantity q = P(cases[i].in);
        int64_t v = -42;
        dra_err err = dra_quantity_to_int64(&q, &v);
        if ((err == DRA_OK) != cases[i].ok || (cases[i].ok && v != cases[i].v))
            fail_msg("%s: AsInt64 ok=%d v=%lld", cases[i].in, err == DRA_OK, (long long)v);
        assert_int_equal(dra_quantity_is_integer(&q), cases[i].ok);
    }
    assert_int_equal(V("1500m"), 2);
    assert_int_equal(V("-1500m"), -2);
    assert_int_equal(V("1Pi"), 1125899906842624LL);
    assert_int_equal(V("1e30"), INT64_MAX);
    assert_int_equal(V("1n"), 1);
}

static void test_double(void **state)
{
    (void)state;
    assert_true(D("1.5Gi") == 1610612736.0);
    assert_true(fabs(D("100m") - 0.1) < 1e-15);
    assert_true(D("1e3") == 1000.0);
    assert_true(D("-2Ki") == -2048.0);
    assert_true(D("123456789012345678901234567890") ==
                123456789012345678901234567890.0);
    assert_true(isinf(D("1e400")));
}

static void test_str_truncation(void **state)
{
    dra_quantity q = P("189471Mi");
    char small[4];
    (void)state;
    assert_int_equal(dra_quantity_str(&q, small, sizeof small), 8);
    assert_string_equal(small, "189");
    assert_int_equal(dra_quantity_str(&q, NULL, 0), 8);
    q = dra_quantity_from_int64(-1536, DRA_QTY_BINARY_SI);
    check_str(&q, "-1536");
    q = dra_quantity_from_int64(2048, DRA_QTY_BINARY_SI);
    check_str(&q, "2Ki");
    q = dra_quantity_from_int64(5, DRA_QTY_DECIMAL_EXPONENT);
    check_str(&q, "5");
    q = dra_quantity_from_int64(5000, DRA_QTY_DECIMAL_EXPONENT);
    check_str(&q, "5e3");
}

/* dra_quantity_cmp has a fast path (64-bit mantissas, scales at most 19
 * apart) and a general one; compare both against exact arithmetic done
 * here on small values at a common scale. */
static void test_compare_random(void **state)
{
    uint64_t x = 88172645463325252ull;
    (void)state;
    for (int i = 0; i < 200000; i++) {
        dra_quantity a = {0}, b = {0};
        __int128 ea, eb;
        int want, got;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a.mant = (__int128)(int64_t)(x % 2000001) - 1000000;
        a.scale = (int32_t)((x >> 24) % 31) - 9;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b.mant = (__int128)(int64_t)(x % 2000001) - 1000000;
        b.scale = (int32_t)((x >> 24) % 31) - 9;
        if (x & 1) { /* sometimes huge mantissas, to take the general path */
            a.mant *= (__int128)1000000000000000000ll * 1000;
            a.scale = (int32_t)((x >> 24) % 11) - 9; /* oracle stays in 128 bits */
        }
        ea = a.mant;
        eb = b.mant;
        for (int k = -9; k < a.scale; k++)
            ea *= 10;
        for (int k = -9; k < b.scale; k++)
            eb *= 10;
        want = (ea > eb) - (ea < eb);
        got = dra_quantity_cmp(&a, &b);
        got = (got > 0) - (got < 0);
        if (want != got)
            fail_msg("case %d: cmp gave %d, want %d", i, got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_compare_random),
        cmocka_unit_test(test_arith),
        cmocka_unit_test(test_int64),
        cmocka_unit_test(test_double),
        cmocka_unit_test(test_str_truncation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
