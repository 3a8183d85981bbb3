/*
 * lib_time_ops.c: the CEL overloads for timestamps and durations built on
 * lib_time.c/lib_tz.c: conversions from and to strings and ints,
 * arithmetic with cel-go's overflow errors, and the get* accessors with an
 * optional time zone. Comparisons and identity conversions are in the
 * engine's standard library.
 */
#include "lib_common.h"
#include "lib_time.h"

static const char *const ts_type = "google.protobuf.Timestamp";
static const char *const dur_type = "google.protobuf.Duration";

static cel_value ts_overflow(cel_ctx *ctx)
{
    return cel_err(ctx, "timestamp overflow");
}

static cel_value dur_overflow(cel_ctx *ctx)
{
    return cel_err(ctx, "duration overflow");
}

/* ---- conversions -------------------------------------------------------------- */

static cel_value t_from_string(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t sec;
    int32_t ns;
    dra_err e = lib_ts_parse(a[0].u.s, a[0].n, &sec, &ns, NULL);
    (void)n;
    if (e == DRA_ERANGE)
        return ts_overflow(ctx);
    if (e != DRA_OK)
        return cel_err(ctx, "type conversion error from 'string' to '%s'", ts_type);
    return cel_timestamp(sec, (uint32_t)ns);
}

static cel_value t_from_int(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    if (a[0].u.i < LIB_TS_MIN_SEC || a[0].u.i > LIB_TS_MAX_SEC)
        return ts_overflow(ctx);
    return cel_timestamp(a[0].u.i, 0);
}

static cel_value d_from_string(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t ns;
    (void)n;
    if (lib_dur_parse(a[0].u.s, a[0].n, &ns, NULL) != DRA_OK)
        return cel_err(ctx, "type conversion error from 'string' to '%s'", dur_type);
    return cel_duration(ns);
}

static cel_value t_to_string(cel_ctx *ctx, const cel_value *a, size_t n)
{
    char buf[48];
    size_t len = lib_ts_format(a[0].u.i, (int32_t)a[0].n, 0, buf, sizeof buf);
    (void)n;
    return cel_str_new(ctx, buf, len);
}

static cel_value d_to_string(cel_ctx *ctx, const cel_value *a, size_t n)
{
    char buf[64];
    size_t len = lib_dur_format(a[0].u.i, buf, sizeof buf);
    (void)n;
    return cel_str_new(ctx, buf, len);
}

static cel_value t_to_int(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int(a[0].u.i);
}

static cel_value d_to_int(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int(a[0].u.i);
}

/* ---- arithmetic ------------------------------------------------------------------ */

static cel_value ts_result(cel_ctx *ctx, dra_err e, int64_t s, int32_t ns)
{
    return e == DRA_OK ? cel_timestamp(s, (uint32_t)ns) : ts_overflow(ctx);
}

static cel_value add_ts_dur(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t s;
    int32_t ns;
    dra_err e = lib_ts_add(a[0].u.i, (int32_t)a[0].n, a[1].u.i, &s, &ns);
    (void)n;
    return ts_result(ctx, e, s, ns);
}

static cel_value add_dur_ts(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t s;
    int32_t ns;
    dra_err e = lib_ts_add(a[1].u.i, (int32_t)a[1].n, a[0].u.i, &s, &ns);
    (void)n;
    return ts_result(ctx, e, s, ns);
}

static cel_value sub_ts_dur(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t s;
    int32_t ns;
    dra_err e = lib_ts_sub_dur(a[0].u.i, (int32_t)a[0].n, a[1].u.i, &s, &ns);
    (void)n;
    return ts_result(ctx, e, s, ns);
}

static cel_value sub_ts_ts(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t d;
    (void)n;
    if (lib_ts_diff(a[0].u.i, (int32_t)a[0].n, a[1].u.i, (int32_t)a[1].n, &d) != DRA_OK)
        return dur_overflow(ctx);
    return cel_duration(d);
}

static cel_value add_dur_dur(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t d;
    (void)n;
    if (lib_dur_add(a[0].u.i, a[1].u.i, &d) != DRA_OK)
        return dur_overflow(ctx);
    return cel_duration(d);
}

