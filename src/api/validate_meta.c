/*
 * validate_meta.c: the apimachinery and core/v1 rules every DRA object
 * leans on: ObjectMeta (names, namespace, labels, annotations, owner
 * references, finalizers), template metadata, core NodeSelectors and
 * metav1 Conditions. Messages follow kube-apiserver 1.35.
 */
#include <stdlib.h>
#include <string.h>

#include "validate_int.h"

#define TOTAL_ANNOTATION_SIZE_LIMIT (256 * 1024)

void v_labels(vctx *v, const dra_strmap *labels)
{
    for (size_t i = 0; i < labels->n; i++) {
        const char *k = labels->v[i].key ? labels->v[i].key : "";
        const char *val = labels->v[i].val ? labels->v[i].val : "";
        v_label_name(v, k);
        v_label_value(v, val);
    }
}

void v_annotations(vctx *v, const dra_strmap *annotations)
{
    size_t total = 0;
    for (size_t i = 0; i < annotations->n; i++) {
        const char *k = annotations->v[i].key ? annotations->v[i].key : "";
        const char *val = annotations->v[i].val ? annotations->v[i].val : "";
        vmsgs m = {0};
        /* Keys are qualified names, but case does not matter. */
        chk_qualified_name_ci(k, &m, 1);
        v_invalid_msgs(v, k, &m, NULL);
        total += strlen(k) + strlen(val);
    }
    if (total > TOTAL_ANNOTATION_SIZE_LIMIT)
        v_too_long(v, TOTAL_ANNOTATION_SIZE_LIMIT);
}

/* The version part of an apiVersion, as schema.ParseGroupVersion sees
 * it: "" when the apiVersion is empty or has more than one '/'. */
static const char *api_version_version(const char *av, size_t *len)
{
    const char *slash = strchr(av, '/');
    if (!slash) {
        *len = strlen(av);
        return av;
    }
    if (strchr(slash + 1, '/')) {
        *len = 0;
        return av;
    }
    *len = strlen(slash + 1);
    return slash + 1;
}

static void json_owner_refs(dra_buf *b, const dra_owner_ref *r, size_t n);

static void v_owner_refs(vctx *v, const dra_owner_ref *refs, size_t n)
{
    const dra_owner_ref *first = NULL;
    for (size_t i = 0; i < n; i++) {
        const dra_owner_ref *r = &refs[i];
        size_t vlen;
        const char *av = r->api_version ? r->api_version : "";
        api_version_version(av, &vlen);
        if (vlen == 0) {
            v_field(v, "apiVersion");
            v_invalid_str(v, av, "version must not be empty");
            v_pop(v);
        }
        if (!r->kind || !*r->kind) {
            v_field(v, "kind");
            v_invalid_str(v, "", "kind must not be empty");
            v_pop(v);
        }
        if (!r->name || !*r->name) {
            v_field(v, "name");
            v_invalid_str(v, "", "name must not be empty");
            v_pop(v);
        }
        if (!r->uid || !*r->uid) {
            v_field(v, "uid");
            v_invalid_str(v, "", "uid must not be empty");
            v_pop(v);
        }
        if (DRA_TRI_IS_TRUE(r->controller)) {
            if (first) {
                dra_buf b;
                dra_buf_init(&b, v->d ? v->d->mem : NULL);
                json_owner_refs(&b, refs, n);
                v_error(v, "Invalid value: %s: Only one reference can have "
                           "Controller set to true. Found \"true\" in references "
                           "for %s/%s and %s/%s", b.p ? b.p : "",
                        first->kind ? first->kind : "",
                        first->name ? first->name : "",
                        r->kind ? r->kind : "", r->name ? r->name : "");
                dra_buf_fini(&b);
            } else {
                first = r;
            }
        }
    }
}

static int is_standard_finalizer(const char *s)
{
    return strcmp(s, "kubernetes") == 0 || strcmp(s, "orphan") == 0 ||
           strcmp(s, "foregroundDeletion") == 0;
}

