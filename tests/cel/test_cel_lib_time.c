/* Tests for the value-independent time helpers (src/cel/lib_time.c,
 * lib_tz.c): RFC 3339, Go durations, checked arithmetic, civil fields and
 * time zones (TZif from /usr/share/zoneinfo, POSIX footers, fixed
 * offsets, an injected provider, allocation failures, hostile data). */
#include "dra_test.h"

#include "cel/lib_time.h"

static void test_parse_rfc3339(void **state)
{
    static const struct {
        const char *s;
        dra_err err;
        int64_t sec;
        int32_t nsec, off;
    } cases[] = {
        {"2009-02-13T23:31:30Z", DRA_OK, 1234567890, 0, 0},
        {"2009-02-13T23:31:30.123456789123Z", DRA_OK, 1234567890, 123456789, 0},
        {"2009-02-13T23:31:30.5Z", DRA_OK, 1234567890, 500000000, 0},
        {"2009-02-13T23:31:30,5Z", DRA_OK, 1234567890, 500000000, 0},
        {"2009-02-14T00:31:30+01:00", DRA_OK, 1234567890, 0, 3600},
        {"2009-02-13T15:31:30-08:00", DRA_OK, 1234567890, 0, -28800},
        {"2009-02-13T3:31:30Z", DRA_OK, 1234495890, 0, 0},
        {"1970-01-01T00:00:00Z", DRA_OK, 0, 0, 0},
        {"0001-01-01T00:00:00Z", DRA_OK, LIB_TS_MIN_SEC, 0, 0},
        {"9999-12-31T23:59:59.999999999Z", DRA_OK, LIB_TS_MAX_SEC, 999999999, 0},
        {"2000-02-29T00:00:00Z", DRA_OK, 951782400, 0, 0},
        {"0000-12-31T23:59:59Z", DRA_ERANGE, 0, 0, 0},
        {"9999-12-31T23:59:59-01:00", DRA_ERANGE, 0, 0, 0},
        {"0001-01-01T00:00:00+00:01", DRA_ERANGE, 0, 0, 0},
        {"2009-02-30T00:00:00Z", DRA_EPARSE, 0, 0, 0},
        {"2001-02-29T00:00:00Z", DRA_EPARSE, 0, 0, 0},
        {"2009-02-13T23:31:30", DRA_EPARSE, 0, 0, 0},
        {"2009-02-13t23:31:30Z", DRA_EPARSE, 0, 0, 0},
        {"2009-02-13T23:31:30z", DRA_EPARSE, 0, 0, 0},
        {"2009-02-13T24:00:00Z", DRA_EPARSE, 0, 0, 0},
        {"2009-02-13T23:60:00Z", DRA_EPARSE, 0, 0, 0},
        {"2009-02-13T23:31:30.Z", DRA_EPARSE, 0, 0, 0},
        {"2009-02-13T23:31:30+0100", DRA_EPARSE, 0, 0, 0},
        {"2009-02-13T23:31:30Zjunk", DRA_EPARSE, 0, 0, 0},
        {"2009-2-13T23:31:30Z", DRA_EPARSE, 0, 0, 0},
        {"", DRA_EPARSE, 0, 0, 0},
        {"bad", DRA_EPARSE, 0, 0, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t sec = -1;
        int32_t nsec = -1, off = -1;
        dra_err e = lib_ts_parse(cases[i].s, strlen(cases[i].s), &sec, &nsec, &off);
        if (e != cases[i].err)
            fail_msg("%s: got %s want %s", cases[i].s, dra_errname(e),
                     dra_errname(cases[i].err));
        if (e == DRA_OK) {
            assert_int_equal(sec, cases[i].sec);
            assert_int_equal(nsec, cases[i].nsec);
            assert_int_equal(off, cases[i].off);
        }
    }
}

static void test_format_rfc3339(void **state)
{
    char buf[64];
    (void)state;
    lib_ts_format(1234567890, 0, 0, buf, sizeof buf);
    assert_string_equal(buf, "2009-02-13T23:31:30Z");
    lib_ts_format(1234567890, 500000000, 0, buf, sizeof buf);
    assert_string_equal(buf, "2009-02-13T23:31:30.5Z");
    lib_ts_format(1234567890, 1, 0, buf, sizeof buf);
    assert_string_equal(buf, "2009-02-13T23:31:30.000000001Z");
    lib_ts_format(1234567890, 0, 3600, buf, sizeof buf);
    assert_string_equal(buf, "2009-02-14T00:31:30+01:00");
    lib_ts_format(1234567890, 0, -19800, buf, sizeof buf);
    assert_string_equal(buf, "2009-02-13T18:01:30-05:30");
    lib_ts_format(LIB_TS_MIN_SEC, 0, 0, buf, sizeof buf);
    assert_string_equal(buf, "0001-01-01T00:00:00Z");
    lib_ts_format(LIB_TS_MAX_SEC, 999999999, 0, buf, sizeof buf);
    assert_string_equal(buf, "9999-12-31T23:59:59.999999999Z");
    /* snprintf-like truncation */
    assert_int_equal(lib_ts_format(0, 0, 0, buf, 5), 20);
    assert_string_equal(buf, "1970");
}

static void test_duration_parse(void **state)
{
    static const struct {
        const char *s;
        dra_err err;
        int64_t ns;
        const char *msg;
    } cases[] = {
        {"1h30m", DRA_OK, 5400000000000LL, NULL},
        {"-1.5h", DRA_OK, -5400000000000LL, NULL},
        {"+300ms", DRA_OK, 300000000LL, NULL},
        {"1\xc2\xb5s", DRA_OK, 1000, NULL},
        {"1\xce\xbcs", DRA_OK, 1000, NULL},
        {"2us3ns", DRA_OK, 2003, NULL},
        {"0", DRA_OK, 0, NULL},
        {"-0", DRA_OK, 0, NULL},
        {".5s", DRA_OK, 500000000LL, NULL},
        {"1.s", DRA_OK, 1000000000LL, NULL},
        {"1.000000000000000000001s", DRA_OK, 1000000000LL, NULL},
        {"0.5h1.25m", DRA_OK, 1875000000000LL, NULL},
        {"9223372036854775807ns", DRA_OK, INT64_MAX, NULL},
        {"-9223372036854775808ns", DRA_OK, INT64_MIN, NULL},
        {"2562047h", DRA_OK, 2562047LL * 3600000000000LL, NULL},
        {"9223372036854775808ns", DRA_ERANGE, 0,
         "time: invalid duration \"9223372036854775808ns\""},
        {"2562048h", DRA_ERANGE, 0, "time: invalid duration \"2562048h\""},
        {"", DRA_EPARSE, 0, "time: invalid duration \"\""},
        {"-", DRA_EPARSE, 0, "time: invalid duration \"-\""},
        {"1", DRA_EPARSE, 0, "time: missing unit in duration \"1\""},
        {"1x", DRA_EPARSE, 0, "time: unknown unit \"x\" in duration \"1x\""},
        {"1d", DRA_EPARSE, 0, "time: unknown unit \"d\" in duration \"1d\""},
        {"s", DRA_EPARSE, 0, "time: invalid duration \"s\""},
        {".s", DRA_EPARSE, 0, "time: invalid duration \".s\""},
        {"1h-1m", DRA_EPARSE, 0, "time: unknown unit \"h-\" in duration \"1h-1m\""},
        {"1 s", DRA_EPARSE, 0, "time: unknown unit \" s\" in duration \"1 s\""},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dra_buf why;
        int64_t ns = 42;
        dra_err e;
        dra_buf_init(&why, NULL);
        e = lib_dur_parse(cases[i].s, strlen(cases[i].s), &ns, &why);
        if (e != cases[i].err)
            fail_msg("%s: got %s want %s", cases[i].s, dra_errname(e),
                     dra_errname(cases[i].err));
        if (e == DRA_OK) {
            if (ns != cases[i].ns)
                fail_msg("%s: got %lld want %lld", cases[i].s, (long long)ns,
                         (long long)cases[i].ns);
        } else {
            assert_non_null(why.p);
            assert_string_equal(why.p, cases[i].msg);
        }
        dra_buf_fini(&why);
    }
}

static void test_duration_format(void **state)
{
    static const struct {
        int64_t ns;
        const char *s;
    } cases[] = {
        {5400000000000LL, "5400s"},
        {1500000000LL, "1.5s"},
        {1, "0.000000001s"},
        {-1, "-0.000000001s"},
        {0, "0s"},
        {-90000000000LL, "-90s"},
        {123456789, "0.123456789s"},
        {INT64_MAX, "9223372036.854776s"},
        {INT64_MIN, "-9223372036.854776s"},
        {315576000000000000LL, "315576000s"},
    };
    char buf[64];
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lib_dur_format(cases[i].ns, buf, sizeof buf);
        assert_string_equal(buf, cases[i].s);
    }
}