static cel_value sub_dur_dur(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t d;
    (void)n;
    if (lib_dur_sub(a[0].u.i, a[1].u.i, &d) != DRA_OK)
        return dur_overflow(ctx);
    return cel_duration(d);
}

/* ---- accessors --------------------------------------------------------------------- */

typedef enum ts_field {
    TF_YEAR, TF_MONTH, TF_DAY_OF_YEAR, TF_DATE, TF_DAY_OF_MONTH, TF_DAY_OF_WEEK,
    TF_HOURS, TF_MINUTES, TF_SECONDS, TF_MILLIS
} ts_field;

static int64_t field_of(const lib_civil *c, int32_t nsec, ts_field f)
{
    switch (f) {
    case TF_YEAR: return c->year;
    case TF_MONTH: return c->month - 1;
    case TF_DAY_OF_YEAR: return c->yday;
    case TF_DATE: return c->day;
    case TF_DAY_OF_MONTH: return c->day - 1;
    case TF_DAY_OF_WEEK: return c->wday;
    case TF_HOURS: return c->hour;
    case TF_MINUTES: return c->min;
    case TF_SECONDS: return c->sec;
    case TF_MILLIS: return nsec / 1000000;
    }
    return 0;
}

/* Zones are loaded once per VM: the cache lives in the VM's library slot
 * keyed by this library's table, and is freed with the VM. A VM serves
 * one thread at a time, so the cache needs no more than its own mutex. */
extern const cel_lib cel_lib_time;

static void zone_cache_free(void *p, const dra_mem *mem)
{
    lib_zone_cache_fini(p);
    dra_free(mem, p);
}

static lib_zone_cache *vm_zone_cache(cel_ctx *ctx)
{
    void **slot = cel_ctx_slot(ctx, &cel_lib_time, zone_cache_free);
    const dra_mem *mem = cel_ctx_mem(ctx);
    lib_zone_cache *c;
    if (!slot)
        return NULL;
    if (!*slot) {
        if (!(c = dra_malloc(mem, sizeof *c)))
            return NULL;
        lib_zone_cache_init(c, mem, NULL);
        *slot = c;
    }
    return *slot;
}

/* The UT offset a time zone argument names at instant |sec|. When no slot
 * is free, a cache that lives for this call only is used instead. */
static cel_value zone_offset(cel_ctx *ctx, cel_value tz, int64_t sec, int32_t *off)
{
    lib_zone_cache local, *cache = vm_zone_cache(ctx);
    const lib_tz *z = NULL;
    dra_buf why;
    dra_err e;
    cel_value r = cel_null();
    if (!cache) {
        lib_zone_cache_init(&local, NULL, NULL);
        cache = &local;
    }
    dra_buf_init(&why, NULL);
    e = lib_zone_resolve(cache, tz.u.s, tz.n, &z, off, &why);
    if (e == DRA_OK && z)
        *off = lib_tz_offset(z, sec);
    else if (e != DRA_OK)
        r = e == DRA_ENOMEM ? cel_error_value(&cel_e_nomem)
                            : cel_err(ctx, "%s", why.p ? why.p : "invalid time zone");
    dra_buf_fini(&why);
    if (cache == &local)
        lib_zone_cache_fini(&local);
    return r;
}

static cel_value ts_get(cel_ctx *ctx, const cel_value *a, size_t n, ts_field f)
{
    int32_t off = 0;
    lib_civil c;
    if (n > 1) {
        cel_value r = zone_offset(ctx, a[1], a[0].u.i, &off);
        if (r.kind == CEL_K_ERROR)
            return r;
    }
    lib_civil_from_unix(a[0].u.i + off, &c);
    return cel_int(field_of(&c, (int32_t)a[0].n, f));
}

#define GETTER(NAME, F)                                                      \
    static cel_value NAME(cel_ctx *ctx, const cel_value *a, size_t n)        \
    {                                                                        \
        return ts_get(ctx, a, n, F);                                         \
    }
GETTER(g_year, TF_YEAR)
GETTER(g_month, TF_MONTH)
GETTER(g_day_of_year, TF_DAY_OF_YEAR)
GETTER(g_date, TF_DATE)
GETTER(g_day_of_month, TF_DAY_OF_MONTH)
GETTER(g_day_of_week, TF_DAY_OF_WEEK)
GETTER(g_hours, TF_HOURS)
GETTER(g_minutes, TF_MINUTES)
GETTER(g_seconds, TF_SECONDS)
GETTER(g_millis, TF_MILLIS)