static void v_finalizers(vctx *v, const dra_strlist *f)
{
    int orphan = 0, foreground = 0;
    for (size_t i = 0; i < f->n; i++) {
        const char *s = f->v[i] ? f->v[i] : "";
        v_label_name(v, s);
        orphan |= strcmp(s, "orphan") == 0;
        foreground |= strcmp(s, "foregroundDeletion") == 0;
    }
    if (orphan && foreground) {
        dra_buf b;
        dra_buf_init(&b, v->d ? v->d->mem : NULL);
        json_strlist(&b, f->v, f->n, 1);
        v_invalid_raw(v, b.p ? b.p : "",
                      "finalizer orphan and foregroundDeletion cannot be both set");
        dra_buf_fini(&b);
    }
    /* core adds: an unqualified name must be a standard one. */
    for (size_t i = 0; i < f->n; i++) {
        const char *s = f->v[i] ? f->v[i] : "";
        if (!strchr(s, '/') && !is_standard_finalizer(s))
            v_invalid_str(v, s, "name is neither a standard finalizer name "
                                "nor is it fully qualified");
    }
}

void v_object_meta(vctx *v, const dra_object_meta *m, int namespaced)
{
    vmsgs msgs;
    v_field(v, "metadata");
    if (m->generate_name && *m->generate_name) {
        memset(&msgs, 0, sizeof msgs);
        chk_dns_subdomain_prefix(m->generate_name, &msgs);
        v_field(v, "generateName");
        v_invalid_msgs(v, m->generate_name, &msgs, NULL);
        v_pop(v);
    }
    v_field(v, "name");
    if (!m->name || !*m->name) {
        v_required(v, "name or generateName is required");
    } else {
        memset(&msgs, 0, sizeof msgs);
        chk_dns_subdomain(m->name, &msgs);
        v_invalid_msgs(v, m->name, &msgs, NULL);
    }
    v_pop(v);
    v_field(v, "namespace");
    if (namespaced) {
        /* An absent namespace is filled in from the request (kubectl's
         * default namespace), so only a present one is checked. */
        if (m->namespace_ && *m->namespace_) {
            memset(&msgs, 0, sizeof msgs);
            chk_dns_label(m->namespace_, &msgs);
            v_invalid_msgs(v, m->namespace_, &msgs, NULL);
        }
    } else if (m->namespace_ && *m->namespace_) {
        v_forbidden(v, "not allowed on this type");
    }
    v_pop(v);
    if (m->generation < 0) {
        v_field(v, "generation");
        v_invalid_int(v, m->generation, "must be greater than or equal to 0");
        v_pop(v);
    }
    v_field(v, "labels");
    v_labels(v, &m->labels);
    v_pop(v);
    v_field(v, "annotations");
    v_annotations(v, &m->annotations);
    v_pop(v);
    v_field(v, "ownerReferences");
    v_owner_refs(v, m->owner_refs, m->n_owner_refs);
    v_pop(v);
    v_field(v, "finalizers");
    v_finalizers(v, &m->finalizers);
    v_pop(v);
    v_pop(v);
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static void immutable_str(vctx *v, const char *field, const char *nv,
                          const char *ov)
{
    if (str_eq(nv, ov))
        return;
    v_field(v, field);
    v_invalid_str(v, nv ? nv : "", "field is immutable");
    v_pop(v);
}

/* Once an object is being deleted, finalizers may only be removed. */
static void v_no_new_finalizers(vctx *v, const dra_strlist *now,
                                const dra_strlist *before)
{
    vset had, added_seen;
    dra_buf list;
    size_t added = 0;
    const char **extra;
    vset_init(&had, v);
    vset_init(&added_seen, v);
    dra_buf_init(&list, v->d ? v->d->mem : NULL);
    extra = dra_calloc(v->d ? v->d->mem : NULL, now->n + 1, sizeof *extra);
    if (!extra) {
        v->oom = 1;
        goto out;
    }
    for (size_t i = 0; i < before->n; i++)
        vset_seen(v, &had, before->v[i] ? before->v[i] : "");
    for (size_t i = 0; i < now->n; i++) {
        const char *f = now->v[i] ? now->v[i] : "";
        if (!vset_has(&had, f) && !vset_seen(v, &added_seen, f))
            extra[added++] = f;
    }
    if (added) {
        /* Go lists the new ones sorted. */
        qsort(extra, added, sizeof *extra, cmp_cstr);
        dra_buf_puts(&list, "no new finalizers can be added if the object is "
                            "being deleted, found new finalizers ");
        go_strlist(&list, extra, added, 1);
        v_field(v, "finalizers");
        v_forbidden(v, list.p ? list.p : "");
        v_pop(v);
    }
out:
    dra_free(v->d ? v->d->mem : NULL, extra);
    dra_buf_fini(&list);
    vset_fini(&had);
    vset_fini(&added_seen);
}

void v_object_meta_update(vctx *v, const dra_object_meta *m,
                          const dra_object_meta *old)
{
    v_field(v, "metadata");
    immutable_str(v, "name", m->name, old->name);
    immutable_str(v, "namespace", m->namespace_, old->namespace_);
    immutable_str(v, "uid", m->uid, old->uid);
    /* creationTimestamp and a set deletionTimestamp are immutable too. */
    if (old->creation_timestamp)
        immutable_str(v, "creationTimestamp", m->creation_timestamp,
                      old->creation_timestamp);
    if (old->deletion_timestamp)
        immutable_str(v, "deletionTimestamp", m->deletion_timestamp,
                      old->deletion_timestamp);
    if (m->deletion_timestamp)
        v_no_new_finalizers(v, &m->finalizers, &old->finalizers);
    v_pop(v);
}

void v_template_meta(vctx *v, const dra_object_meta *m)
{
    static const char msg[] = "cannot be set for a template";
    v_field(v, "metadata");
    v_field(v, "annotations");
    v_annotations(v, &m->annotations);
    v_pop(v);
    v_field(v, "labels");
    v_labels(v, &m->labels);
    v_pop(v);
    /* Everything but labels and annotations is refused, in Go field
     * order. */
    struct { const char *name; int set; } f[] = {
        {"name", m->name && *m->name},
        {"generateName", m->generate_name && *m->generate_name},
        {"namespace", m->namespace_ && *m->namespace_},
        {"uid", m->uid && *m->uid},
        {"resourceVersion", m->resource_version && *m->resource_version},
        {"generation", m->generation != 0},
        {"creationTimestamp", m->creation_timestamp && *m->creation_timestamp},
        {"deletionTimestamp", m->deletion_timestamp && *m->deletion_timestamp},
        {"ownerReferences", m->n_owner_refs > 0},
        {"finalizers", m->finalizers.n > 0},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (!f[i].set)
            continue;
        v_field(v, f[i].name);
        v_forbidden(v, msg);
        v_pop(v);
    }
    v_pop(v);
}

/* ---- Go %#v renderings of the few composite values kube prints -------- */

void go_strlist(dra_buf *b, const char *const *items, size_t n, int set)
{
    if (n == 0 && !set) {
        dra_buf_puts(b, "[]string(nil)");
        return;
    }
    dra_buf_puts(b, "[]string{");
    for (size_t i = 0; i < n; i++) {
        if (i)
            dra_buf_puts(b, ", ");
        dra_api_go_quote(b, items[i] ? items[i] : "", items[i] ? strlen(items[i]) : 0);
    }
    dra_buf_putc(b, '}');
}

void json_strlist(dra_buf *b, const char *const *items, size_t n, int set)
{
    if (n == 0) {
        dra_buf_puts(b, set ? "[]" : "null");
        return;
    }
    dra_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            dra_buf_putc(b, ',');
        v_json_quote(b, items[i] ? items[i] : "", items[i] ? strlen(items[i]) : 0);
    }
    dra_buf_putc(b, ']');
}