static void test_float_f(void **state)
{
    static const struct {
        double x;
        const char *s;
    } cases[] = {
        {0.1, "0.1"}, {1e21, "1000000000000000000000"}, {123.456, "123.456"},
        {-0.0, "-0"}, {1.0 / 3, "0.3333333333333333"}, {5e-324, NULL},
        {2.5, "2.5"}, {100, "100"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dra_buf b;
        dra_buf_init(&b, NULL);
        assert_int_equal(lib_format_float_f(cases[i].x, &b), DRA_OK);
        if (cases[i].s)
            assert_string_equal(b.p, cases[i].s);
        else /* 5e-324: 323 zeros after the point, then a 5 */
            assert_int_equal(b.len, 2 + 323 + 1);
        dra_buf_fini(&b);
    }
}

static void test_duration_accessors(void **state)
{
    int64_t ns;
    (void)state;
    assert_int_equal(lib_dur_parse("2h59m59.999s", 12, &ns, NULL), DRA_OK);
    assert_int_equal(lib_dur_hours(ns), 2);
    assert_int_equal(lib_dur_minutes(ns), 179);
    assert_int_equal(lib_dur_seconds(ns), 10799);
    assert_int_equal(lib_dur_millis(ns), 10799999);
    assert_int_equal(lib_dur_hours(-ns), -2);
    assert_int_equal(lib_dur_minutes(-ns), -179);
    assert_int_equal(lib_dur_seconds(-ns), -10799);
    assert_int_equal(lib_dur_millis(-ns), -10799999);
}

static void test_arithmetic(void **state)
{
    int64_t s, d;
    int32_t ns;
    (void)state;
    assert_int_equal(lib_ts_add(10, 900000000, 200000000, &s, &ns), DRA_OK);
    assert_int_equal(s, 11);
    assert_int_equal(ns, 100000000);
    assert_int_equal(lib_ts_add(10, 100000000, -200000000, &s, &ns), DRA_OK);
    assert_int_equal(s, 9);
    assert_int_equal(ns, 900000000);
    assert_int_equal(lib_ts_add(LIB_TS_MAX_SEC, 999999999, 1, &s, &ns), DRA_ERANGE);
    assert_int_equal(lib_ts_sub_dur(LIB_TS_MIN_SEC, 0, 1, &s, &ns), DRA_ERANGE);
    assert_int_equal(lib_ts_sub_dur(0, 0, INT64_MIN, &s, &ns), DRA_ERANGE);
    assert_int_equal(lib_ts_add(0, 0, INT64_MAX, &s, &ns), DRA_OK);
    assert_int_equal(s, 9223372036);
    assert_int_equal(ns, 854775807);
    assert_int_equal(lib_ts_diff(LIB_TS_MAX_SEC, 0, LIB_TS_MIN_SEC, 0, &d),
                     DRA_ERANGE);
    assert_int_equal(lib_ts_diff(1, 0, 0, 500000000, &d), DRA_OK);
    assert_int_equal(d, 500000000);
    assert_int_equal(lib_dur_add(INT64_MAX, 1, &d), DRA_ERANGE);
    assert_int_equal(lib_dur_sub(INT64_MIN, 1, &d), DRA_ERANGE);
    assert_int_equal(lib_dur_neg(INT64_MIN, &d), DRA_ERANGE);
    assert_int_equal(lib_dur_neg(5, &d), DRA_OK);
    assert_int_equal(d, -5);
}

static void test_civil(void **state)
{
    lib_civil c;
    (void)state;
    lib_civil_from_unix(1234567890, &c);
    assert_int_equal(c.year, 2009);
    assert_int_equal(c.month, 2);
    assert_int_equal(c.day, 13);
    assert_int_equal(c.hour, 23);
    assert_int_equal(c.min, 31);
    assert_int_equal(c.sec, 30);
    assert_int_equal(c.wday, 5);
    assert_int_equal(c.yday, 43);
    lib_civil_from_unix(-1, &c);
    assert_int_equal(c.year, 1969);
    assert_int_equal(c.month, 12);
    assert_int_equal(c.day, 31);
    assert_int_equal(c.hour, 23);
    assert_int_equal(c.wday, 3);
    assert_int_equal(c.yday, 364);
    lib_civil_from_unix(LIB_TS_MIN_SEC, &c);
    assert_int_equal(c.year, 1);
    assert_int_equal(c.wday, 1); /* 0001-01-01 was a Monday */
    lib_civil_from_unix(lib_days_from_civil(2024, 12, 31) * 86400, &c);
    assert_int_equal(c.yday, 365);
}

static int64_t ts(const char *s)
{
    int64_t sec;
    int32_t ns;
    assert_int_equal(lib_ts_parse(s, strlen(s), &sec, &ns, NULL), DRA_OK);
    return sec;
}

static const lib_tz *zone(lib_zone_cache *c, const char *name)
{
    const lib_tz *z = NULL;
    int32_t off;
    dra_err e = lib_zone_resolve(c, name, strlen(name), &z, &off, NULL);
    if (e != DRA_OK)
        fail_msg("zone %s: %s", name, dra_errname(e));
    assert_non_null(z);
    return z;
}

static void test_zones_files(void **state)
{
    lib_zone_cache c;
    const lib_tz *la, *syd, *kol;
    (void)state;
    lib_zone_cache_init(&c, NULL, NULL);
    la = zone(&c, "America/Los_Angeles");
    /* DST starts 2024-03-10 at 02:00 PST = 10:00Z. */
    assert_int_equal(lib_tz_offset(la, ts("2024-03-10T09:59:59Z")), -28800);
    assert_int_equal(lib_tz_offset(la, ts("2024-03-10T10:00:00Z")), -25200);
    /* and ends 2024-11-03 at 02:00 PDT = 09:00Z */
    assert_int_equal(lib_tz_offset(la, ts("2024-11-03T08:59:59Z")), -25200);
    assert_int_equal(lib_tz_offset(la, ts("2024-11-03T09:00:00Z")), -28800);
    /* Beyond the table: the footer rule. */
    assert_int_equal(lib_tz_offset(la, ts("2150-07-01T00:00:00Z")), -25200);
    assert_int_equal(lib_tz_offset(la, ts("2150-01-01T00:00:00Z")), -28800);
    /* Before the first transition: local mean time. */
    assert_int_equal(lib_tz_offset(la, ts("1800-01-01T00:00:00Z")), -28378);
    syd = zone(&c, "Australia/Sydney");
    assert_int_equal(lib_tz_offset(syd, ts("2150-07-01T00:00:00Z")), 36000);
    assert_int_equal(lib_tz_offset(syd, ts("2150-01-01T00:00:00Z")), 39600);
    kol = zone(&c, "Asia/Kolkata");
    assert_int_equal(lib_tz_offset(kol, ts("2024-01-01T00:00:00Z")), 19800);
    /* Cached: the same object comes back. */
    assert_ptr_equal(zone(&c, "America/Los_Angeles"), la);
    assert_int_equal(c.n, 3);
    lib_zone_cache_fini(&c);
}

static void test_zone_resolve(void **state)
{
    static const struct {
        const char *tz;
        dra_err err;
        int32_t off;
        const char *msg;
    } cases[] = {
        {"+05:30", DRA_OK, 19800, NULL},
        {"-08:00", DRA_OK, -28800, NULL},
        {"-00:30", DRA_OK, -1800, NULL},
        {"05:00", DRA_OK, 18000, NULL},
        {"UTC", DRA_OK, 0, NULL},
        {"", DRA_OK, 0, NULL},
        {"x:00", DRA_EPARSE, 0, "strconv.Atoi: parsing \"x\": invalid syntax"},
        {"+05:", DRA_EPARSE, 0, "strconv.Atoi: parsing \"\": invalid syntax"},
        {"../etc/passwd", DRA_EINVAL, 0, "time: invalid location name"},
        {"/etc/passwd", DRA_EINVAL, 0, "time: invalid location name"},
        {"Nowhere/City", DRA_ENOTFOUND, 0, "unknown time zone Nowhere/City"},
        {"America", DRA_ENOTFOUND, 0, "unknown time zone America"},
        {"zone.tab", DRA_ENOTFOUND, 0, "unknown time zone zone.tab"},
    };
    lib_zone_cache c;
    (void)state;
    lib_zone_cache_init(&c, NULL, NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const lib_tz *z = (const lib_tz *)&c;
        int32_t off = 77;
        dra_buf why;
        dra_err e;
        dra_buf_init(&why, NULL);
        e = lib_zone_resolve(&c, cases[i].tz, strlen(cases[i].tz), &z, &off, &why);
        if (e != cases[i].err)
            fail_msg("%s: got %s", cases[i].tz, dra_errname(e));
        if (e == DRA_OK) {
            assert_null(z);
            assert_int_equal(off, cases[i].off);
        } else {
            assert_string_equal(why.p, cases[i].msg);
        }
        dra_buf_fini(&why);
    }
    lib_zone_cache_fini(&c);
}

static void test_posix(void **state)
{
    lib_tz_footer f;
    lib_tz z;
    (void)state;
    assert_int_equal(lib_tz_parse_posix("<+0530>-5:30", 12, &f), DRA_OK);
    assert_int_equal(f.std_off, 19800);
    assert_false(f.has_dst);
    assert_int_equal(lib_tz_parse_posix("EST5EDT,M3.2.0,M11.1.0", 22, &f), DRA_OK);
    assert_int_equal(f.std_off, -18000);
    assert_int_equal(f.dst_off, -14400);
    memset(&z, 0, sizeof z);
    z.footer = f;
    /* 2030-03-10 02:00 EST = 07:00Z */
    assert_int_equal(lib_tz_offset(&z, ts("2030-03-10T06:59:59Z")), -18000);
    assert_int_equal(lib_tz_offset(&z, ts("2030-03-10T07:00:00Z")), -14400);
    /* Julian and zero-based day rules, explicit times. */
    assert_int_equal(lib_tz_parse_posix("AAA3BBB,J60/1:30,300/-1", 23, &f), DRA_OK);
    assert_int_equal(f.start.kind, 'J');
    assert_int_equal(f.start.time, 5400);
    assert_int_equal(f.end.kind, 'D');
    assert_int_equal(f.end.time, -3600);
    assert_int_equal(lib_tz_parse_posix("EST5EDT", 7, &f), DRA_OK);
    assert_int_equal(f.start.a, 3);
    assert_int_equal(lib_tz_parse_posix("EST", 3, &f), DRA_EPARSE);
    assert_int_equal(lib_tz_parse_posix("E5", 2, &f), DRA_EPARSE);
    assert_int_equal(lib_tz_parse_posix("EST5EDT,M13.1.0,M1.1.0", 22, &f), DRA_EPARSE);
    assert_int_equal(lib_tz_parse_posix("EST5EDT,M3.2.0", 14, &f), DRA_EPARSE);
    assert_int_equal(lib_tz_parse_posix("<>5", 3, &f), DRA_EPARSE);
}

/* A hand-built TZif v2 zone: one transition at t=1000 from +1h to +2h,
 * footer "<+02>-2". */
static size_t build_tzif(unsigned char *b)
{
    size_t n = 0;
    unsigned char hdr[44];
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, "TZif2", 5);
    hdr[4 + 4 + 3 * 4 - 1 + 1] = 0;
    /* counts: isut isstd leap time type char */
    hdr[20 + 15] = 1; /* timecnt */
    hdr[20 + 19] = 2; /* typecnt */
    hdr[20 + 23] = 4; /* charcnt */
    memcpy(b + n, hdr, 44);
    n += 44;
    /* v1 block: 1 trans (4 bytes), 1 idx, 2*6 ttinfo, 4 chars */
    memcpy(b + n, "\x00\x00\x03\xe8", 4), n += 4;
    b[n++] = 1;
    memcpy(b + n, "\x00\x00\x0e\x10\x00\x00", 6), n += 6;
    memcpy(b + n, "\x00\x00\x1c\x20\x00\x00", 6), n += 6;
    memcpy(b + n, "AB\0\0", 4), n += 4;
    memcpy(b + n, hdr, 44);
    n += 44;
    memcpy(b + n, "\x00\x00\x00\x00\x00\x00\x03\xe8", 8), n += 8;
    b[n++] = 1;
    memcpy(b + n, "\x00\x00\x0e\x10\x00\x00", 6), n += 6;
    memcpy(b + n, "\x00\x00\x1c\x20\x00\x00", 6), n += 6;
    memcpy(b + n, "AB\0\0", 4), n += 4;
    memcpy(b + n, "\n<+02>-2\n", 9), n += 9;
    return n;
}

