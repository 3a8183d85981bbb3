/*
 * plugin/pb.c: protobuf messages of the kubelet's DRA, registration and
 * health services <-> the plain structs of dra/plugin.h. protobuf-c does
 * the wire format (from the project's own .proto files); this file adds
 * what Go's proto runtime checks and protobuf-c does not (UTF-8 in
 * proto3 strings) and bounds on counts, and allocates everything in the
 * caller's arena, so a decoded request dies with its call. I/O-free: the
 * gRPC adapter and the fuzzer call it with bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plugin_int.h"

#include "dra_v1.pb-c.h"
#include "health.pb-c.h"
#include "registration.pb-c.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim pb_claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest pb_prep_req;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse pb_prep_resp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry pb_prep_entry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse pb_prep_one;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device pb_device;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse pb_unprep_resp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry pb_unprep_entry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse pb_unprep_one;

#define PREP_REQ_INIT K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_REQUEST__INIT
#define CLAIM_INIT K8S__IO__KUBELET__PKG__APIS__DRA__V1__CLAIM__INIT
#define PREP_RESP_INIT K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT
#define PREP_ENTRY_INIT \
    K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__CLAIMS_ENTRY__INIT
#define PREP_ONE_INIT K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCE_RESPONSE__INIT
#define DEVICE_INIT K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE__INIT
#define UNPREP_RESP_INIT K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT
#define UNPREP_ENTRY_INIT \
    K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__CLAIMS_ENTRY__INIT
#define UNPREP_ONE_INIT K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCE_RESPONSE__INIT

/* protobuf-c allocates through this: from the arena, never freed one by
 * one. An unpack that returns NULL may have run out of memory rather than
 * met a malformed message; |oom| tells which. */
typedef struct pb_alloc {
    dra_arena *a;
    int oom;
} pb_alloc;

static void *pb_arena_alloc(void *ud, size_t size)
{
    pb_alloc *pa = ud;
    void *p = dra_arena_alloc(pa->a, size ? size : 1);
    pa->oom |= p == NULL;
    return p;
}

static void pb_arena_free(void *ud, void *ptr)
{
    (void)ud;
    (void)ptr;
}

static ProtobufCAllocator pb_allocator(pb_alloc *pa)
{
    ProtobufCAllocator al = {pb_arena_alloc, pb_arena_free, pa};
    return al;
}

/* Why an unpack returned NULL. */
static dra_err pb_unpack_err(const pb_alloc *pa)
{
    return pa->oom ? DRA_ENOMEM : DRA_EPARSE;
}

static int utf8_ok(const char *s)
{
    size_t len = strlen(s), i = 0;
    while (i < len) {
        uint32_t cp;
        size_t n = dra_utf8_decode((const unsigned char *)s + i, len - i, &cp);
        if (n == 0)
            return 0;
        i += n;
    }
    return 1;
}

/* "" for NULL: protobuf-c wants protobuf_c_empty_string or a string. */
static char *pbs(const char *s)
{
    return (char *)(s ? s : protobuf_c_empty_string);
}

/* Copies |n| borrowed strings into an arena array of char * for
 * protobuf-c (which does not write through them). */
static char **pbs_array(dra_arena *a, const char *const *v, size_t n)
{
    char **out = dra_arena_array(a, n ? n : 1, sizeof(char *));
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++)
        out[i] = pbs(v[i]);
    return out;
}

static dra_err pack_into(const ProtobufCMessage *m, dra_buf *out)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    if (out->oom || len > SIZE_MAX - out->len - 1 ||
        dra_grow(out->mem, (void **)&out->p, &out->cap, out->len + len + 1, 1) != DRA_OK)
        return DRA_ENOMEM;
    protobuf_c_message_pack(m, (uint8_t *)out->p + out->len);
    out->len += len;
    out->p[out->len] = '\0';
    return DRA_OK;
}

/* ---- claims (NodePrepareResourcesRequest and the unprepare request:
 *      the same fields and numbers) ---------------------------------- */

