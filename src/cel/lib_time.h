/*
 * lib_time.h: value-independent helpers behind CEL's timestamp and
 * duration types: RFC 3339 parsing and printing with cel-go's rules, Go's
 * duration syntax, checked arithmetic, civil-date fields, and time zones
 * (fixed offsets and IANA zones from TZif data, through a zone provider so
 * that the evaluator itself does no I/O). lib_time_ops.c binds these to
 * CEL overloads.
 */
#ifndef DRA_CEL_LIB_TIME_H
#define DRA_CEL_LIB_TIME_H

#include <pthread.h>

#include "dra/base.h"

/* cel-go's supported range, 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z
 * (plus up to 999999999 ns), in Unix seconds. */
#define LIB_TS_MIN_SEC (-62135596800LL)
#define LIB_TS_MAX_SEC 253402300799LL
#define LIB_NS_PER_SEC 1000000000LL

/* ---- timestamps ---------------------------------------------------------- */

/* Parse an RFC 3339 timestamp as Go's time.Parse(time.RFC3339, s) does
 * ("2006-01-02T15:04:05Z", optional fraction of any length, truncated to
 * nanoseconds, "Z" or "+hh:mm"/"-hh:mm"). |*sec|/|*nsec| receive the UTC
 * instant, |*off| the offset in seconds east of UTC (may be NULL).
 * DRA_EPARSE on bad syntax or field ranges; DRA_ERANGE when the instant is
 * outside cel-go's range (message "timestamp overflow"). */
DRA_HIDDEN dra_err lib_ts_parse(const char *s, size_t len, int64_t *sec,
                                  int32_t *nsec, int32_t *off);

/* Print like Go's Format(time.RFC3339Nano) in a zone |off| seconds east of
 * UTC: trailing zeros of the fraction dropped, "Z" for offset 0. Writes at
 * most |size| bytes including the NUL; returns the length needed. 40 bytes
 * always suffice. */
DRA_HIDDEN size_t lib_ts_format(int64_t sec, int32_t nsec, int32_t off,
                                  char *buf, size_t size);

/* Checked arithmetic with cel-go's errors. DRA_ERANGE means "timestamp
 * overflow" for the first two (result outside the supported range) and
 * "duration overflow" for the rest (result outside int64 nanoseconds). */
DRA_HIDDEN dra_err lib_ts_add(int64_t sec, int32_t nsec, int64_t dur_ns,
                                int64_t *osec, int32_t *onsec);
DRA_HIDDEN dra_err lib_ts_sub_dur(int64_t sec, int32_t nsec, int64_t dur_ns,
                                    int64_t *osec, int32_t *onsec);
DRA_HIDDEN dra_err lib_ts_diff(int64_t asec, int32_t ansec, int64_t bsec,
                                 int32_t bnsec, int64_t *out_ns);
DRA_HIDDEN dra_err lib_dur_add(int64_t a, int64_t b, int64_t *out);
DRA_HIDDEN dra_err lib_dur_sub(int64_t a, int64_t b, int64_t *out);
DRA_HIDDEN dra_err lib_dur_neg(int64_t a, int64_t *out);

/* ---- durations ----------------------------------------------------------- */

/* Parse Go's time.ParseDuration syntax: optional sign, then one or more
 * decimal numbers with optional fraction and a unit (ns us µs μs ms s m h),
 * or a lone "0". DRA_EPARSE (bad syntax or unit) or DRA_ERANGE (does not
 * fit int64 nanoseconds). When |why| is not NULL, Go's message ("time:
 * invalid duration \"1x\"", "time: unknown unit \"x\" in duration ...")
 * is appended to it. */
DRA_HIDDEN dra_err lib_dur_parse(const char *s, size_t len, int64_t *ns,
                                 dra_buf *why);

/* Print like cel-go's string(duration): Go's
 * strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s", e.g. "5400s",
 * "1.5s", "0.000000001s". Same contract as lib_ts_format; 48 bytes
 * always suffice. */
DRA_HIDDEN size_t lib_dur_format(int64_t ns, char *buf, size_t size);

/* The duration accessors, computed as Go computes them (float64 hours,
 * minutes and seconds truncated; integer milliseconds). */
DRA_HIDDEN int64_t lib_dur_hours(int64_t ns);
DRA_HIDDEN int64_t lib_dur_minutes(int64_t ns);
DRA_HIDDEN int64_t lib_dur_seconds(int64_t ns);
DRA_HIDDEN int64_t lib_dur_millis(int64_t ns);

/* The shortest decimal digits that round-trip |x| (finite, > 0): |digits|
 * receives 1..17 ASCII digits (NUL-terminated), |*exp10| the decimal
 * exponent so that x = 0.d1d2... * 10^exp10. Used by every printer that
 * follows Go's strconv 'f'/'e'/'g' with precision -1. Assumes the C
 * locale's decimal point in snprintf/strtod (libdra never calls
 * setlocale). */