static void json_str(dra_buf *b, const char *s)
{
    v_json_quote(b, s ? s : "", s ? strlen(s) : 0);
}

static void json_reqs(dra_buf *b, const dra_node_selector_req *r, size_t n)
{
    if (n == 0) {
        dra_buf_puts(b, "null");
        return;
    }
    dra_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        dra_buf_puts(b, i ? ",{\"Key\":" : "{\"Key\":");
        json_str(b, r[i].key);
        dra_buf_puts(b, ",\"Operator\":");
        json_str(b, r[i].op);
        dra_buf_puts(b, ",\"Values\":");
        json_strlist(b, r[i].values.v, r[i].values.n, r[i].values.set);
        dra_buf_putc(b, '}');
    }
    dra_buf_putc(b, ']');
}

void json_node_selector_terms(dra_buf *b, const dra_node_selector *ns)
{
    if (ns->n_terms == 0) {
        dra_buf_puts(b, ns->terms_set ? "[]" : "null");
        return;
    }
    dra_buf_putc(b, '[');
    for (size_t i = 0; i < ns->n_terms; i++) {
        const dra_node_selector_term *t = &ns->terms[i];
        dra_buf_puts(b, i ? ",{\"MatchExpressions\":" : "{\"MatchExpressions\":");
        json_reqs(b, t->match_expressions, t->n_match_expressions);
        dra_buf_puts(b, ",\"MatchFields\":");
        json_reqs(b, t->match_fields, t->n_match_fields);
        dra_buf_putc(b, '}');
    }
    dra_buf_putc(b, ']');
}