static cel_value dg_hours(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int(lib_dur_hours(a[0].u.i));
}

static cel_value dg_minutes(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int(lib_dur_minutes(a[0].u.i));
}

static cel_value dg_seconds(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int(lib_dur_seconds(a[0].u.i));
}

static cel_value dg_millis(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int(lib_dur_millis(a[0].u.i));
}

#define M CEL_OV_MEMBER
#define TS_GET(ID, NAME, FN)                                                  \
    {.id = "timestamp_to_" ID, .name = NAME, .flags = M, .result = "int",    \
     .args = {"timestamp"}, .fn = FN},                                       \
    {.id = "timestamp_to_" ID "_with_tz", .name = NAME, .flags = M,          \
     .result = "int", .args = {"timestamp", "string"}, .fn = FN}
#define DUR_GET(ID, NAME, FN)                                                 \
    {.id = "duration_to_" ID, .name = NAME, .flags = M, .result = "int",     \
     .args = {"duration"}, .fn = FN}

static const cel_overload time_ovs[] = {
    {.id = "string_to_timestamp", .name = "timestamp", .result = "timestamp",
     .args = {"string"}, .fn = t_from_string},
    {.id = "int64_to_timestamp", .name = "timestamp", .result = "timestamp",
     .args = {"int"}, .fn = t_from_int},
    {.id = "string_to_duration", .name = "duration", .result = "duration",
     .args = {"string"}, .fn = d_from_string},
    {.id = "timestamp_to_string", .name = "string", .result = "string",
     .args = {"timestamp"}, .fn = t_to_string},
    {.id = "duration_to_string", .name = "string", .result = "string",
     .args = {"duration"}, .fn = d_to_string},
    {.id = "timestamp_to_int64", .name = "int", .result = "int",
     .args = {"timestamp"}, .fn = t_to_int},
    {.id = "duration_to_int64", .name = "int", .result = "int",
     .args = {"duration"}, .fn = d_to_int},
    {.id = "add_timestamp_duration", .name = "_+_", .result = "timestamp",
     .args = {"timestamp", "duration"}, .fn = add_ts_dur},
    {.id = "add_duration_timestamp", .name = "_+_", .result = "timestamp",
     .args = {"duration", "timestamp"}, .fn = add_dur_ts},
    {.id = "add_duration_duration", .name = "_+_", .result = "duration",
     .args = {"duration", "duration"}, .fn = add_dur_dur},
    {.id = "subtract_timestamp_timestamp", .name = "_-_", .result = "duration",
     .args = {"timestamp", "timestamp"}, .fn = sub_ts_ts},
    {.id = "subtract_timestamp_duration", .name = "_-_", .result = "timestamp",
     .args = {"timestamp", "duration"}, .fn = sub_ts_dur},
    {.id = "subtract_duration_duration", .name = "_-_", .result = "duration",
     .args = {"duration", "duration"}, .fn = sub_dur_dur},
    TS_GET("year", "getFullYear", g_year),
    TS_GET("month", "getMonth", g_month),
    TS_GET("day_of_year", "getDayOfYear", g_day_of_year),
    TS_GET("day_of_month_1_based", "getDate", g_date),
    TS_GET("day_of_month", "getDayOfMonth", g_day_of_month),
    TS_GET("day_of_week", "getDayOfWeek", g_day_of_week),
    TS_GET("hours", "getHours", g_hours),
    TS_GET("minutes", "getMinutes", g_minutes),
    TS_GET("seconds", "getSeconds", g_seconds),
    TS_GET("milliseconds", "getMilliseconds", g_millis),
    DUR_GET("hours", "getHours", dg_hours),
    DUR_GET("minutes", "getMinutes", dg_minutes),
    DUR_GET("seconds", "getSeconds", dg_seconds),
    DUR_GET("milliseconds", "getMilliseconds", dg_millis),
};
#undef M

const cel_lib cel_lib_time = {
    "cel.lib.time", time_ovs, sizeof time_ovs / sizeof time_ovs[0], NULL, 0, NULL};
