/*
 * cel_int.h: the internal interface of the CEL engine, shared by the
 * compiler stages (lex, parse, check, compile, vm) and by the library
 * files (stdlib.c here, lib_*.c from the "cel-libs" side).
 *
 * ---- HOW A LIBRARY FILE (src/cel/lib_*.c) PLUGS IN ---------------------
 * 1. Write overloads as a `static const cel_overload NAME_ovs[]` table:
 *      { .id = "quantity_compareTo", .name = "compareTo",
 *        .flags = CEL_OV_MEMBER, .result = "int",
 *        .args = {"kubernetes.Quantity", "kubernetes.Quantity"},
 *        .fn = q_compare_to },
 *    - |args| lists every argument, receiver first for CEL_OV_MEMBER.
 *    - Type strings: int uint double bool string bytes null_type dyn type
 *      duration timestamp list(T) map(K, V) optional_type(T)
 *      kubernetes.Quantity kubernetes.Semver, any name a cel_lib declares
 *      in |types|, and single upper-case letters (A, B, K, V, T) as type
 *      parameters, bound consistently within one overload.
 *    - The C function receives arguments already checked against the
 *      argument kinds (type parameters and dyn accept anything) and never
 *      sees an error or unknown argument unless the overload has
 *      CEL_OV_NONSTRICT. It returns a value; errors are values
 *      (cel_err(ctx, "...")). It must not keep pointers to |args| beyond
 *      the call unless they point into the scratch arena or the program.
 *    - Allocate result memory with cel_alloc / cel_str_new / cel_list_new
 *      (scratch arena of the VM, reset at every evaluation).
 *    - |cost| (optional) returns the runtime cost of one call; NULL means
 *      1, as cel-go charges by default. |est| (optional) is the checker's
 *      worst-case estimate from argument size bounds; NULL means 1.
 * 2. Export one `const cel_lib cel_lib_NAME = { "NAME", NAME_ovs,
 *    count, types, ntypes, enabled }` (|enabled| NULL = every env).
 * 3. Add a line `CEL_LIB(cel_lib_NAME)` to src/cel/lib_all.h (owned by
 *    cel-libs; the registry includes it when it exists via __has_include,
 *    so the engine builds before any library exists).
 * Functions named like existing ones add overloads to them (e.g. more
 * `size` or `_+_` overloads). Operator names are cel-go's: _+_ _-_ _*_
 * _/_ _%_ _<_ _<=_ _>_ _>=_ _==_ _!=_ -_ !_ _[_] @in; those built into
 * the VM (arithmetic on int/uint/double/string/bytes/list, comparisons
 * of built-in kinds, equality) are tried first, library overloads after.
 * -----------------------------------------------------------------------
 */
#ifndef DRA_CEL_INT_H
#define DRA_CEL_INT_H

#include <stdint.h>
#include <string.h>

#include "dra/cel.h"

#define CEL_FUNC DRA_HIDDEN
/* CEL_NOINLINE keeps a slow path out of its fast caller, which then
 * stays a leaf; CEL_ALWAYS_INLINE keeps a fast path inline in each of its
 * hot callers, which the inliner's budget stops doing once there are two. */
#if defined(__GNUC__) || defined(__clang__)
#define CEL_NOINLINE __attribute__((noinline))
#define CEL_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define CEL_NOINLINE
#define CEL_ALWAYS_INLINE inline
#endif

/* ---- values ---------------------------------------------------------- */