typedef struct mem_provider {
    int loads;
} mem_provider;

static dra_err mem_load(void *ud, const char *name, const dra_mem *mem,
                        unsigned char **data, size_t *len)
{
    mem_provider *p = ud;
    if (strcmp(name, "Test/Zone") != 0)
        return DRA_ENOTFOUND;
    p->loads++;
    *data = dra_malloc(mem, 256);
    if (!*data)
        return DRA_ENOMEM;
    *len = build_tzif(*data);
    return DRA_OK;
}

static void test_injected_provider(void **state)
{
    mem_provider mp = {0};
    lib_zone_provider prov = {mem_load, &mp};
    lib_zone_cache c;
    const lib_tz *z;
    (void)state;
    lib_zone_cache_init(&c, NULL, &prov);
    z = zone(&c, "Test/Zone");
    assert_int_equal(lib_tz_offset(z, 999), 3600);
    assert_int_equal(lib_tz_offset(z, 1000), 7200);
    assert_int_equal(lib_tz_offset(z, 0x7fffffffffLL), 7200);
    assert_int_equal(lib_tz_offset(z, -5), 3600);
    zone(&c, "Test/Zone");
    assert_int_equal(mp.loads, 1);
    {
        int32_t off;
        assert_int_equal(lib_zone_resolve(&c, "America/Los_Angeles", 19, &z, &off, NULL),
                         DRA_ENOTFOUND);
    }
    lib_zone_cache_fini(&c);
}

