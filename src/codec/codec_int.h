/* codec_int.h: helpers shared by the codec's decoders and encoders
 * (number formatting, YAML plain-scalar resolution, UTF-8 checks). Not
 * part of the public interface. */
#ifndef DRA_CODEC_INT_H
#define DRA_CODEC_INT_H

#include "dra/codec.h"

/* A fresh node of |kind| at |line|:|col| in |a|; NULL on ENOMEM. */
DRA_HIDDEN dra_doc *codec_node(dra_arena *a, dra_doc_kind kind, int line, int col);
/* Item/member arrays for |n| entries, preceded by the tagged capacity
 * slots that let dra_doc_list_push and dra_doc_map_set grow them in
 * place; NULL on ENOMEM. */
DRA_HIDDEN dra_doc **codec_items(dra_arena *a, size_t n);
DRA_HIDDEN dra_doc_member *codec_members(dra_arena *a, size_t n);

/* Shortest decimal digits that read back as |f| (|f| finite, non-zero):
 * digits in |dig| (NUL-terminated, no leading zeros, at most 17), |*dp|
 * the decimal point position (value = 0.DIGITS * 10^dp). With |single|
 * the digits round-trip through float instead of double. */
DRA_HIDDEN void codec_shortest(double f, int single, char dig[24], int *dp);

/* Appends |f| as Go's encoding/json prints a float64 (no exponent for
 * 1e-6 <= |f| < 1e21). DRA_EINVAL for NaN/Inf, DRA_ENOMEM. */
DRA_HIDDEN dra_err codec_put_json_float(dra_buf *out, double f);
/* Appends |f| as Go's strconv.FormatFloat(f, 'g', -1, single?32:64),
 * with YAML's .inf/-.inf/.nan spellings. */
DRA_HIDDEN dra_err codec_put_g_float(dra_buf *out, double f, int single);

/* What a YAML plain scalar means, the way go-yaml v2 (the parser behind
 * sigs.k8s.io/yaml and kubectl) resolves it. |s| must be NUL-terminated
 * at |len| (an embedded NUL makes it a string). */
typedef enum codec_yres {
    CODEC_Y_STR,
    CODEC_Y_NULL,
    CODEC_Y_BOOL,
    CODEC_Y_INT,   /* fits int64 */
    CODEC_Y_UINT,  /* > INT64_MAX, fits uint64 */
    CODEC_Y_FLOAT,
    CODEC_Y_MERGE  /* "<<" */
} codec_yres;
typedef struct codec_yval {
    int b;
    int64_t i;
    uint64_t u;
    double f;
} codec_yval;
DRA_HIDDEN codec_yres codec_yaml_resolve(const char *s, size_t len, codec_yval *v);
/* True when |s| looks like a YAML timestamp go-yaml v2 would resolve, or
 * a YAML 1.1 base-60 float; such strings are quoted on output. */
DRA_HIDDEN int codec_yaml_looks_special(const char *s, size_t len);

/* True when |s| is a JSON number per RFC 8259. */
DRA_HIDDEN int codec_is_json_number(const char *s, size_t len);

#endif