dra_err plugin_pb_decode_claims(dra_arena *a, const uint8_t *data,
                                size_t len, dra_plugin_claim_ref **out,
                                size_t *n, char *err, size_t errcap)
{
    pb_alloc pa = {a, 0};
    ProtobufCAllocator al = pb_allocator(&pa);
    *out = NULL;
    *n = 0;
    pb_prep_req *m = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__unpack(
        &al, len, data);
    if (!m) {
        snprintf(err, errcap, pa.oom ? "out of memory" : "malformed request message");
        return pb_unpack_err(&pa);
    }
    if (m->n_claims > PLUGIN_MAX_CLAIMS) {
        snprintf(err, errcap, "too many claims in one request: %zu (at most %d)",
                 m->n_claims, PLUGIN_MAX_CLAIMS);
        return DRA_ELIMIT;
    }
    dra_plugin_claim_ref *v = dra_arena_array(a, m->n_claims ? m->n_claims : 1,
                                              sizeof(*v));
    if (!v)
        return DRA_ENOMEM;
    for (size_t i = 0; i < m->n_claims; i++) {
        const pb_claim *c = m->claims[i];
        if (!utf8_ok(c->namespace_) || !utf8_ok(c->uid) || !utf8_ok(c->name)) {
            snprintf(err, errcap, "claims[%zu]: string field contains invalid UTF-8", i);
            return DRA_EPARSE;
        }
        v[i].namespace_ = c->namespace_;
        v[i].uid = c->uid;
        v[i].name = c->name;
    }
    *out = v;
    *n = m->n_claims;
    return DRA_OK;
}

dra_err plugin_pb_encode_claims(dra_arena *a, const dra_plugin_claim_ref *claims,
                                size_t n, dra_buf *out)
{
    pb_prep_req m = PREP_REQ_INIT;
    pb_claim **cv = dra_arena_array(a, n ? n : 1, sizeof(*cv));
    pb_claim *cs = dra_arena_array(a, n ? n : 1, sizeof(*cs));
    if (!cv || !cs)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        pb_claim init = CLAIM_INIT;
        cs[i] = init;
        cs[i].namespace_ = pbs(claims[i].namespace_);
        cs[i].uid = pbs(claims[i].uid);
        cs[i].name = pbs(claims[i].name);
        cv[i] = &cs[i];
    }
    m.n_claims = n;
    m.claims = cv;
    return pack_into(&m.base, out);
}

/* ---- prepare response --------------------------------------------------- */

static pb_device *device_to_pb(dra_arena *a, const dra_plugin_device *d)
{
    pb_device *pd = dra_arena_alloc(a, sizeof(*pd));
    if (!pd)
        return NULL;
    pb_device init = DEVICE_INIT;
    *pd = init;
    pd->n_request_names = d->n_request_names;
    pd->request_names = pbs_array(a, d->request_names, d->n_request_names);
    pd->pool_name = pbs(d->pool_name);
    pd->device_name = pbs(d->device_name);
    pd->n_cdi_device_ids = d->n_cdi_device_ids;
    pd->cdi_device_ids = pbs_array(a, d->cdi_device_ids, d->n_cdi_device_ids);
    if (!pd->request_names || !pd->cdi_device_ids)
        return NULL;
    return pd;
}

static pb_prep_entry *prep_entry_to_pb(dra_arena *a, const dra_plugin_claim_result *r)
{
    pb_prep_entry *e = dra_arena_alloc(a, sizeof(*e));
    pb_prep_one *one = dra_arena_alloc(a, sizeof(*one));
    pb_device **dv = dra_arena_array(a, r->n_devices ? r->n_devices : 1, sizeof(*dv));
    if (!e || !one || !dv)
        return NULL;
    pb_prep_entry einit = PREP_ENTRY_INIT;
    pb_prep_one oinit = PREP_ONE_INIT;
    *e = einit;
    *one = oinit;
    for (size_t j = 0; j < r->n_devices; j++)
        if (!(dv[j] = device_to_pb(a, &r->devices[j])))
            return NULL;
    one->n_devices = r->n_devices;
    one->devices = dv;
    one->error = pbs(r->error);
    e->key = pbs(r->uid);
    e->value = one;
    return e;
}

dra_err plugin_pb_encode_prepare_resp(dra_arena *a,
                                      const dra_plugin_claim_result *res,
                                      size_t n, dra_buf *out)
{
    pb_prep_resp m = PREP_RESP_INIT;
    pb_prep_entry **ev = dra_arena_array(a, n ? n : 1, sizeof(*ev));
    if (!ev)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!(ev[i] = prep_entry_to_pb(a, &res[i])))
            return DRA_ENOMEM;
    m.n_claims = n;
    m.claims = ev;
    return pack_into(&m.base, out);
}

static dra_err strings_from_pb(char **v, size_t n, const char ***out)
{
    for (size_t i = 0; i < n; i++)
        if (!utf8_ok(v[i]))
            return DRA_EPARSE;
    *out = (const char **)v;
    return DRA_OK;
}

