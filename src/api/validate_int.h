/*
 * validate_int.h: internals shared by the validate*.c files of module api.
 * A validation walk carries one vctx: the field path being visited, the
 * diagnostics list that collects every error (in kube-apiserver's
 * field.Error wording), and the optional hooks. Nothing here is public.
 */
#ifndef DRA_API_VALIDATE_INT_H
#define DRA_API_VALIDATE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "dra/base.h"

typedef struct validate_hooks validate_hooks;

typedef struct vctx {
    dra_diag *d;      /* may be NULL: then errors are only counted */
    dra_path p;       /* the path of the field being visited */
    size_t nerr;      /* errors found, recorded or not */
    int oom;          /* a message could not be recorded */
    const void *hooks; /* dra_api_validate_opts, or NULL */
} vctx;

/* Messages of a format check (static strings), like the []string the Go
 * helpers return. */
typedef struct vmsgs {
    const char *m[6];
    size_t n;
} vmsgs;

DRA_HIDDEN void vctx_init(vctx *v, dra_diag *d, const char *root);

/* Path stack. */
DRA_HIDDEN void v_field(vctx *v, const char *name);
DRA_HIDDEN void v_index(vctx *v, size_t i);
/* [key], with keys longer than |trunc| shortened in the middle as
 * kube-apiserver does for map keys (trunc < 16 counts as 16). */
DRA_HIDDEN void v_key(vctx *v, const char *key, size_t trunc);
DRA_HIDDEN void v_pop(vctx *v);

/* Field errors at the current path. |detail| may be NULL or "". String
 * values are quoted like Go's %q; |raw| values are printed as given. */
DRA_HIDDEN void v_required(vctx *v, const char *detail);
DRA_HIDDEN void v_forbidden(vctx *v, const char *detail);
DRA_HIDDEN void v_invalid_str(vctx *v, const char *val, const char *detail);
DRA_HIDDEN void v_invalid_strn(vctx *v, const char *val, size_t len,
                               const char *detail);
DRA_HIDDEN void v_invalid_int(vctx *v, int64_t val, const char *detail);
DRA_HIDDEN void v_invalid_raw(vctx *v, const char *raw, const char *detail);
DRA_HIDDEN void v_too_long(vctx *v, long max_bytes);
DRA_HIDDEN void v_too_many(vctx *v, size_t actual, size_t max);
/* 1 when a list of |n| items is within |max|; otherwise records Too many
 * at the current path and returns 0 (its items are then not visited). */
DRA_HIDDEN int v_at_most(vctx *v, size_t n, size_t max);
DRA_HIDDEN void v_duplicate_str(vctx *v, const char *val);
DRA_HIDDEN void v_not_supported(vctx *v, const char *val,
                                const char *const *supported, size_t n);
DRA_HIDDEN void v_not_found_str(vctx *v, const char *val, const char *detail);
/* One error with a preformatted body ("Invalid value: ...: detail"). */
DRA_HIDDEN void v_error(vctx *v, const char *fmt, ...) DRA_PRINTF(2, 3);
/* Invalid(value, msg) once for every message of |m|, each prefixed by
 * |prefix| (may be NULL). */
DRA_HIDDEN void v_invalid_msgs(vctx *v, const char *val, const vmsgs *m,
                               const char *prefix);

/* A set of strings for duplicate checks, linear in the input. Keys are
 * copied into the set's arena. */
typedef struct vset {
    dra_map m;
    dra_arena a;
} vset;
DRA_HIDDEN void vset_init(vset *s, vctx *v);
DRA_HIDDEN void vset_fini(vset *s);
/* 1 when |key| was already in the set; otherwise adds it and returns 0
 * (also 0 when out of memory, which v records). */
DRA_HIDDEN int vset_seen(vctx *v, vset *s, const char *key);
DRA_HIDDEN int vset_has(const vset *s, const char *key);
/* Duplicate at [i] for every item whose key was already seen at a lower
 * index: the uniqueness rule of a listType=map key or a listType=set. The
 * key is the string pointer at |key_off| in each of the |n| items of |size|
 * bytes (NULL counts as ""); a []string is size sizeof(char *), offset 0. */
DRA_HIDDEN void v_unique_keys(vctx *v, const void *items, size_t n,
                              size_t size, size_t key_off);

/* Invalid with a typed-string value, which Go renders as JSON. */
DRA_HIDDEN void v_invalid_json_str(vctx *v, const char *val, const char *detail);
/* Appends |s| as a JSON string the way Go's encoding/json writes it. */
DRA_HIDDEN void v_json_quote(dra_buf *b, const char *s, size_t len);

/* Format checks, the ones of k8s.io/apimachinery/pkg/util/validation.
 * Each appends its messages to |out| (which it does not clear). */