DRA_HIDDEN void lib_shortest_digits(double x, char digits[24], int *exp10);
/* Go's strconv.FormatFloat(x, 'f', -1, 64) into |out|. */
DRA_HIDDEN dra_err lib_format_float_f(double x, dra_buf *out);

/* ---- civil time ---------------------------------------------------------- */

typedef struct lib_civil {
    int64_t year;
    int month;  /* 1..12 */
    int day;    /* 1..31 */
    int hour, min, sec;
    int wday;   /* 0 = Sunday */
    int yday;   /* 0-based */
} lib_civil;

/* Break |local_sec| (seconds since 1970-01-01T00:00:00 in some zone) into
 * fields, proleptic Gregorian. */
DRA_HIDDEN void lib_civil_from_unix(int64_t local_sec, lib_civil *c);
/* Days since 1970-01-01 of a proleptic Gregorian date (month 1..12). */
DRA_HIDDEN int64_t lib_days_from_civil(int64_t y, int m, int d);

/* ---- time zones ---------------------------------------------------------- */

/* One transition rule from a POSIX TZ string (RFC 8536 section 3.3). */
typedef struct lib_tz_rule {
    char kind; /* 'J' (1..365, no leap day), 'D' (0..365), 'M' (month.week.day) */
    int a, b, c; /* J/D: day in a; M: month a, week b, weekday c */
    int32_t time; /* seconds after local midnight (may be <0 or > 24h) */
} lib_tz_rule;

typedef struct lib_tz_footer {
    int present;
    int32_t std_off; /* seconds east of UTC */
    int has_dst;
    int32_t dst_off;
    lib_tz_rule start, end;
} lib_tz_footer;

/* A loaded zone. Immutable after load; shared by every evaluation. */
typedef struct lib_tz {
    char *name;
    size_t ntrans;
    int64_t *trans;     /* transition instants, ascending */
    uint8_t *trans_idx; /* index into offs per transition */
    size_t ntypes;
    int32_t *offs;      /* UT offsets of the local time types */
    uint8_t *isdst;
    lib_tz_footer footer;
} lib_tz;

/* Parse TZif data (RFC 8536, versions 1 to 4; the 64-bit block and the
 * footer TZ string are used when present). |name| is copied. DRA_EPARSE
 * for malformed data, DRA_ENOMEM. Free with lib_tz_free. */
DRA_HIDDEN dra_err lib_tz_parse(const dra_mem *mem, const char *name,
                                const unsigned char *data, size_t len,
                                lib_tz **out);
DRA_HIDDEN void lib_tz_free(const dra_mem *mem, lib_tz *z);
/* Parse a POSIX TZ string ("PST8PDT,M3.2.0,M11.1.0"); DRA_EPARSE. */
DRA_HIDDEN dra_err lib_tz_parse_posix(const char *s, size_t len,
                                      lib_tz_footer *out);
/* Offset (seconds east of UTC) in effect at Unix time |t|. */
DRA_HIDDEN int32_t lib_tz_offset(const lib_tz *z, int64_t t);

/* Where IANA zone data comes from. |load| fills *data (allocated with
 * |mem|, freed by the caller with dra_free) with the TZif bytes of |name|;
 * it returns DRA_ENOTFOUND for an unknown zone. The default provider reads
 * <dir>/<name> with dir "/usr/share/zoneinfo" (or the one given). */
typedef struct lib_zone_provider {
    dra_err (*load)(void *ud, const char *name, const dra_mem *mem,
                    unsigned char **data, size_t *len);
    void *ud;
} lib_zone_provider;

/* The file-reading provider; |dir| (borrowed, may be NULL for the
 * default) must outlive the provider. */
DRA_HIDDEN lib_zone_provider lib_zone_provider_files(const char *dir);

/* A thread-safe cache of loaded zones (one per environment). The cache
 * owns the zones; a returned zone stays valid until lib_zone_cache_fini. */
typedef struct lib_zone_cache {
    const dra_mem *mem;
    lib_zone_provider provider;
    pthread_mutex_t lock;
    lib_tz **zones;
    size_t n, cap;
} lib_zone_cache;

DRA_HIDDEN void lib_zone_cache_init(lib_zone_cache *c, const dra_mem *mem,
                                    const lib_zone_provider *provider);
DRA_HIDDEN void lib_zone_cache_fini(lib_zone_cache *c);

/* Resolve a CEL time zone argument the way cel-go does: a string with a
 * ':' is a fixed offset "[+-]h:m" (parsed like Go's strconv.Atoi on each
 * side), anything else an IANA name ("", "UTC" are UTC). On success
 * either *zone is set (IANA) or *zone is NULL and *fixed_off holds the
 * offset. Errors (message appended to |why| when not NULL): DRA_EINVAL
 * "time: invalid location name", DRA_ENOTFOUND "unknown time zone X",
 * DRA_EPARSE for a bad offset, DRA_ENOMEM, DRA_EIO. */
DRA_HIDDEN dra_err lib_zone_resolve(lib_zone_cache *c, const char *tz,
                                    size_t len, const lib_tz **zone,
                                    int32_t *fixed_off, dra_buf *why);

#endif