/* []metav1.OwnerReference; metav1 has json tags and omitempty pointers. */
static void json_owner_refs(dra_buf *b, const dra_owner_ref *r, size_t n)
{
    dra_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        dra_buf_puts(b, i ? ",{\"apiVersion\":" : "{\"apiVersion\":");
        json_str(b, r[i].api_version);
        dra_buf_puts(b, ",\"kind\":");
        json_str(b, r[i].kind);
        dra_buf_puts(b, ",\"name\":");
        json_str(b, r[i].name);
        dra_buf_puts(b, ",\"uid\":");
        json_str(b, r[i].uid);
        if (DRA_TRI_IS_SET(r[i].controller))
            dra_buf_printf(b, ",\"controller\":%s",
                           DRA_TRI_IS_TRUE(r[i].controller) ? "true" : "false");
        if (DRA_TRI_IS_SET(r[i].block_owner_deletion))
            dra_buf_printf(b, ",\"blockOwnerDeletion\":%s",
                           DRA_TRI_IS_TRUE(r[i].block_owner_deletion) ? "true" : "false");
        dra_buf_putc(b, '}');
    }
    dra_buf_putc(b, ']');
}

/* ---- NodeSelector --------------------------------------------------------- */

static int op_is(const char *op, const char *want)
{
    return op && strcmp(op, want) == 0;
}

static void v_node_selector_req(vctx *v, const dra_node_selector_req *r)
{
    const char *op = r->op ? r->op : "";
    size_t nv = r->values.n;
    if (op_is(op, "In") || op_is(op, "NotIn")) {
        if (nv == 0) {
            v_field(v, "values");
            v_required(v, "must be specified when `operator` is 'In' or 'NotIn'");
            v_pop(v);
        }
    } else if (op_is(op, "Exists") || op_is(op, "DoesNotExist")) {
        if (nv > 0) {
            v_field(v, "values");
            v_forbidden(v, "may not be specified when `operator` is 'Exists' or "
                           "'DoesNotExist'");
            v_pop(v);
        }
    } else if (op_is(op, "Gt") || op_is(op, "Lt")) {
        if (nv != 1) {
            v_field(v, "values");
            v_required(v, "must be specified single value when `operator` is "
                          "'Lt' or 'Gt'");
            v_pop(v);
        }
    } else {
        v_field(v, "operator");
        v_invalid_json_str(v, op, "not a valid selector operator");
        v_pop(v);
    }
    v_field(v, "key");
    v_label_name(v, r->key ? r->key : "");
    v_pop(v);
    v_field(v, "values");
    for (size_t i = 0; i < nv; i++) {
        v_index(v, i);
        v_label_value(v, r->values.v[i] ? r->values.v[i] : "");
        v_pop(v);
    }
    v_pop(v);
}