/* ORDER cel_kind: cel_kind_names in value.c follows it. */
typedef enum cel_kind {
    CEL_K_NULL,
    CEL_K_BOOL,
    CEL_K_INT,
    CEL_K_UINT,
    CEL_K_DOUBLE,
    CEL_K_STRING,   /* UTF-8; u.s with n bytes, not NUL-terminated */
    CEL_K_BYTES,    /* u.s with n bytes */
    CEL_K_LIST,     /* u.list */
    CEL_K_MAP,      /* u.map */
    CEL_K_TYPE,     /* u.type: a type as a value (type(1) == int) */
    CEL_K_DURATION, /* u.i nanoseconds */
    CEL_K_TIMESTAMP,/* u.i seconds since the Unix epoch, n nanoseconds */
    CEL_K_OPTIONAL, /* u.opt: boxed value, NULL for optional.none() */
    CEL_K_QUANTITY, /* u.q: kubernetes.Quantity */
    CEL_K_SEMVER,   /* u.sv: kubernetes.Semver */
    CEL_K_OBJECT,   /* u.obj: a message-like object (the DRA device) */
    CEL_K_OPAQUE,   /* u.op: library-defined opaque value (URL, IP, ...) */
    CEL_K_ERROR,    /* u.err */
    CEL_K__COUNT
} cel_kind;

typedef struct cel_list cel_list;
typedef struct cel_map cel_map;
typedef struct cel_type cel_type;
typedef struct cel_error cel_error;
typedef struct cel_object cel_object;
typedef struct cel_opaque cel_opaque;

/* 16 bytes, passed by value. Strings and bytes are borrowed pointers into
 * the program's constant pool, the activation, or the VM's scratch arena. */
typedef struct cel_value {
    uint8_t kind;  /* cel_kind */
    uint8_t flags;
    uint16_t pad;
    uint32_t n;    /* string/bytes length in bytes; timestamp nanos */
    union {
        int b;
        int64_t i;
        uint64_t u;
        double d;
        const char *s;
        const cel_list *list;
        const cel_map *map;
        const cel_type *type;
        const cel_error *err;
        const struct cel_value *opt;
        const dra_quantity *q;
        const dra_semver *sv;
        const cel_object *obj;
        const cel_opaque *op;
    } u;
} cel_value;

struct cel_list {
    size_t n;
    const cel_value *v;
};

typedef struct cel_map_entry {
    cel_value k, v;
    uint64_t hash; /* cel_value_hash(k) */
} cel_map_entry;

#define CEL_MAP_MISSING_EMPTY 1u /* lookups of absent keys give {} (DRA) */
struct cel_map {
    size_t n;
    const cel_map_entry *e;
    unsigned flags;
    /* Optional open-addressing index over e (1 + entry position, 0 empty;
     * 1 << ibits slots, at most 255 entries): prepared devices have one,
     * so constant-key lookups probe instead of scanning. */
    unsigned ibits;
    const uint8_t *index;
};

struct cel_error {
    const char *msg;
};

/* Objects: a fixed set of named fields (the DRA device). */
typedef struct cel_object_type {
    const char *name;      /* "kubernetes.DRADevice" */
    size_t nfields;
    const char *const *field_names;
    const char *const *field_types; /* type strings, as for overloads */
} cel_object_type;
struct cel_object {
    const cel_object_type *type;
    const cel_value *fields; /* nfields values */
};

/* Library-defined opaque values. |type| names the CEL type. */
typedef struct cel_opaque_type {
    const char *name;
    /* Equality between two values of this type: 1, 0. NULL: identity. */
    int (*equal)(const cel_opaque *a, const cel_opaque *b);
} cel_opaque_type;
struct cel_opaque {
    const cel_opaque_type *type;
    const void *data;
};