DRA_HIDDEN void chk_dns_label(const char *s, vmsgs *out);
DRA_HIDDEN void chk_dns_subdomain(const char *s, vmsgs *out);
/* NameIsDNSSubdomain with prefix=true (generateName): a trailing '-' is
 * masked before checking. */
DRA_HIDDEN void chk_dns_subdomain_prefix(const char *s, vmsgs *out);
DRA_HIDDEN void chk_qualified_name(const char *s, vmsgs *out);
/* |ci|: judge as if lower-cased (annotation keys). */
DRA_HIDDEN void chk_qualified_name_ci(const char *s, vmsgs *out, int ci);
DRA_HIDDEN void chk_label_value(const char *s, vmsgs *out);
DRA_HIDDEN void chk_c_identifier(const char *s, vmsgs *out);
DRA_HIDDEN int chk_is_extended_resource_name(const char *s);

/* Common field validators, at the current path. */
DRA_HIDDEN void v_dns_label(vctx *v, const char *s);
DRA_HIDDEN void v_dns_subdomain(vctx *v, const char *s);
DRA_HIDDEN void v_dns_label_n(vctx *v, const char *s, size_t len);
DRA_HIDDEN void v_label_name(vctx *v, const char *s);  /* qualified name */
DRA_HIDDEN void v_label_value(vctx *v, const char *s);
/* A CSI-style driver name: required, at most 63 bytes, a DNS subdomain
 * checked without regard to case. */
DRA_HIDDEN void v_driver_name(vctx *v, const char *s);
/* Pool name: required, <= 253 bytes, '/'-separated DNS subdomains. */
DRA_HIDDEN void v_pool_name(vctx *v, const char *s);
/* Attribute/capacity names: C identifier or domain/C identifier. */
DRA_HIDDEN void v_qualified_attr_name(vctx *v, const char *s);
DRA_HIDDEN void v_fully_qualified_attr_name(vctx *v, const char *s);
/* A UID in RFC 4122 normalized form. */
DRA_HIDDEN void v_uid(vctx *v, const char *s);
/* Strict semver 2.0.0 syntax. */
DRA_HIDDEN int chk_semver(const char *s);

#endif

/* ---- pieces shared between the per-kind files ---------------------------- */
#include "dra/api.h"

/* ObjectMeta of a top-level object (metadata.*). Every kind here (the
 * resource.k8s.io ones and Pod) names its objects as DNS subdomains. */
DRA_HIDDEN void v_object_meta(vctx *v, const dra_object_meta *m,
                              int namespaced);
/* metadata update rules (name, namespace, uid immutable). */
DRA_HIDDEN void v_object_meta_update(vctx *v, const dra_object_meta *m,
                                     const dra_object_meta *old);
/* spec.metadata of a ResourceClaimTemplate: only labels/annotations. */
DRA_HIDDEN void v_template_meta(vctx *v, const dra_object_meta *m);
DRA_HIDDEN void v_labels(vctx *v, const dra_strmap *labels);
DRA_HIDDEN void v_annotations(vctx *v, const dra_strmap *annotations);
/* core NodeSelector (at least one term, requirement rules). */
DRA_HIDDEN void v_node_selector(vctx *v, const dra_node_selector *ns);
/* Composite bad values as kube-apiserver (1.34+) prints them: JSON of the
 * internal Go types, whose fields carry no json tags (so Go names). */
DRA_HIDDEN void json_node_selector_terms(dra_buf *b, const dra_node_selector *ns);
/* []string: null when absent, [] when empty. */
DRA_HIDDEN void json_strlist(dra_buf *b, const char *const *v, size_t n, int set);
/* []string in Go's %#v form (used inside some messages). */
DRA_HIDDEN void go_strlist(dra_buf *b, const char *const *v, size_t n, int set);
/* bindingConditions / bindingFailureConditions of a device or result. */
DRA_HIDDEN void v_binding_params(vctx *v, const dra_strlist *bc,
                                 const dra_strlist *bfc);
/* metav1 conditions. */
DRA_HIDDEN void v_conditions(vctx *v, const dra_condition *c, size_t n);

/* Per-kind validators (validate_slice.c, validate_claim.c). |old| is the
 * previous spec on update or NULL. */
DRA_HIDDEN void v_slice_spec(vctx *v, const dra_resource_slice_spec *s,
                             const dra_resource_slice_spec *old);
DRA_HIDDEN void v_claim_spec(vctx *v, const dra_claim_spec *s);
DRA_HIDDEN void v_class_spec(vctx *v, const dra_device_class_spec *s,
                             const dra_device_class_spec *old);
DRA_HIDDEN void v_claim_status(vctx *v, const dra_claim_spec *spec,
                               const dra_claim_status *st,
                               const dra_claim_status *old, int deleting);
DRA_HIDDEN void v_pod_spec(vctx *v, const dra_object_meta *meta,
                           const dra_pod_spec *s);