static void v_node_field_req(vctx *v, const dra_node_selector_req *r)
{
    const char *op = r->op ? r->op : "";
    if (op_is(op, "In") || op_is(op, "NotIn")) {
        if (r->values.n != 1) {
            v_field(v, "values");
            v_required(v, "must be only one value when `operator` is 'In' or "
                          "'NotIn' for node field selector");
            v_pop(v);
        }
    } else {
        v_field(v, "operator");
        v_invalid_json_str(v, op, "not a valid selector operator");
        v_pop(v);
    }
    if (!r->key || strcmp(r->key, "metadata.name") != 0) {
        v_field(v, "key");
        v_invalid_str(v, r->key ? r->key : "", "not a valid field selector key");
        v_pop(v);
        return;
    }
    v_field(v, "values");
    for (size_t i = 0; i < r->values.n; i++) {
        v_index(v, i);
        v_dns_subdomain(v, r->values.v[i] ? r->values.v[i] : "");
        v_pop(v);
    }
    v_pop(v);
}

void v_node_selector(vctx *v, const dra_node_selector *ns)
{
    v_field(v, "nodeSelectorTerms");
    if (ns->n_terms == 0) {
        v_required(v, "must have at least one node selector term");
        v_pop(v);
        return;
    }
    for (size_t i = 0; i < ns->n_terms; i++) {
        const dra_node_selector_term *t = &ns->terms[i];
        v_index(v, i);
        v_field(v, "matchExpressions");
        for (size_t j = 0; j < t->n_match_expressions; j++) {
            v_index(v, j);
            v_node_selector_req(v, &t->match_expressions[j]);
            v_pop(v);
        }
        v_pop(v);
        v_field(v, "matchFields");
        for (size_t j = 0; j < t->n_match_fields; j++) {
            v_index(v, j);
            v_node_field_req(v, &t->match_fields[j]);
            v_pop(v);
        }
        v_pop(v);
        v_pop(v);
    }
    v_pop(v);
}

/* ---- metav1.Condition ----------------------------------------------------- */

static int is_reason(const char *s)
{
    size_t len = strlen(s);
    if (!len || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return 0;
    for (size_t i = 1; i < len; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_';
        if (!ok && (i == len - 1 || (c != ',' && c != ':')))
            return 0;
    }
    return 1;
}

static void v_condition(vctx *v, const dra_condition *c)
{
    static const char *const statuses[] = {"False", "True", "Unknown"};
    const char *st = c->status ? c->status : "";
    v_field(v, "type");
    v_label_name(v, c->type ? c->type : "");
    v_pop(v);
    if (strcmp(st, "True") && strcmp(st, "False") && strcmp(st, "Unknown")) {
        v_field(v, "status");
        v_not_supported(v, st, statuses, 3);
        v_pop(v);
    }
    if (c->observed_generation < 0) {
        v_field(v, "observedGeneration");
        v_invalid_int(v, c->observed_generation,
                      "must be greater than or equal to zero");
        v_pop(v);
    }
    if (!c->last_transition_time || !*c->last_transition_time) {
        v_field(v, "lastTransitionTime");
        v_required(v, "must be set");
        v_pop(v);
    }
    v_field(v, "reason");
    if (!c->reason || !*c->reason) {
        v_required(v, "must be set");
    } else {
        if (!is_reason(c->reason))
            v_invalid_str(v, c->reason,
                "a condition reason must start with alphabetic character, "
                "optionally followed by a string of alphanumeric characters or "
                "'_,:', and must end with an alphanumeric character or '_' "
                "(e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or "
                "'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for "
                "validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')");
        if (strlen(c->reason) > 1024)
            v_too_long(v, 1024);
    }
    v_pop(v);
    if (c->message && strlen(c->message) > 32768) {
        v_field(v, "message");
        v_too_long(v, 32768);
        v_pop(v);
    }
}

void v_conditions(vctx *v, const dra_condition *c, size_t n)
{
    vset seen;
    vset_init(&seen, v);
    for (size_t i = 0; i < n; i++) {
        const char *t = c[i].type ? c[i].type : "";
        v_index(v, i);
        if (vset_seen(v, &seen, t)) {
            v_field(v, "type");
            v_duplicate_str(v, t);
            v_pop(v);
        }
        v_condition(v, &c[i]);
        v_pop(v);
    }
    vset_fini(&seen);
}