static void test_tzif_failmalloc(void **state)
{
    unsigned char data[256];
    size_t len = build_tzif(data);
    (void)state;
    for (long n = 0;; n++) {
        dra_failmem fm;
        lib_tz *z = NULL;
        dra_err e;
        dra_failmem_init(&fm, n);
        e = lib_tz_parse(&fm.mem, "x", data, len, &z);
        if (e == DRA_OK) {
            lib_tz_free(&fm.mem, z);
            assert_int_equal(fm.live, 0);
            break;
        }
        assert_int_equal(e, DRA_ENOMEM);
        assert_int_equal(fm.live, 0);
    }
}

static void test_tzif_hostile(void **state)
{
    unsigned char data[256], mut[256];
    size_t len = build_tzif(data);
    uint32_t seed = 12345;
    (void)state;
    /* Every truncation and many random byte flips must fail cleanly or
     * parse into something whose lookups stay in bounds. */
    for (size_t cut = 0; cut < len; cut++) {
        lib_tz *z = NULL;
        dra_err e = lib_tz_parse(NULL, "x", data, cut, &z);
        assert_int_not_equal(e, DRA_OK);
        assert_null(z);
    }
    for (int round = 0; round < 20000; round++) {
        lib_tz *z = NULL;
        memcpy(mut, data, len);
        for (int k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            mut[(seed >> 8) % len] = (unsigned char)(seed >> 20);
        }
        if (lib_tz_parse(NULL, "x", mut, len, &z) == DRA_OK) {
            for (int64_t t = -100000; t < 100000; t += 777)
                (void)lib_tz_offset(z, t * 100000);
            lib_tz_free(NULL, z);
        }
    }
}

