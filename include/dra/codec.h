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
    DRA_DOC_FLOAT,  /* any other number; |num| is its source text when
                     * that is JSON number syntax (decoded input), or NULL */
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

/* Decode one JSON document (RFC 8259, UTF-8). On error returns
 * DRA_EPARSE (or DRA_ENOMEM, DRA_ELIMIT for depth/size, DRA_ERANGE for a
 * number beyond double range) and adds "line:col: message" to |d|, with
 * encoding/json's wording ("invalid character 'x' after object key").
 * Columns count characters. Integers that fit int64 are DRA_DOC_INT;
 * other numbers are DRA_DOC_FLOAT with |num| holding their source text.
 * A repeated object key is an error (duplicate field "x"), as in
 * Kubernetes' strict decoding. The tree is allocated in |a|; *out is
 * NULL on error. */
dra_err dra_doc_parse_json(dra_arena *a, const char *text, size_t len,
                           dra_doc **out, dra_diag *d);

/* Decode a YAML stream (which also accepts JSON). Every non-empty
 * document separated by `---` becomes one element of *docs (an array in
 * |a|); a YAML document that is a List object ({kind: List, items: [...]})
 * is returned as is, see dra_doc_flatten_lists. Anchors/aliases are
 * resolved with a bound on expansion (billion-laughs safe); an alias
 * shares the anchored subtree (do not mutate decoded trees in place if
 * they may contain aliases). Merge keys (<<) are applied. Plain scalars
 * are typed like sigs.k8s.io/yaml (go-yaml v2): null ~ "" Null NULL;
 * booleans true/false/yes/no/on/off/y/n in their three capitalisations;
 * ints incl. 0x, 0o, 0b, leading-0 octal and '_' separators; floats incl.
 * .5 and 1e3 (.inf/.nan are rejected: JSON cannot carry them); anything
 * else is a string, as are all quoted scalars. Keys that are not strings
 * become strings like sigs.k8s.io/yaml does (ints in decimal, bools as
 * true/false, floats by FormatFloat 'g' 32-bit); null, map and list keys
 * are errors. A repeated key is an error ("mapping key "x" already
 * defined at line N"). Errors: DRA_EPARSE ("line:col: message" in |d|),
 * DRA_ELIMIT (size, depth, alias expansion), DRA_ENOMEM. On error *docs
 * is NULL and *n is 0. An empty stream gives *n == 0 and DRA_OK. */
dra_err dra_doc_parse_yaml(dra_arena *a, const char *text, size_t len,
                           dra_doc ***docs, size_t *n, dra_diag *d);

/* Replaces every document of the form {kind: List, items: [...]} in
 * *docs by its items, in place of the list (like kubectl does for
 * `kubectl apply -f list.yaml`). A new array is allocated in |a| when
 * anything changes. DRA_OK or DRA_ENOMEM. */
dra_err dra_doc_flatten_lists(dra_arena *a, dra_doc ***docs, size_t *n);

/* Encode. JSON compact when |indent| is 0, else pretty with that many
 * spaces, escaped like Go's encoding/json (<, >, & as \u003c...).
 * YAML in kubectl's style (2-space indent, block style, lists under a key
 * at the key's column, strings quoted only when needed, multi-line
 * strings as literal blocks). Map members print in their stored order.
 * One document per call, ending in a newline; a caller printing a stream
 * puts "---\n" between documents as kubectl does. Keys print in stored
 * order (see dra_doc_sort_keys for kubectl's sorted order). Strings must
 * be valid UTF-8 for YAML (go-yaml would switch to !!binary: DRA_EINVAL
 * here); the JSON encoder writes U+FFFD for invalid bytes like Go.
 * Both append to |out|; on error |out| is left as it was. Errors:
 * DRA_ENOMEM; DRA_EINVAL for a NaN/Inf float in JSON or a NULL/unknown
 * node; DRA_ELIMIT when nesting exceeds DRA_DOC_MAX_DEPTH. */
dra_err dra_doc_to_json(const dra_doc *doc, int indent, dra_buf *out);
dra_err dra_doc_to_yaml(const dra_doc *doc, dra_buf *out);

/* What dra_doc_parse_json(dra_doc_to_json(|src|)) would build, into |a|,
 * without the text, for a caller in the same process (the in-process
 * cluster transport): a deep copy when the text would read back as one,
 * DRA_EUNSUPPORTED otherwise, when the caller must go through the text:
 * a float (its text may read back as an int), a string or key that is not
 * valid UTF-8 (written as U+FFFD), a repeated key (an error to the
 * parser), nesting near DRA_DOC_MAX_DEPTH, a node of no JSON kind, or
 * text that could be longer than |max_len| bytes (an upper bound is
 * counted, so a caller can keep a size limit). Copies carry no source
 * position (line and col 0). DRA_OK; DRA_EUNSUPPORTED; DRA_ENOMEM. *out
 * is NULL unless DRA_OK. */
