/*
 * proto_body.c: request bodies in Kubernetes' protobuf encoding
 * (application/vnd.kubernetes.protobuf: "k8s\0", then a runtime.Unknown
 * whose raw bytes are the object). client-go's typed clients send them;
 * kubectl 1.32+ creates namespaces that way. Only core/v1 Namespace is
 * read (proto/k8s_core.proto, decoded by protobuf-c); it becomes the same
 * document a JSON body would, so the write path is shared.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apiserver_int.h"
#include "k8s_core.pb-c.h"

static dra_err put_str(dra_arena *a, dra_doc *m, const char *key, const char *v)
{
    return v && *v ? api_doc_set_str(a, m, key, v) : DRA_OK;
}

/* A map<string,string> field (labels, annotations): protoc-c gives each
 * its own entry type, the same two strings. */
#define PUT_MAP(a, m, mkey, entries, n)                                           \
    do {                                                                         \
        dra_doc *map_ = NULL;                                                    \
        if ((n) && !(map_ = api_doc_map((a), (m), (mkey))))                       \
            return DRA_ENOMEM;                                                   \
        for (size_t i_ = 0; i_ < (n); i_++)                                      \
            if ((entries)[i_]->key &&                                            \
                api_doc_set_str((a), map_, (entries)[i_]->key,                   \
                                (entries)[i_]->value ? (entries)[i_]->value : "")) \
                return DRA_ENOMEM;                                               \
    } while (0)

static dra_err put_list(dra_arena *a, dra_doc *m, const char *key, char **v, size_t n)
{
    dra_doc *l;
    if (!n)
        return DRA_OK;
    if (!(l = dra_doc_new_list(a, n)) || dra_doc_map_set(a, m, key, l))
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        dra_doc *s = dra_doc_new_string(a, v[i] ? v[i] : "", v[i] ? strlen(v[i]) : 0);
        if (!s || dra_doc_list_push(a, l, s))
            return DRA_ENOMEM;
    }
    return DRA_OK;
}

static dra_err put_owners(dra_arena *a, dra_doc *m,
                          Drad__K8s__OwnerReference **o, size_t n)
{
    dra_doc *l;
    if (!n)
        return DRA_OK;
    if (!(l = dra_doc_new_list(a, n)) || dra_doc_map_set(a, m, "ownerReferences", l))
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        dra_doc *r = dra_doc_new_map(a, 6);
        if (!r || put_str(a, r, "apiVersion", o[i]->api_version) ||
            put_str(a, r, "kind", o[i]->kind) || put_str(a, r, "name", o[i]->name) ||
            put_str(a, r, "uid", o[i]->uid) ||
            (o[i]->has_controller &&
             dra_doc_map_set(a, r, "controller", dra_doc_new_bool(a, o[i]->controller))) ||
            (o[i]->has_block_owner_deletion &&
             dra_doc_map_set(a, r, "blockOwnerDeletion",
                             dra_doc_new_bool(a, o[i]->block_owner_deletion))) ||
            dra_doc_list_push(a, l, r))
            return DRA_ENOMEM;
    }
    return DRA_OK;
}

static dra_err meta_doc(dra_arena *a, const Drad__K8s__ObjectMeta *pm, dra_doc *m)
{
    dra_err e;
    if (!pm)
        return DRA_OK;
    if ((e = put_str(a, m, "name", pm->name)) ||
        (e = put_str(a, m, "generateName", pm->generate_name)) ||
        (e = put_str(a, m, "namespace", pm->namespace_)) ||
        (e = put_str(a, m, "uid", pm->uid)) ||
        (e = put_str(a, m, "resourceVersion", pm->resource_version)))
        return e;
    PUT_MAP(a, m, "labels", pm->labels, pm->n_labels);
    PUT_MAP(a, m, "annotations", pm->annotations, pm->n_annotations);
    if ((e = put_owners(a, m, pm->owner_references, pm->n_owner_references)) ||
        (e = put_list(a, m, "finalizers", pm->finalizers, pm->n_finalizers)))
        return e;
    return DRA_OK;
}

static dra_err namespace_doc(api_req *r, const ProtobufCBinaryData *raw,
                             dra_doc **out)
{
    Drad__K8s__Namespace *ns =
        drad__k8s__namespace__unpack(NULL, raw->len, raw->data);
    dra_doc *d, *m, *spec;
    dra_err e = DRA_OK;
    if (!ns) {
        api_bad_request(r, "the body is not a valid protobuf Namespace");
        return DRA_EPARSE;
    }
    if (!(d = dra_doc_new_map(&r->a, 4)) || api_doc_set_str(&r->a, d, "apiVersion", "v1") ||
        api_doc_set_str(&r->a, d, "kind", "Namespace") ||
        !(m = api_doc_map(&r->a, d, "metadata")) || (e = meta_doc(&r->a, ns->metadata, m)))
        e = e ? e : DRA_ENOMEM;
    if (!e && ns->spec && ns->spec->n_finalizers &&
        (!(spec = api_doc_map(&r->a, d, "spec")) ||
         put_list(&r->a, spec, "finalizers", ns->spec->finalizers, ns->spec->n_finalizers)))
        e = DRA_ENOMEM;
    drad__k8s__namespace__free_unpacked(ns, NULL);
    if (!e)
        *out = d;
    return e;
}

dra_err api_proto_body(api_req *r, dra_doc **out)
{
    const unsigned char *b = (const unsigned char *)r->in->body;
    size_t n = r->in->body_len;
    Drad__K8s__Unknown *u;
    const char *kind, *av;
    dra_err e;
    *out = NULL;
    if (n < 4 || memcmp(b, "k8s\0", 4)) {
        api_bad_request(r, "the protobuf body lacks the \"k8s\\x00\" prefix");
        return DRA_EPARSE;
    }
    u = drad__k8s__unknown__unpack(NULL, n - 4, b + 4);
    if (!u) {
        api_bad_request(r, "the body is not a valid protobuf runtime.Unknown");
        return DRA_EPARSE;
    }
    kind = u->type_meta && u->type_meta->kind ? u->type_meta->kind : "";
    av = u->type_meta && u->type_meta->api_version ? u->type_meta->api_version : "";
    if (!strcmp(kind, "Namespace") && !strcmp(av, "v1") && u->has_raw &&
        (!u->content_encoding || !*u->content_encoding)) {
        e = namespace_doc(r, &u->raw, out);
    } else {
        api_fail(r, 415, "UnsupportedMediaType", NULL, NULL,
                 "the body of the request was in an unknown format - accepted "
                 "media types include: application/json, application/yaml "
                 "(protobuf only for v1 Namespace)");
        e = DRA_EPARSE;
    }
    drad__k8s__unknown__free_unpacked(u, NULL);
    return e;
}