static inline cel_value cel_null(void)
{
    cel_value v = {0};
    v.kind = CEL_K_NULL;
    return v;
}
static inline cel_value cel_bool(int b)
{
    cel_value v = {0};
    v.kind = CEL_K_BOOL;
    v.u.b = b != 0;
    return v;
}
static inline cel_value cel_int(int64_t i)
{
    cel_value v = {0};
    v.kind = CEL_K_INT;
    v.u.i = i;
    return v;
}
static inline cel_value cel_uint(uint64_t u)
{
    cel_value v = {0};
    v.kind = CEL_K_UINT;
    v.u.u = u;
    return v;
}
static inline cel_value cel_double(double d)
{
    cel_value v = {0};
    v.kind = CEL_K_DOUBLE;
    v.u.d = d;
    return v;
}
/* Borrows |s|; it must outlive the value (see cel_str_new to copy). */
static inline cel_value cel_str(const char *s, size_t len)
{
    cel_value v = {0};
    v.kind = CEL_K_STRING;
    v.n = (uint32_t)len;
    v.u.s = s;
    return v;
}
static inline cel_value cel_bytes(const char *s, size_t len)
{
    cel_value v = cel_str(s, len);
    v.kind = CEL_K_BYTES;
    return v;
}
static inline cel_value cel_duration(int64_t ns)
{
    cel_value v = {0};
    v.kind = CEL_K_DURATION;
    v.u.i = ns;
    return v;
}
static inline cel_value cel_timestamp(int64_t sec, uint32_t nanos)
{
    cel_value v = {0};
    v.kind = CEL_K_TIMESTAMP;
    v.u.i = sec;
    v.n = nanos;
    return v;
}
static inline cel_value cel_type_value(const cel_type *t)
{
    cel_value v = {0};
    v.kind = CEL_K_TYPE;
    v.u.type = t;
    return v;
}
static inline cel_value cel_list_value(const cel_list *l)
{
    cel_value v = {0};
    v.kind = CEL_K_LIST;
    v.u.list = l;
    return v;
}
static inline cel_value cel_map_value(const cel_map *m)
{
    cel_value v = {0};
    v.kind = CEL_K_MAP;
    v.u.map = m;
    return v;
}
static inline cel_value cel_error_value(const cel_error *e)
{
    cel_value v = {0};
    v.kind = CEL_K_ERROR;
    v.u.err = e;
    return v;
}
static inline int cel_is_error(cel_value v)
{
    return v.kind == CEL_K_ERROR;
}

/* Static errors (no allocation); the texts are cel-go's. */
extern const cel_error cel_e_no_overload;   /* "no such overload" */
extern const cel_error cel_e_div_zero;      /* "division by zero" */
extern const cel_error cel_e_mod_zero;      /* "modulus by zero" */
extern const cel_error cel_e_overflow;      /* "return error for overflow" */
extern const cel_error cel_e_nomem;         /* "out of memory" */
extern const cel_error cel_e_range;         /* "range error" */

/* ---- types ----------------------------------------------------------- */

typedef enum cel_tkind {
    CEL_T_DYN,
    CEL_T_NULL,
    CEL_T_BOOL,
    CEL_T_INT,
    CEL_T_UINT,
    CEL_T_DOUBLE,
    CEL_T_STRING,
    CEL_T_BYTES,
    CEL_T_LIST,     /* params[0] element */
    CEL_T_MAP,      /* params[0] key, params[1] value */
    CEL_T_TYPE,     /* params[0] the type it denotes, when known */
    CEL_T_DURATION,
    CEL_T_TIMESTAMP,
    CEL_T_OPTIONAL, /* params[0] */
    CEL_T_QUANTITY,
    CEL_T_SEMVER,
    CEL_T_OBJECT,   /* |obj| describes the fields */
    CEL_T_OPAQUE,   /* by |name| */
    CEL_T_ERROR,
    CEL_T_PARAM,    /* a type parameter, by |name| */
    CEL_T_ANY       /* google.protobuf.Any: like dyn */
} cel_tkind;

struct cel_type {
    uint8_t kind;    /* cel_tkind */
    uint8_t nparams;
    const char *name; /* CEL type name: "int", "list", "kubernetes.Quantity" */
    const cel_type *params[2];
    const cel_object_type *obj;
};