/* Random inputs for every text parser: no crash, and every accepted
 * timestamp or duration survives a print/parse round trip. */
static void test_random_text(void **state)
{
    static const char alphabet[] = "0123456789-:T.Z+zhmsun\xc2\xb5,/<>JMPESTDA ";
    uint32_t seed = 99;
    (void)state;
    for (int round = 0; round < 50000; round++) {
        char s[40];
        size_t n;
        int64_t sec, ns;
        int32_t nsec, off;
        lib_tz_footer f;
        seed = seed * 1103515245u + 12345u;
        n = (seed >> 16) % 32;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            s[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        /* Half the time start from a valid timestamp and damage it. */
        if (round % 2 && n >= 4) {
            memcpy(s, "2024-02-29T12:00:00.5+05:30", 27);
            s[(seed >> 8) % 27] = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
            n = 27;
        }
        if (lib_ts_parse(s, n, &sec, &nsec, &off) == DRA_OK) {
            char buf[64];
            int64_t sec2;
            int32_t nsec2;
            lib_ts_format(sec, nsec, 0, buf, sizeof buf);
            assert_int_equal(lib_ts_parse(buf, strlen(buf), &sec2, &nsec2, NULL), DRA_OK);
            assert_int_equal(sec, sec2);
            assert_int_equal(nsec, nsec2);
        }
        if (lib_dur_parse(s, n, &ns, NULL) == DRA_OK) {
            char buf[64];
            lib_dur_format(ns, buf, sizeof buf);
            assert_true(buf[strlen(buf) - 1] == 's');
        }
        if (lib_tz_parse_posix(s, n, &f) == DRA_OK) {
            lib_tz z;
            memset(&z, 0, sizeof z);
            z.footer = f;
            for (int64_t t = LIB_TS_MIN_SEC; t < LIB_TS_MAX_SEC; t += 86400LL * 3653)
                (void)lib_tz_offset(&z, t);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_rfc3339),
        cmocka_unit_test(test_format_rfc3339),
        cmocka_unit_test(test_duration_parse),
        cmocka_unit_test(test_duration_format),
        cmocka_unit_test(test_float_f),
        cmocka_unit_test(test_duration_accessors),
        cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_civil),
        cmocka_unit_test(test_zones_files),
        cmocka_unit_test(test_zone_resolve),
        cmocka_unit_test(test_posix),
        cmocka_unit_test(test_injected_provider),
        cmocka_unit_test(test_tzif_failmalloc),
        cmocka_unit_test(test_tzif_hostile),
        cmocka_unit_test(test_random_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