static dra_err prep_one_from_pb(const pb_prep_entry *e, dra_arena *a,
                                dra_plugin_claim_result *r)
{
    if (!utf8_ok(e->key))
        return DRA_EPARSE;
    r->uid = e->key;
    if (!e->value)
        return DRA_OK; /* an empty message: no devices, no error */
    if (!utf8_ok(e->value->error))
        return DRA_EPARSE;
    r->error = e->value->error;
    r->n_devices = e->value->n_devices;
    r->devices = dra_arena_array(a, r->n_devices ? r->n_devices : 1,
                                 sizeof(*r->devices));
    if (!r->devices)
        return DRA_ENOMEM;
    for (size_t j = 0; j < r->n_devices; j++) {
        const pb_device *pd = e->value->devices[j];
        dra_plugin_device *d = &r->devices[j];
        if (!utf8_ok(pd->pool_name) || !utf8_ok(pd->device_name))
            return DRA_EPARSE;
        d->pool_name = pd->pool_name;
        d->device_name = pd->device_name;
        d->n_request_names = pd->n_request_names;
        d->n_cdi_device_ids = pd->n_cdi_device_ids;
        if (strings_from_pb(pd->request_names, pd->n_request_names,
                            &d->request_names) != DRA_OK ||
            strings_from_pb(pd->cdi_device_ids, pd->n_cdi_device_ids,
                            &d->cdi_device_ids) != DRA_OK)
            return DRA_EPARSE;
    }
    return DRA_OK;
}

dra_err plugin_pb_decode_prepare_resp(dra_arena *a, const uint8_t *data,
                                      size_t len, dra_plugin_claim_result **out,
                                      size_t *n)
{
    pb_alloc pa = {a, 0};
    ProtobufCAllocator al = pb_allocator(&pa);
    *out = NULL;
    *n = 0;
    pb_prep_resp *m =
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__unpack(&al, len, data);
    if (!m)
        return pb_unpack_err(&pa);
    dra_plugin_claim_result *v = dra_arena_array(a, m->n_claims ? m->n_claims : 1,
                                                 sizeof(*v));
    if (!v)
        return DRA_ENOMEM;
    for (size_t i = 0; i < m->n_claims; i++) {
        dra_err e = prep_one_from_pb(m->claims[i], a, &v[i]);
        if (e != DRA_OK)
            return e;
    }
    *out = v;
    *n = m->n_claims;
    return DRA_OK;
}

/* ---- unprepare response -------------------------------------------------- */

dra_err plugin_pb_encode_unprepare_resp(dra_arena *a,
                                        const dra_plugin_claim_result *res,
                                        size_t n, dra_buf *out)
{
    pb_unprep_resp m = UNPREP_RESP_INIT;
    pb_unprep_entry **ev = dra_arena_array(a, n ? n : 1, sizeof(*ev));
    if (!ev)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        pb_unprep_entry *e = dra_arena_alloc(a, sizeof(*e));
        pb_unprep_one *one = dra_arena_alloc(a, sizeof(*one));
        if (!e || !one)
            return DRA_ENOMEM;
        pb_unprep_entry einit = UNPREP_ENTRY_INIT;
        pb_unprep_one oinit = UNPREP_ONE_INIT;
        *e = einit;
        *one = oinit;
        one->error = pbs(res[i].error);
        e->key = pbs(res[i].uid);
        e->value = one;
        ev[i] = e;
    }
    m.n_claims = n;
    m.claims = ev;
    return pack_into(&m.base, out);
}

dra_err plugin_pb_decode_unprepare_resp(dra_arena *a, const uint8_t *data,
                                        size_t len,
                                        dra_plugin_claim_result **out, size_t *n)
{
    pb_alloc pa = {a, 0};
    ProtobufCAllocator al = pb_allocator(&pa);
    *out = NULL;
    *n = 0;
    pb_unprep_resp *m =
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__unpack(&al, len, data);
    if (!m)
        return pb_unpack_err(&pa);
    dra_plugin_claim_result *v = dra_arena_array(a, m->n_claims ? m->n_claims : 1,
                                                 sizeof(*v));
    if (!v)
        return DRA_ENOMEM;
    for (size_t i = 0; i < m->n_claims; i++) {
        const pb_unprep_entry *e = m->claims[i];
        if (!utf8_ok(e->key) || (e->value && !utf8_ok(e->value->error)))
            return DRA_EPARSE;
        v[i].uid = e->key;
        v[i].error = e->value ? e->value->error : "";
    }
    *out = v;
    *n = m->n_claims;
    return DRA_OK;
}

/* ---- registration ------------------------------------------------------ */

dra_err plugin_pb_decode_info_req(dra_arena *a, const uint8_t *data, size_t len)
{
    pb_alloc pa = {a, 0};
    ProtobufCAllocator al = pb_allocator(&pa);
    return pluginregistration__info_request__unpack(&al, len, data) ? DRA_OK
                                                                    : pb_unpack_err(&pa);
}