/* Singletons for the simple types. */
extern const cel_type cel_t_dyn, cel_t_null, cel_t_bool, cel_t_int,
    cel_t_uint, cel_t_double, cel_t_string, cel_t_bytes, cel_t_list,
    cel_t_map, cel_t_type, cel_t_duration, cel_t_timestamp, cel_t_optional,
    cel_t_quantity, cel_t_semver, cel_t_error, cel_t_any;

/* The runtime type of a value (list and map without parameters). */
CEL_FUNC const cel_type *cel_value_type(cel_value v);

/* ---- calling convention for built-ins --------------------------------- */

typedef struct cel_ctx cel_ctx; /* the VM as seen by a built-in */

typedef cel_value (*cel_fn)(cel_ctx *ctx, const cel_value *args, size_t nargs);
typedef uint64_t (*cel_cost_fn)(const cel_value *args, size_t nargs,
                                cel_value result);
/* Worst-case size bounds of the arguments: for strings code points, for
 * lists and maps entries; 1 for scalars. */
typedef uint64_t (*cel_est_fn)(const uint64_t *arg_max_sizes, size_t nargs);

#define CEL_MAX_ARGS 4
enum {
    CEL_OV_MEMBER = 1u,    /* receiver style: args[0] is the receiver */
    CEL_OV_NONSTRICT = 2u, /* receives error arguments too */
};

typedef struct cel_overload {
    const char *id;
    const char *name;
    unsigned flags;
    const char *result;
    const char *args[CEL_MAX_ARGS]; /* receiver first; NULL ends */
    cel_fn fn;
    cel_cost_fn cost;
    cel_est_fn est;
} cel_overload;

/* What a library's |enabled| predicate may look at. */
typedef enum cel_env_kind { CEL_ENV_STD, CEL_ENV_DRA } cel_env_kind;
typedef struct cel_env_info {
    cel_env_kind kind;
    const dra_cel_options *opts; /* never NULL; zero fields = defaults */
} cel_env_info;

typedef struct cel_lib {
    const char *name;
    const cel_overload *overloads;
    size_t noverloads;
    const cel_opaque_type *const *types; /* opaque types it introduces */
    size_t ntypes;
    int (*enabled)(const cel_env_info *info); /* NULL: always */
} cel_lib;

/* Helpers for built-ins. */
CEL_FUNC void *cel_alloc(cel_ctx *ctx, size_t size); /* scratch; NULL on OOM */
/* An error value with a formatted message (scratch arena). */
CEL_FUNC cel_value cel_err(cel_ctx *ctx, const char *fmt, ...) DRA_PRINTF(2, 3);
CEL_FUNC cel_value cel_str_new(cel_ctx *ctx, const char *s, size_t len);
CEL_FUNC cel_value cel_bytes_new(cel_ctx *ctx, const char *s, size_t len);
/* A list of |n| items in the scratch arena; fill *items before use. */
CEL_FUNC cel_value cel_list_new(cel_ctx *ctx, size_t n, cel_value **items);
/* A map of |n| entries; fill keys/values with cel_map_set_entry. */
CEL_FUNC cel_value cel_map_new(cel_ctx *ctx, size_t n, cel_map_entry **entries);
CEL_FUNC void cel_map_entry_set(cel_map_entry *e, cel_value k, cel_value v);
CEL_FUNC cel_value cel_quantity_new(cel_ctx *ctx, const dra_quantity *q);
CEL_FUNC cel_value cel_semver_new(cel_ctx *ctx, const dra_semver *sv);
CEL_FUNC cel_value cel_optional_new(cel_ctx *ctx, const cel_value *v); /* NULL: none */
CEL_FUNC cel_value cel_opaque_new(cel_ctx *ctx, const cel_opaque_type *t,
                                  const void *data);
