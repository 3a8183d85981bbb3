/*
 * patch.h: the PATCH bodies kube-apiserver accepts, applied to object
 * documents without I/O: JSON merge patch (RFC 7386, as evanphx/json-patch
 * applies it), JSON patch (RFC 6902), strategic merge patch with the
 * patch metadata (merge keys, strategies, directives) of the kinds drad
 * serves, and server-side apply with managedFields.
 *
 * Owner: helper "apilib" (src/apiserver/patch*.c).
 *
 * Memory: results are built in the caller's arena |a|; the inputs are
 * never modified (they are copied first), and the result shares nothing
 * with them, so they may be dropped afterwards.
 *
 * Errors: DRA_OK; DRA_ENOMEM; otherwise the dra_err for the HTTP answer
 * kube-apiserver gives, with |st| (optional) filled with its code,
 * reason and message:
 *   DRA_EINVAL    400 BadRequest (a malformed patch document);
 *   DRA_EINVALID  422 Invalid (a patch that cannot be applied);
 *   DRA_ETOOLARGE 413 RequestEntityTooLarge (more than 10,000 JSON patch
 *                 operations);
 *   DRA_ECONFLICT 409 Conflict (server-side apply conflicts);
 *   DRA_EIO       500 with reason "" (upstream's untyped errors, such as a
 *                 list element without its merge key).
 */
#ifndef DRA_APISERVER_PATCH_H
#define DRA_APISERVER_PATCH_H

#include "dra/base.h"
#include "dra/cluster.h"
#include "dra/codec.h"
#include "openapi.h"

/* Largest number of operations in one JSON patch (upstream's limit). */
#define API_PATCH_MAX_JSON_OPS 10000

/* RFC 7386 merge of |patch| into |orig|, with the quirks of the library
 * kube-apiserver uses: null members delete; members added where the
 * original had nothing (or a non-object) lose their nulls, also inside
 * arrays; a null patch is 400 "Invalid JSON Patch"; a patch that is not
 * an object replaces the whole document, which kube then rejects with
 * 422 (done here directly). */
dra_err api_patch_merge(dra_arena *a, const dra_doc *orig, const dra_doc *patch,
                        dra_doc **out, dra_kstatus *st);

/* RFC 6902: |ops| is the decoded patch (an array of {op, path, from,
 * value}); add, remove, replace, move, copy and test, JSON pointers with
 * ~0/~1 escapes and "-" to append. Operations apply in order; the first
 * that fails fails the patch with upstream's 422 "the server rejected our
 * request due to an error in our request"; what exactly went wrong
 * ("replace operation does not apply: doc is missing key: /spec/x") goes
 * to |detail| (may be NULL). A document that is not an array of objects
 * is 400 with Go's decoding message. */
dra_err api_patch_json(dra_arena *a, const dra_doc *orig, const dra_doc *ops,
                       dra_doc **out, dra_kstatus *st, dra_diag *detail);

/* Strategic merge patch of |patch| into |orig| (an object document of
 * the kind whose schema is |type|, from api_openapi_kind_type): maps
 * merge, lists merge by their patch merge key where the API type says
 * patchStrategy=merge (containers by name, ports by containerPort,
 * conditions by type, reservedFor by uid, finalizers as a set...) and
 * are replaced otherwise; directives $patch (replace, delete, merge),
 * $setElementOrder/<list>, $deleteFromPrimitiveList/<list> and
 * $retainKeys work as upstream's StrategicMergeMapPatch. A NULL |type|
 * merges maps and replaces every list (upstream's behaviour for a type
 * without patch metadata). Errors use upstream's messages: 400 for
 * ErrBadPatchFormat*, 422 for lists of lists and retainKeys mismatches,
 * 500 (reason "") for the rest ("map: map[image:x] does not contain
 * declared merge key: name"). */
dra_err api_patch_strategic(dra_arena *a, const api_openapi_type *type,
                            const dra_doc *orig, const dra_doc *patch,
                            dra_doc **out, dra_kstatus *st);

/* ---- server-side apply ------------------------------------------------- */

typedef struct api_apply_opts {
    const char *manager;     /* fieldManager (required) */
    int force;               /* force=true: take conflicting fields over */
    const char *api_version; /* recorded in the managedFields entry */
    const char *now;         /* RFC 3339 UTC time for the entry (caller's clock) */
    const char *subresource; /* "status" for writes through /status, else NULL */
} api_apply_opts;

/* Server-side apply of |applied| (the configuration the manager sends)
 * onto |live| (NULL: the object does not exist yet; it is created from
 * |applied|). Maps merge; lists merge by the keys the API declares
 * (x-kubernetes-list-map-keys, or sets) and are atomic otherwise; fields
 * the manager owned before and no longer applies are removed unless
 * another manager also owns them. metadata.managedFields gets the
 * manager's entry (operation Apply, fieldsType FieldsV1, fieldsV1 the set
 * of fields |applied| names); other managers' entries lose the fields
 * this apply took over. A field another manager owns with a different
 * value is a conflict: 409 Conflict with upstream's message
 * ("Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\"
 * using v1: .spec.containers[name=\"ctr\"].image"), one cause per field in
 * |causes| (may be NULL; path = field, msg = "conflict with ..."), unless
 * |opts->force|; then the other managers lose those fields. A
 * configuration that is not an object is DRA_EINVAL (400); no manager is
 * DRA_EINVALID (422, "PatchOptions.meta.k8s.io \"\" is invalid:
 * fieldManager: Required value: is required for apply patch"). Fields
 * never tracked upstream (apiVersion, kind, metadata name, namespace,
 * uid, resourceVersion, generation, creationTimestamp, managedFields) are
 * not recorded; neither is status on the main resource, nor anything but
 * status through /status. *out is the merged object with its new
 * metadata.managedFields; the caller still applies its strategy (status
 * reset, defaulting, validation). */
dra_err api_patch_apply(dra_arena *a, const api_openapi_type *type,
                        const dra_doc *live, const dra_doc *applied,
                        const api_apply_opts *opts, dra_doc **out,
                        dra_kstatus *st, dra_diag *causes);

/* managedFields for a write that is not an apply (create, update, the
 * other patch types), as kube-apiserver's field manager keeps them: the
 * fields |new_obj| adds or changes against |old| (NULL on create) go to
 * |opts->manager|'s Update entry (with opts->api_version and opts->now)
 * and leave every other entry; fields the object no longer has leave
 * all entries. *out is a copy of |new_obj| with the updated
 * metadata.managedFields. DRA_EINVAL for a NULL or non-object |new_obj| or
 * no manager; DRA_ENOMEM. */
dra_err api_patch_managed_update(dra_arena *a, const api_openapi_type *type,
                                 const dra_doc *old, const dra_doc *new_obj,
                                 const api_apply_opts *opts, dra_doc **out);

/* Deep copy of |doc| into |a| (NULL on ENOMEM or for a NULL |doc|). */
dra_doc *api_patch_copy(dra_arena *a, const dra_doc *doc);

#endif
