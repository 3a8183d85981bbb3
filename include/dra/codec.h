/*
 * dra/codec.h: bytes <-> one document model. JSON (jansson) and YAML
 * (libyaml, multi-document streams) both decode into dra_doc trees, and
 * both encoders print from them. Also the two scalar types Kubernetes
 * gives special syntax: resource.Quantity and semantic versions.
 *
 * A dra_doc tree lives in a dra_arena owned by the caller; nothing in it
 * is freed on its own. Map members keep their source order, so encoding
 * is stable and unknown fields survive a round trip.
 */
#ifndef DRA_CODEC_H
#define DRA_CODEC_H

#include "dra/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- document model ---------------------------------------------------- */

typedef enum dra_doc_kind {
    DRA_DOC_NULL,
    DRA_DOC_BOOL,
    DRA_DOC_INT,    /* fits int64 */
    DRA_DOC_FLOAT,  /* any other number; |num| keeps the source text */
    DRA_DOC_STRING,
    DRA_DOC_LIST,
    DRA_DOC_MAP
} dra_doc_kind;

typedef struct dra_doc dra_doc;
typedef struct dra_doc_member {
    const char *key; /* NUL-terminated; may contain NUL only via keylen */
    size_t keylen;
    dra_doc *val;
} dra_doc_member;

struct dra_doc {
    dra_doc_kind kind;
    int line, col; /* 1-based source position, 0 when built in memory */
    union {
        int b;
        int64_t i;
        struct { double f; const char *num; } f; /* num: source text or NULL */
        struct { const char *s; size_t len; } str; /* NUL-terminated too */
        struct { dra_doc **items; size_t n; } list;
        struct { dra_doc_member *m; size_t n; } map;
    } u;
};

/* Limits that protect every decoder from hostile input. */
#define DRA_DOC_MAX_DEPTH 256
#define DRA_DOC_MAX_BYTES (64u << 20) /* 64 MiB per input */

/* Decode one JSON document. On error returns DRA_EPARSE (or DRA_ENOMEM,
 * DRA_ELIMIT for depth/size) and adds "line:col: message" to |d|. The
 * tree is allocated in |a|. */
dra_err dra_doc_parse_json(dra_arena *a, const char *text, size_t len,
                           dra_doc **out, dra_diag *d);

/* Decode a YAML stream (which also accepts JSON). Every non-empty
 * document separated by `---` becomes one element of *docs (an array in
 * |a|); a YAML document that is a List object ({kind: List, items: [...]})
 * is returned as is, see dra_doc_flatten_lists. Anchors/aliases are
 * resolved with a bound on expansion (billion-laughs safe). Plain
 * scalars are typed like sigs.k8s.io/yaml (null, true/false, ints,
 * floats); quoted scalars are strings. */
dra_err dra_doc_parse_yaml(dra_arena *a, const char *text, size_t len,
                           dra_doc ***docs, size_t *n, dra_diag *d);

/* Encode. JSON compact when |indent| is 0, else pretty with that many
 * spaces. YAML in kubectl's style (2-space indent, block style, strings
 * quoted only when needed). Both append to |out|; DRA_ENOMEM on failure. */
dra_err dra_doc_to_json(const dra_doc *doc, int indent, dra_buf *out);
dra_err dra_doc_to_yaml(const dra_doc *doc, dra_buf *out);

/* Lookups on a map node; NULL when |map| is not a map or lacks the key. */
const dra_doc *dra_doc_get(const dra_doc *map, const char *key);

/* Builders, allocating in |a|; NULL on ENOMEM. */
dra_doc *dra_doc_new_null(dra_arena *a);
dra_doc *dra_doc_new_bool(dra_arena *a, int b);
dra_doc *dra_doc_new_int(dra_arena *a, int64_t i);
dra_doc *dra_doc_new_float(dra_arena *a, double f);
dra_doc *dra_doc_new_string(dra_arena *a, const char *s, size_t len);
dra_doc *dra_doc_new_list(dra_arena *a, size_t cap);
dra_doc *dra_doc_new_map(dra_arena *a, size_t cap);
/* Append to a list/map built with the builders above (grows in |a|). */
dra_err dra_doc_list_push(dra_arena *a, dra_doc *list, dra_doc *item);
dra_err dra_doc_map_set(dra_arena *a, dra_doc *map, const char *key, dra_doc *val);

/* Deep equality (map members compared as sets, numbers by value). */
int dra_doc_equal(const dra_doc *x, const dra_doc *y);

/* ---- resource.Quantity -------------------------------------------------
 * Exact: value = mant * 10^scale, with scale >= -9 (Kubernetes rounds up
 * to nano precision when parsing). Binary suffixes are exact integers.
 * Plain values, no allocation. */
typedef enum dra_quantity_format {
    DRA_QTY_DECIMAL_SI,       /* 100m, 5, 10k, 2G */
    DRA_QTY_BINARY_SI,        /* 64Ki, 80Gi */
    DRA_QTY_DECIMAL_EXPONENT  /* 1e3, 5E-3 */
} dra_quantity_format;

typedef struct dra_quantity {
    __int128 mant;
    int32_t scale;
    dra_quantity_format format;
} dra_quantity;

/* Parse Kubernetes' quantity syntax: optional sign, digits with an
 * optional fraction, then an SI suffix (n u m "" k M G T P E), a binary
 * suffix (Ki Mi Gi Ti Pi Ei) or an exponent (e3, E-2). DRA_EPARSE on bad
 * syntax; DRA_ERANGE when the value does not fit. */
dra_err dra_quantity_parse(const char *s, size_t len, dra_quantity *out);
/* Exact three-way comparison: <0, 0, >0. */
int dra_quantity_cmp(const dra_quantity *a, const dra_quantity *b);
/* Canonical string as kube-apiserver prints it ("189471Mi", "1500m",
 * "2k", "0"). Writes at most |size| bytes including NUL; returns the
 * length that was needed, like snprintf. */
size_t dra_quantity_str(const dra_quantity *q, char *buf, size_t size);
dra_quantity dra_quantity_from_int64(int64_t v, dra_quantity_format f);
/* Arithmetic; DRA_ERANGE on overflow. The result keeps a's format. */
dra_err dra_quantity_add(const dra_quantity *a, const dra_quantity *b, dra_quantity *out);
dra_err dra_quantity_sub(const dra_quantity *a, const dra_quantity *b, dra_quantity *out);
int dra_quantity_sign(const dra_quantity *q);
int dra_quantity_is_integer(const dra_quantity *q); /* integral and fits int64 */
/* DRA_ERANGE when not integral or outside int64. */
dra_err dra_quantity_to_int64(const dra_quantity *q, int64_t *out);
double dra_quantity_to_double(const dra_quantity *q);

/* ---- semantic versions (semver 2.0.0) -----------------------------------
 * |pre| and |build| point into the parsed text (borrowed: the caller keeps
 * it alive); their lengths are 0 when absent. */
typedef struct dra_semver {
    uint64_t major, minor, patch;
    const char *pre;
    size_t prelen;
    const char *build;
    size_t buildlen;
} dra_semver;

/* Strict semver 2.0.0. DRA_EPARSE on bad syntax. */
dra_err dra_semver_parse(const char *s, size_t len, dra_semver *out);
/* Precedence per semver 2.0.0 section 11 (build metadata ignored). */
int dra_semver_cmp(const dra_semver *a, const dra_semver *b);

#ifdef __cplusplus
}
#endif
#endif
