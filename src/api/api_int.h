/*
 * api_int.h: internals of the api module's codec. Each Go struct is
 * described once by a table of fields (JSON name, kind, Go omitempty
 * rule, offsets into the C struct); one generic decoder and one generic
 * encoder walk those tables, so the JSON names, the Go field order and
 * the omitempty rules live in exactly one place per struct.
 */
#ifndef DRA_API_INT_H
#define DRA_API_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dra/api.h"

/* Field kinds. "absent" below is what the encoder treats as empty. */
typedef enum api_ftype {
    API_F_SKIP,    /* known to Kubernetes, not modelled: stays in extra,
                      the table only gives its position */
    API_F_STR,     /* const char *; absent: NULL or "" */
    API_F_PSTR,    /* const char * for a Go *string; absent: NULL */
    API_F_TIME,    /* const char * for a metav1.Time; absent -> null */
    API_F_I64,     /* int64_t; absent: 0; |off2| optional int set flag */
    API_F_OPTI64,  /* dra_opt_i64 */
    API_F_TRI,     /* dra_tri */
    API_F_MASKI64, /* int64_t, sets bit |bit| in the unsigned at |off2| */
    API_F_MASKBOOL,/* int */
    API_F_MASKSTR, /* const char * */
    API_F_QTY,     /* dra_quantity, always written */
    API_F_PQTY,    /* const dra_quantity *; absent: NULL */
    API_F_QTYLIST, /* dra_quantity *, count at |off2| */
    API_F_QTYMAP,  /* dra_qtymap */
    API_F_STRLIST, /* dra_strlist */
    API_F_STRMAP,  /* dra_strmap */
    API_F_DOC,     /* dra_doc *, any JSON; absent: NULL */
    API_F_STRUCT,  /* embedded struct described by |sub|, always written */
    API_F_PSTRUCT, /* pointer to struct |sub|; absent: NULL */
    API_F_INLINE,  /* a nested JSON object whose fields (|sub|, offsets
                      relative to the parent) live in the parent struct;
                      |off2| optional int "present" flag */
    API_F_LIST,    /* array of |sub| structs; count at |off2|, optional
                      int set flag at |off3| */
    API_F_MAPOF    /* map of name -> |sub| struct; array of |sub| at |off|,
                      count at |off2|; the key goes to |sub|->key_off */
} api_ftype;

enum {
    API_OMIT = 1u << 0,     /* Go `omitempty` */
    API_HAS_OFF2 = 1u << 1, /* |off2| is meaningful for I64/INLINE */
    API_HAS_OFF3 = 1u << 2, /* |off3| is meaningful for LIST */
    API_EMPTYOBJ = 1u << 3  /* DOC: absent is written as {} (Go struct) */
};

typedef struct api_struct api_struct;

typedef struct api_field {
    const char *name;
    uint8_t type;  /* api_ftype */
    uint8_t flags; /* API_OMIT, ... */
    uint16_t bit;  /* for the MASK kinds */
    size_t off, off2, off3;
    const api_struct *sub;
} api_field;

struct api_struct {
    const char *name;  /* for diagnostics only */
    size_t size;       /* element size for LIST / MAPOF / PSTRUCT */
    size_t extra_off;  /* offset of the dra_doc *extra member */
    size_t key_off;    /* MAPOF elements: offset of the const char * key */
    const api_field *fields;
    size_t nfields;
};

#define API_NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

/* Whether |f| is named |key| (|len| bytes): the first byte rules out
 * nearly every other field before the strlen. */
static inline int api_field_named(const api_field *f, const char *key, size_t len)
{
    return len && f->name[0] == key[0] && strlen(f->name) == len && !memcmp(f->name, key, len);
}

/* Decoder state: one per object. Errors are counted and recorded; the
 * walk continues so that every error of an object is reported. */
typedef struct api_dec {
    dra_arena *a;
    dra_diag *d;
    dra_path path;
    size_t nerr;
    int oom;
} api_dec;

/* Decodes the JSON object |doc| into the struct at |base| described by
 * |st| (unknown members to extra). Reports "must be an object" when |doc|
 * is not a map. */
DRA_HIDDEN void api_dec_struct(api_dec *dc, const api_struct *st, void *base,
                               const dra_doc *doc);
/* Records "path: msg" at |doc|'s position and bumps the error count. */
DRA_HIDDEN void api_dec_error(api_dec *dc, const dra_doc *doc,
                              const char *fmt, ...) DRA_PRINTF(3, 4);
/* Records "path: Invalid value: <doc rendered>: |what|". */
DRA_HIDDEN void api_dec_invalid(api_dec *dc, const dra_doc *doc, const char *what);
/* Deep copy of |doc| into |a|; NULL on ENOMEM. */
DRA_HIDDEN dra_doc *api_doc_copy(dra_arena *a, const dra_doc *doc);

/* Encodes the struct at |base| described by |st| into a new map node.
 * NULL on ENOMEM. */
DRA_HIDDEN dra_doc *api_enc_struct(dra_arena *a, const api_struct *st,
                                   const void *base);
/* 1 when |st|'s table names member |m| (modelled or API_F_SKIP). */
DRA_HIDDEN int api_struct_has(const api_struct *st, const dra_doc_member *m);
/* Small builders that set members directly (no lookups). */
DRA_HIDDEN dra_doc *api_enc_string(dra_arena *a, const char *s);
DRA_HIDDEN dra_doc *api_enc_map(dra_arena *a, size_t cap);
DRA_HIDDEN dra_doc *api_enc_list(dra_arena *a, size_t n); /* n NULL items */
DRA_HIDDEN void api_enc_put(dra_doc *map, const char *key, dra_doc *val);

/* The struct tables (types.c). */
DRA_HIDDEN extern const api_struct api_st_meta;
DRA_HIDDEN extern const api_struct api_st_slice_spec;
DRA_HIDDEN extern const api_struct api_st_class_spec;
DRA_HIDDEN extern const api_struct api_st_claim_spec;
DRA_HIDDEN extern const api_struct api_st_claim_status;
DRA_HIDDEN extern const api_struct api_st_template_spec;
DRA_HIDDEN extern const api_struct api_st_pod_spec;
DRA_HIDDEN extern const api_struct api_st_pod_status;
/* Table of the top-level object of |kind| (offsets into dra_object,
 * apiVersion and kind excluded); NULL for DRA_KIND_UNKNOWN. */
DRA_HIDDEN const api_struct *api_kind_struct(dra_kind kind);

#endif