dra_err dra_doc_copy_json(dra_arena *a, const dra_doc *src, size_t max_len,
                          dra_doc **out);

/* Key orders kubectl prints maps in. JSON: encoding/json sorts map keys
 * bytewise. YAML: kubectl -o yaml goes through go-yaml v2, which sorts
 * keys "naturally" (digits and punctuation before letters, digit runs by
 * numeric value: "a2" < "a10"). */
typedef enum dra_doc_order {
    DRA_DOC_ORDER_BYTES,
    DRA_DOC_ORDER_YAML
} dra_doc_order;

/* Sorts every map in |doc| (recursively, in place) into |order|, so the
 * encoders print what kubectl prints for an unstructured object. Shared
 * alias subtrees are sorted once per visit (idempotent). DRA_EINVAL for
 * NULL, DRA_ELIMIT beyond DRA_DOC_MAX_DEPTH. No allocation. */
dra_err dra_doc_sort_keys(dra_doc *doc, dra_doc_order order);

/* Lookups on a map node; NULL when |map| is not a map or lacks the key. */
const dra_doc *dra_doc_get(const dra_doc *map, const char *key);
/* The node at |dotted|, map keys joined by '.' ("spec.nodeName",
 * "status.phase"); |map| itself for "". NULL when a key is missing, a node
 * on the way is no map, a key is empty ("a..b") or |dotted| is NULL. */
const dra_doc *dra_doc_at(const dra_doc *map, const char *dotted);

/* Builders, allocating in |a|; NULL on ENOMEM. */
dra_doc *dra_doc_new_null(dra_arena *a);
dra_doc *dra_doc_new_bool(dra_arena *a, int b);
dra_doc *dra_doc_new_int(dra_arena *a, int64_t i);
dra_doc *dra_doc_new_float(dra_arena *a, double f);
dra_doc *dra_doc_new_string(dra_arena *a, const char *s, size_t len);
dra_doc *dra_doc_new_list(dra_arena *a, size_t cap);
dra_doc *dra_doc_new_map(dra_arena *a, size_t cap);
/* Append to a list / set a map member (replacing an existing key), growing
 * in |a|. Works on decoded nodes, builder nodes and nodes whose arrays
 * were filled by hand (those are copied when they grow). DRA_EINVAL when
 * the node has the wrong kind or an argument is NULL; DRA_ENOMEM. */
dra_err dra_doc_list_push(dra_arena *a, dra_doc *list, dra_doc *item);
dra_err dra_doc_map_set(dra_arena *a, dra_doc *map, const char *key, dra_doc *val);

/* A builder for code that assembles a document from many small pieces:
 * a call that cannot allocate sets |oom| instead of returning an error, a
 * set or push given a NULL node (a piece that failed) sets it too, and
 * the caller checks |oom| once at the end. Nodes live in |a|. */
typedef struct dra_docb {
    dra_arena *a;
    int oom;
} dra_docb;

dra_doc *dra_docb_map(dra_docb *b);
dra_doc *dra_docb_list(dra_docb *b);
dra_doc *dra_docb_str(dra_docb *b, const char *s); /* NULL: "" */
dra_doc *dra_docb_strn(dra_docb *b, const char *s, size_t len);
dra_doc *dra_docb_int(dra_docb *b, int64_t v);
dra_doc *dra_docb_bool(dra_docb *b, int v);
/* The |n| strings of |v| as a list. */
dra_doc *dra_docb_strs(dra_docb *b, const char *const *v, size_t n);
/* |v| as member |key| of |map| (dra_doc_map_set), and the same with a
 * string; |v| pushed onto |list|. */
void dra_docb_set(dra_docb *b, dra_doc *map, const char *key, dra_doc *v);
void dra_docb_set_str(dra_docb *b, dra_doc *map, const char *key, const char *s);
void dra_docb_push(dra_docb *b, dra_doc *list, dra_doc *v);

/* Deep equality: map members compared as sets, lists in order, strings
 * by bytes, numbers by value (an int equals a float when the int converted
 * to double is that float; two big integers kept as text compare by their
 * digits). */
int dra_doc_equal(const dra_doc *x, const dra_doc *y);