/* Charges extra runtime cost from inside a built-in (long loops). */
CEL_FUNC void cel_ctx_charge(cel_ctx *ctx, uint64_t cost);
/* Per-VM state for a library (e.g. a time-zone cache): returns the
 * address of a pointer slot identified by |key| (any stable address, such
 * as &cel_lib_time), NULL-initialised on first use. The VM calls
 * |fini|(*slot, mem) when it is freed, if *slot is not NULL. A VM is used
 * by one thread at a time, so no locking is needed. Returns NULL when all
 * CEL_CTX_SLOTS slots are taken by other keys. */
#define CEL_CTX_SLOTS 8
CEL_FUNC void **cel_ctx_slot(cel_ctx *ctx, const void *key,
                             void (*fini)(void *p, const dra_mem *mem));
/* The VM's allocator (for state kept across evaluations in a slot). */
CEL_FUNC const dra_mem *cel_ctx_mem(cel_ctx *ctx);

/* ---- value operations (value.c) --------------------------------------- */

/* CEL equality: 1 equal, 0 not equal, -1 "no such overload" (quantity or
 * semver against another type, as cel-go). Numbers compare across kinds. */
CEL_FUNC int cel_value_equal(cel_value a, cel_value b);
/* Ordering: sets *cmp to <0, 0, >0 and returns 0; -1 when the kinds have
 * no ordering. NaN compares unordered: returns 0 with *cmp = 2. */
CEL_FUNC int cel_value_compare(cel_value a, cel_value b, int *cmp);
/* Hash compatible with cel_value_equal for map keys (int/uint/double
 * with equal numeric value hash alike). */
CEL_FUNC uint64_t cel_value_hash(cel_value k);
/* Map lookup: 1 found (*out set), 0 absent. */
CEL_FUNC int cel_map_find(const cel_map *m, cel_value key, cel_value *out);
CEL_FUNC int cel_map_find_str(const cel_map *m, const char *s, size_t len,
                              uint64_t hash, cel_value *out);
/* Size in code points of a UTF-8 string (assumed valid). */
CEL_FUNC size_t cel_utf8_len(const char *s, size_t len);

/* ceil(0.1 * n): cel-go's string traversal cost factor applied to a size,
 * the unit of most size-dependent costs (no overflow for any n: the
 * estimator's sizes can be huge). */
static inline uint64_t cel_tenth(uint64_t n)
{
    return n / 10 + (n % 10 != 0);
}
CEL_FUNC int cel_utf8_valid(const char *s, size_t len);
/* Writes |v| as a CEL literal ("1u", "b\"..\"", "[1, 2]", "{\"a\": 1}").
 * Errors print as their message. */
CEL_FUNC dra_err cel_value_format(cel_value v, dra_buf *out);
CEL_FUNC const char *cel_kind_name(cel_kind k);

/* ---- regular expressions (regex.c): RE2 syntax over PCRE2 ------------- */

typedef struct cel_regex cel_regex;
/* Compiles |pat| (cached per VM; constant patterns are compiled once per
 * program). Returns NULL and sets *err to an error value on bad syntax or
 * constructs RE2 lacks (backreferences, lookaround, ...). */
CEL_FUNC const cel_regex *cel_regex_get(cel_ctx *ctx, const char *pat, size_t len,
                                        cel_value *err);
/* Searches |s| from byte |start|. 1 match (ovec[0..1] = byte offsets of the
 * whole match, ovec[2k..2k+1] of group k, -1 unset, up to |novec|/2
 * pairs), 0 no match, -1 error (match limit hit; *err set). */
CEL_FUNC int cel_regex_search(cel_ctx *ctx, const cel_regex *re, const char *s,
                              size_t len, size_t start, long *ovec, size_t novec,
                              cel_value *err);
CEL_FUNC int cel_regex_ngroups(const cel_regex *re);
/* `s.matches(re)`: 1 match, 0 none, -1 error (*err set); patterns of
 * fixed single-byte atoms (regex_fixed.c) without PCRE2. */
CEL_FUNC int cel_regex_matches(cel_ctx *ctx, const cel_regex *re, const char *s, size_t len,
                               cel_value *err);

#endif