dra_err plugin_pb_encode_info(dra_arena *a, const dra_plugin_info *info,
                              dra_buf *out)
{
    Pluginregistration__PluginInfo m = PLUGINREGISTRATION__PLUGIN_INFO__INIT;
    m.type = pbs(info->type);
    m.name = pbs(info->name);
    m.endpoint = pbs(info->endpoint);
    m.n_supported_versions = info->n_supported_versions;
    m.supported_versions = pbs_array(a, info->supported_versions,
                                     info->n_supported_versions);
    if (!m.supported_versions)
        return DRA_ENOMEM;
    return pack_into(&m.base, out);
}

dra_err plugin_pb_decode_info(dra_arena *a, const uint8_t *data, size_t len,
                              dra_plugin_info *out)
{
    pb_alloc pa = {a, 0};
    ProtobufCAllocator al = pb_allocator(&pa);
    Pluginregistration__PluginInfo *m =
        pluginregistration__plugin_info__unpack(&al, len, data);
    if (!m)
        return pb_unpack_err(&pa);
    if (!utf8_ok(m->type) || !utf8_ok(m->name) || !utf8_ok(m->endpoint))
        return DRA_EPARSE;
    out->type = m->type;
    out->name = m->name;
    out->endpoint = m->endpoint;
    out->n_supported_versions = m->n_supported_versions;
    return strings_from_pb(m->supported_versions, m->n_supported_versions,
                           &out->supported_versions);
}

dra_err plugin_pb_encode_reg_status(int registered, const char *error,
                                    dra_buf *out)
{
    Pluginregistration__RegistrationStatus m =
        PLUGINREGISTRATION__REGISTRATION_STATUS__INIT;
    m.plugin_registered = registered ? 1 : 0;
    m.error = pbs(error);
    return pack_into(&m.base, out);
}

dra_err plugin_pb_decode_reg_status(dra_arena *a, const uint8_t *data,
                                    size_t len, int *registered,
                                    const char **error)
{
    pb_alloc pa = {a, 0};
    ProtobufCAllocator al = pb_allocator(&pa);
    Pluginregistration__RegistrationStatus *m =
        pluginregistration__registration_status__unpack(&al, len, data);
    if (!m)
        return pb_unpack_err(&pa);
    if (!utf8_ok(m->error))
        return DRA_EPARSE;
    *registered = m->plugin_registered != 0;
    *error = m->error;
    return DRA_OK;
}

dra_err plugin_pb_encode_empty(dra_buf *out)
{
    (void)out; /* every empty message encodes as zero bytes */
    return DRA_OK;
}

dra_err plugin_pb_decode_empty(dra_arena *a, const uint8_t *data, size_t len)
{
    /* Any well-formed message decodes as an empty one (unknown fields
     * are skipped), as proto3 parsers do. */
    pb_alloc pa = {a, 0};
    ProtobufCAllocator al = pb_allocator(&pa);
    return pluginregistration__registration_status_response__unpack(&al, len, data)
               ? DRA_OK
               : pb_unpack_err(&pa);
}

/* ---- health -------------------------------------------------------------- */

dra_err plugin_pb_encode_health_req(const char *service, dra_buf *out)
{
    Grpc__Health__V1__HealthCheckRequest m = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    m.service = pbs(service);
    return pack_into(&m.base, out);
}

dra_err plugin_pb_decode_health_req(dra_arena *a, const uint8_t *data,
                                    size_t len, const char **service)
{
    pb_alloc pa = {a, 0};
    ProtobufCAllocator al = pb_allocator(&pa);
    Grpc__Health__V1__HealthCheckRequest *m =
        grpc__health__v1__health_check_request__unpack(&al, len, data);
    if (!m)
        return pb_unpack_err(&pa);
    if (!utf8_ok(m->service))
        return DRA_EPARSE;
    *service = m->service;
    return DRA_OK;
}

dra_err plugin_pb_encode_health_resp(int status, dra_buf *out)
{
    Grpc__Health__V1__HealthCheckResponse m = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
    m.status = (Grpc__Health__V1__HealthCheckResponse__ServingStatus)status;
    return pack_into(&m.base, out);
}

dra_err plugin_pb_decode_health_resp(dra_arena *a, const uint8_t *data,
                                     size_t len, int *status)
{
    pb_alloc pa = {a, 0};
    ProtobufCAllocator al = pb_allocator(&pa);
    Grpc__Health__V1__HealthCheckResponse *m =
        grpc__health__v1__health_check_response__unpack(&al, len, data);
    if (!m)
        return pb_unpack_err(&pa);
    *status = (int)m->status;
    return DRA_OK;
}