/* ---- resource.Quantity -------------------------------------------------
 * Exact, with k8s.io/apimachinery's semantics: value = mant * 10^scale.
 * Parsing rounds up (away from zero) to nano precision (scale >= -9),
 * like ParseQuantity. |flags| records what upstream's representation
 * would be, because a few operations depend on it:
 *   DRA_QTY_F_DEC  upstream holds the value as an inf.Dec rather than an
 *                  int64Amount (binary fractions, >18 digits, Pi/Ei,
 *                  overflowing sums): AsInt64 then fails.
 *   DRA_QTY_F_TEXT the parsed text is kept verbatim by upstream and is
 *                  what it serializes ("+1", "01", "1E3", "10Ki"); a
 *                  caller that kept the text should print it instead of
 *                  dra_quantity_str. Arithmetic clears it.
 * For the int64Amount form |mant| fits int64 and scale is upstream's
 * (1000m is 1000 at scale -3); for the inf.Dec form |mant| < 10^38.
 * Plain values, no allocation. */
typedef enum dra_quantity_format {
    DRA_QTY_DECIMAL_SI,       /* 100m, 5, 10k, 2G */
    DRA_QTY_BINARY_SI,        /* 64Ki, 80Gi */
    DRA_QTY_DECIMAL_EXPONENT  /* 1e3, 5E-3 */
} dra_quantity_format;

#define DRA_QTY_F_DEC 1u
#define DRA_QTY_F_TEXT 2u

typedef struct dra_quantity {
    __int128 mant;
    int32_t scale;
    dra_quantity_format format;
    uint32_t flags; /* DRA_QTY_F_* */
} dra_quantity;

/* The longest string dra_quantity_str can produce, NUL included. */
#define DRA_QTY_STR_MAX 64

/* Parse Kubernetes' quantity syntax: optional sign, digits with an
 * optional fraction (".5", "1." and "." are accepted as upstream does),
 * then an SI suffix (n u m "" k M G T P E), a binary suffix (Ki Mi Gi Ti
 * Pi Ei) or an exponent (e3, E-2, e+3). Binary values above 2^63-1 are
 * capped there, as upstream does. DRA_EPARSE on bad syntax or an unknown
 * suffix; DRA_ERANGE when the value cannot be held exactly: more than 38
 * significant digits, an exponent beyond int32 (upstream silently
 * truncates it), or a binary-suffixed value with more than 18 fraction
 * digits. */
dra_err dra_quantity_parse(const char *s, size_t len, dra_quantity *out);
/* Exact three-way comparison: <0, 0, >0. */
int dra_quantity_cmp(const dra_quantity *a, const dra_quantity *b);
/* Canonical string as Quantity.String() computes it when no text is kept
 * ("189471Mi", "1500m", "2k", "1536Mi" for 1.5Gi, "0"). Two upstream
 * bugs are not reproduced: a DecimalSI value whose exponent passes E
 * (10^18) prints as "1e21" instead of dropping the exponent, and a
 * BinarySI value beyond 1024^6 keeps the Ei suffix. Writes at most |size|
 * bytes including NUL; returns the length that was needed, like snprintf
 * (never more than DRA_QTY_STR_MAX - 1). */
size_t dra_quantity_str(const dra_quantity *q, char *buf, size_t size);
/* NewQuantity(v, f): the int64Amount form {v, 0}. */
dra_quantity dra_quantity_from_int64(int64_t v, dra_quantity_format f);
/* Quantity.Add / Quantity.Sub: exact. The result keeps a's format, or
 * takes b's when a is zero. DRA_ERANGE when the exact result does not fit
 * (more than 38 significant digits); *out is unchanged then. */
dra_err dra_quantity_add(const dra_quantity *a, const dra_quantity *b, dra_quantity *out);
dra_err dra_quantity_sub(const dra_quantity *a, const dra_quantity *b, dra_quantity *out);
int dra_quantity_sign(const dra_quantity *q);
/* Quantity.AsInt64's success: int64Amount form at scale 0, or a positive
 * scale that still fits. Mirrors upstream exactly, so "1000m", "1.0",
 * "1Pi" and "1.5Gi" are NOT integers here (CEL's isInteger() agrees). */
int dra_quantity_is_integer(const dra_quantity *q);
/* Quantity.AsInt64; DRA_ERANGE when AsInt64 reports false. */
dra_err dra_quantity_to_int64(const dra_quantity *q, int64_t *out);
/* Quantity.AsApproximateFloat64 (for the inf.Dec form the correctly
 * rounded double of the exact value; may be +-Inf). */
double dra_quantity_to_double(const dra_quantity *q);
/* Quantity.Value(): the value rounded up (away from zero) to an integer.
 * Outside int64 it saturates at INT64_MIN/INT64_MAX (upstream returns
 * the truncated low bits of a big.Int there). */
int64_t dra_quantity_value(const dra_quantity *q);

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
