/*
 * validate_claim.c: ResourceClaim / ResourceClaimTemplate spec rules
 * (requests, subrequests, selectors, allocation modes, tolerations,
 * constraints, config), DeviceClass spec rules, and the ResourceClaim
 * status rules (allocation results, reservedFor, device status).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"
#include "validate_int.h"

#define MAX_REQUESTS 32
#define MAX_SUBREQUESTS 8
#define MAX_SELECTORS 32
#define MAX_CONSTRAINTS 32
#define MAX_CONFIG 32
#define MAX_TOLERATIONS 16
#define CEL_MAX_LEN 10240
#define OPAQUE_MAX_LEN 10240
#define MAX_RESULTS 32
#define MAX_RESERVED_FOR 256
#define MAX_DEVICE_CONDITIONS 8
#define STATUS_DATA_MAX_LEN 10240
#define IFNAME_MAX_LEN 256
#define HWADDR_MAX_LEN 128
#define MAX_IPS 16

static const char *const effects[] = {"NoExecute", "NoSchedule", "None"};
static const char *const operators[] = {"Equal", "Exists"};
static const char *const modes[] = {"All", "ExactCount"};
static const char *const sources[] = {"FromClaim", "FromClass"};
static const char ref_msg[] = "must be the name of a request in the claim or "
    "the name of a request and a subrequest separated by '/'";

/* ---- request names ------------------------------------------------------ */

/* Names of the claim's requests, and "req/sub" for every subrequest. */
typedef struct reqnames {
    vset names;
} reqnames;

static void reqnames_init(vctx *v, reqnames *r, const dra_claim_spec *s)
{
    dra_buf key;
    vset_init(&r->names, v);
    dra_buf_init(&key, v->d ? v->d->mem : NULL);
    for (size_t i = 0; s && i < s->n_requests; i++) {
        const dra_device_request *q = &s->requests[i];
        const char *name = q->name ? q->name : "";
        vset_seen(v, &r->names, name);
        for (size_t j = 0; j < q->n_first_available; j++) {
            const char *sub = q->first_available[j].name;
            dra_buf_reset(&key);
            dra_buf_printf(&key, "%s/%s", name, sub ? sub : "");
            if (key.oom)
                v->oom = 1;
            else
                vset_seen(v, &r->names, key.p);
        }
    }
    dra_buf_fini(&key);
}

static void v_request_ref(vctx *v, const reqnames *r, const char *name)
{
    const char *slash = strchr(name, '/');
    if (slash && strchr(slash + 1, '/')) {
        v_invalid_str(v, name, ref_msg);
        return;
    }
    if (slash) {
        v_dns_label_n(v, name, (size_t)(slash - name));
        v_dns_label(v, slash + 1);
    } else {
        v_dns_label(v, name);
    }
    if (!vset_has(&r->names, name))
        v_invalid_str(v, name, ref_msg);
}

static void v_request_refs(vctx *v, const reqnames *r, const dra_strlist *l)
{
    v_field(v, "requests");
    if (!v_at_most(v, l->n, MAX_REQUESTS)) {
        v_pop(v);
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        v_index(v, i);
        v_request_ref(v, r, l->v[i] ? l->v[i] : "");
        v_pop(v);
    }
    v_unique_keys(v, l->v, l->n, sizeof l->v[0], 0);
    v_pop(v);
}

/* ---- selectors ---------------------------------------------------------- */

static void v_cel_expression(vctx *v, const char *expr)
{
    const dra_api_validate_opts *o = v->hooks;
    char msg[512];
    if (strlen(expr) > CEL_MAX_LEN) {
        v_too_long(v, CEL_MAX_LEN);
        return; /* too long to be worth compiling */
    }
    if (!*expr) {
        v_required(v, "expression must not be empty");
        return;
    }
    if (!o || !o->cel_check)
        return;
    msg[0] = '\0';
    switch (o->cel_check(o->cel_ud, expr, msg, sizeof msg)) {
    case DRA_API_CEL_OK:
        break;
    case DRA_API_CEL_TOO_COSTLY:
        v_forbidden(v, "too complex, exceeds cost limit");
        break;
    default:
        msg[sizeof msg - 1] = '\0';
        v_invalid_str(v, expr, msg);
    }
}

static void v_selectors(vctx *v, const dra_device_selector *s, size_t n,
                        int stored)
{
    v_field(v, "selectors");
    if (!v_at_most(v, n, MAX_SELECTORS)) {
        v_pop(v);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        v_index(v, i);
        v_field(v, "cel");
        if (!s[i].cel_set) {
            v_required(v, NULL);
        } else if (!stored) {
            /* Stored expressions were valid when written; they are not
             * judged again. */
            v_field(v, "expression");
            v_cel_expression(v, s[i].expression ? s[i].expression : "");
            v_pop(v);
        }
        v_pop(v);
        v_pop(v);
    }
    v_pop(v);
}

/* ---- requests ------------------------------------------------------------ */

static void v_device_class_name(vctx *v, const char *s)
{
    v_field(v, "deviceClassName");
    if (!s || !*s)
        v_required(v, NULL);
    else
        v_dns_subdomain(v, s);
    v_pop(v);
}

static void v_allocation_mode(vctx *v, const dra_device_request_spec *r)
{
    /* kube-apiserver defaults the mode to ExactCount and a zero count
     * with ExactCount to 1 before validating, so those are judged as
     * defaulted. */
    const char *mode = r->allocation_mode && *r->allocation_mode
                           ? r->allocation_mode : "ExactCount";
    int64_t count = r->count;
    if (strcmp(mode, "All") == 0) {
        if (count != 0) {
            v_field(v, "count");
            v_invalid_int(v, count, "must not be specified when allocationMode is 'All'");
            v_pop(v);
        }
    } else if (strcmp(mode, "ExactCount") == 0) {
        if (count == 0)
            count = 1;
        if (count <= 0) {
            v_field(v, "count");
            v_invalid_int(v, count, "must be greater than zero");
            v_pop(v);
        }
    } else {
        v_field(v, "allocationMode");
        v_not_supported(v, mode, modes, 2);
        v_pop(v);
    }
}

static int one_of(const char *s, const char *a, const char *b, const char *c)
{
    return strcmp(s, a) == 0 || strcmp(s, b) == 0 || (c && strcmp(s, c) == 0);
}

static void v_toleration(vctx *v, const dra_device_toleration *t)
{
    const char *op = t->op && *t->op ? t->op : "Equal"; /* defaulted */
    const char *val = t->value ? t->value : "";
    const char *eff = t->effect ? t->effect : "";
    if (t->key && *t->key) {
        v_field(v, "key");
        v_label_name(v, t->key);
        v_pop(v);
    }
    if (strcmp(op, "Exists") == 0) {
        if (*val) {
            v_field(v, "value");
            v_invalid_str(v, val, "must be empty for operator `Exists`");
            v_pop(v);
        }
    } else if (strcmp(op, "Equal") == 0) {
        v_field(v, "value");
        v_label_value(v, val);
        v_pop(v);
    } else {
        v_field(v, "operator");
        v_not_supported(v, op, operators, 2);
        v_pop(v);
    }
    if (*eff && !one_of(eff, "NoSchedule", "NoExecute", "None")) {
        v_field(v, "effect");
        v_not_supported(v, eff, effects, 3);
        v_pop(v);
    }
}

static void v_tolerations(vctx *v, const dra_device_toleration *t, size_t n)
{
    v_field(v, "tolerations");
    if (v_at_most(v, n, MAX_TOLERATIONS)) {
        for (size_t i = 0; i < n; i++) {
            v_index(v, i);
            v_toleration(v, &t[i]);
            v_pop(v);
        }
    }
    v_pop(v);
}

static void v_capacity_requests(vctx *v, const dra_capacity_requirements *c)
{
    if (!c)
        return;
    v_field(v, "capacity");
    v_field(v, "requests");
    for (size_t i = 0; i < c->requests.n; i++)
        v_qualified_attr_name(v, c->requests.v[i].key ? c->requests.v[i].key : "");
    v_pop(v);
    v_pop(v);
}

static void v_request_spec(vctx *v, const dra_device_request_spec *r, int sub)
{
    if (sub) {
        v_field(v, "name");
        v_dns_label(v, r->name ? r->name : "");
        v_pop(v);
    }
    v_device_class_name(v, r->device_class_name);
    v_selectors(v, r->selectors, r->n_selectors, 0);
    v_allocation_mode(v, r);
    v_tolerations(v, r->tolerations, r->n_tolerations);
    v_capacity_requests(v, r->capacity);
}

static void v_first_available(vctx *v, const dra_device_request *q)
{
    size_t n = q->n_first_available;
    v_field(v, "firstAvailable");
    if (!v_at_most(v, n, MAX_SUBREQUESTS)) {
        v_pop(v);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        v_index(v, i);
        v_request_spec(v, &q->first_available[i], 1);
        v_pop(v);
    }
    v_unique_keys(v, q->first_available, n, sizeof q->first_available[0],
                  offsetof(dra_device_request_spec, name));
    v_pop(v);
}

static void v_request(vctx *v, const dra_device_request *q)
{
    int has_first = q->n_first_available > 0, has_exactly = q->exactly != NULL;
    v_field(v, "name");
    v_dns_label(v, q->name ? q->name : "");
    v_pop(v);
    if (!has_first && !has_exactly) {
        v_required(v, "exactly one of `exactly` or `firstAvailable` is required");
    } else if (has_first && has_exactly) {
        v_invalid_raw(v, "null", "exactly one of `exactly` or `firstAvailable` "
                                 "is required, but multiple fields are set");
    } else if (has_first) {
        v_first_available(v, q);
    } else {
        v_field(v, "exactly");
        v_request_spec(v, q->exactly, 0);
        v_pop(v);
    }
}

/* ---- constraints and config ---------------------------------------------- */

static void v_constraint(vctx *v, const reqnames *r, const dra_device_constraint *c)
{
    v_request_refs(v, r, &c->requests);
    if (c->match_attribute && c->distinct_attribute) {
        v_invalid_raw(v, "null", "exactly one of \"matchAttribute\" or "
                      "\"distinctAttribute\" is required, but multiple fields are set");
    } else if (c->match_attribute) {
        v_field(v, "matchAttribute");
        v_fully_qualified_attr_name(v, c->match_attribute);
        v_pop(v);
    } else if (c->distinct_attribute) {
        v_field(v, "distinctAttribute");
        v_fully_qualified_attr_name(v, c->distinct_attribute);
        v_pop(v);
    } else {
        v_field(v, "matchAttribute");
        v_required(v, NULL);
        v_pop(v);
    }
}

/* A RawExtension that must hold a JSON object of at most |max| bytes. */
static void v_raw_object(vctx *v, const dra_doc *doc, size_t max, int stored)
{
    dra_buf b;
    if (!doc || doc->kind == DRA_DOC_NULL) {
        v_required(v, NULL);
        return;
    }
    dra_buf_init(&b, v->d ? v->d->mem : NULL);
    if (dra_doc_to_json(doc, 0, &b) != DRA_OK) {
        v->oom = 1;
    } else if (!stored && b.len > max) {
        v_too_long(v, (long)max);
    } else if (doc->kind != DRA_DOC_MAP) {
        v_invalid_str(v, "<value omitted>", "must be a valid JSON object");
    }
    dra_buf_fini(&b);
}

static void v_opaque(vctx *v, const dra_device_config *c, int stored)
{
    v_field(v, "opaque");
    if (!c->opaque) {
        v_required(v, NULL);
    } else {
        v_field(v, "driver");
        v_driver_name(v, c->opaque->driver ? c->opaque->driver : "");
        v_pop(v);
        v_field(v, "parameters");
        v_raw_object(v, c->opaque->parameters, OPAQUE_MAX_LEN, stored);
        v_pop(v);
    }
    v_pop(v);
}

static void v_claim_config(vctx *v, const reqnames *r, const dra_device_config *c)
{
    v_request_refs(v, r, &c->requests);
    v_opaque(v, c, 0);
}

void v_claim_spec(vctx *v, const dra_claim_spec *s)
{
    reqnames r;
    reqnames_init(v, &r, s);
    v_field(v, "devices");
    v_field(v, "requests");
    if (v_at_most(v, s->n_requests, MAX_REQUESTS)) {
        for (size_t i = 0; i < s->n_requests; i++) {
            v_index(v, i);
            v_request(v, &s->requests[i]);
            v_pop(v);
        }
        v_unique_keys(v, s->requests, s->n_requests, sizeof s->requests[0],
                      offsetof(dra_device_request, name));
    }
    v_pop(v);
    v_field(v, "constraints");
    if (v_at_most(v, s->n_constraints, MAX_CONSTRAINTS)) {
        for (size_t i = 0; i < s->n_constraints; i++) {
            v_index(v, i);
            v_constraint(v, &r, &s->constraints[i]);
            v_pop(v);
        }
    }
    v_pop(v);
    v_field(v, "config");
    if (v_at_most(v, s->n_config, MAX_CONFIG)) {
        for (size_t i = 0; i < s->n_config; i++) {
            v_index(v, i);
            v_claim_config(v, &r, &s->config[i]);
            v_pop(v);
        }
    }
    v_pop(v);
    v_pop(v);
    vset_fini(&r.names);
}

/* ---- DeviceClass ------------------------------------------------------------ */

static int selectors_equal(const dra_device_class_spec *a,
                           const dra_device_class_spec *b)
{
    if (a->n_selectors != b->n_selectors)
        return 0;
    for (size_t i = 0; i < a->n_selectors; i++) {
        const dra_device_selector *x = &a->selectors[i], *y = &b->selectors[i];
        if (x->cel_set != y->cel_set ||
            strcmp(x->expression ? x->expression : "",
                   y->expression ? y->expression : "") != 0)
            return 0;
    }
    return 1;
}

static int configs_equal(const dra_device_class_spec *a,
                         const dra_device_class_spec *b)
{
    if (a->n_config != b->n_config)
        return 0;
    for (size_t i = 0; i < a->n_config; i++) {
        const dra_opaque_config *x = a->config[i].opaque, *y = b->config[i].opaque;
        if (!x || !y) {
            if (x != y)
                return 0;
            continue;
        }
        if (strcmp(x->driver ? x->driver : "", y->driver ? y->driver : "") ||
            !dra_doc_equal(x->parameters, y->parameters))
            return 0;
    }
    return 1;
}

void v_class_spec(vctx *v, const dra_device_class_spec *s,
                  const dra_device_class_spec *old)
{
    int stored_cfg = old && configs_equal(s, old);
    v_field(v, "spec");
    v_selectors(v, s->selectors, s->n_selectors, old && selectors_equal(s, old));
    v_field(v, "config");
    if (v_at_most(v, s->n_config, MAX_CONFIG)) {
        for (size_t i = 0; i < s->n_config; i++) {
            v_index(v, i);
            v_opaque(v, &s->config[i], stored_cfg);
            v_pop(v);
        }
    }
    v_pop(v);
    if (s->extended_resource_name &&
        !chk_is_extended_resource_name(s->extended_resource_name)) {
        v_field(v, "extendedResourceName");
        v_invalid_str(v, s->extended_resource_name,
                      "must be a valid extended resource name");
        v_pop(v);
    }
    v_pop(v);
}

/* ---- status ------------------------------------------------------------------ */

static void device_id(char *buf, size_t cap, const char *driver,
                      const char *pool, const char *device, const char *share)
{
    snprintf(buf, cap, "%s/%s/%s%s%s", driver ? driver : "", pool ? pool : "",
             device ? device : "", share ? "/" : "", share ? share : "");
}

static void v_result(vctx *v, const reqnames *r, const dra_device_result *res)
{
    v_field(v, "request");
    v_request_ref(v, r, res->request ? res->request : "");
    v_pop(v);
    v_field(v, "driver");
    v_driver_name(v, res->driver ? res->driver : "");
    v_pop(v);
    v_field(v, "pool");
    v_pool_name(v, res->pool ? res->pool : "");
    v_pop(v);
    v_field(v, "device");
    v_dns_label(v, res->device ? res->device : "");
    v_pop(v);
    v_binding_params(v, &res->binding_conditions, &res->binding_failure_conditions);
    v_field(v, "tolerations");
    for (size_t i = 0; i < res->n_tolerations; i++) {
        v_index(v, i);
        v_toleration(v, &res->tolerations[i]);
        v_pop(v);
    }
    v_pop(v);
    if (res->share_id) {
        v_field(v, "shareID");
        v_uid(v, res->share_id);
        v_pop(v);
    }
}

static void v_alloc_config(vctx *v, const reqnames *r, const dra_device_config *c)
{
    const char *src = c->source ? c->source : "";
    v_field(v, "source");
    if (!*src)
        v_required(v, NULL);
    else if (strcmp(src, "FromClaim") && strcmp(src, "FromClass"))
        v_not_supported(v, src, sources, 2);
    v_pop(v);
    v_request_refs(v, r, &c->requests);
    v_opaque(v, c, 0);
}

static void v_allocation(vctx *v, const reqnames *r, const dra_allocation_result *a)
{
    v_field(v, "devices");
    v_field(v, "results");
    if (v_at_most(v, a->n_results, MAX_RESULTS)) {
        for (size_t i = 0; i < a->n_results; i++) {
            v_index(v, i);
            v_result(v, r, &a->results[i]);
            v_pop(v);
        }
    }
    v_pop(v);
    v_field(v, "config");
    if (v_at_most(v, a->n_config, 2 * MAX_CONFIG)) {
        for (size_t i = 0; i < a->n_config; i++) {
            v_index(v, i);
            v_alloc_config(v, r, &a->config[i]);
            v_pop(v);
        }
    }
    v_pop(v);
    v_pop(v);
    if (a->node_selector) {
        v_field(v, "nodeSelector");
        v_node_selector(v, a->node_selector);
        v_pop(v);
    }
}

static void v_consumer(vctx *v, const dra_consumer_ref *c)
{
    if (!c->resource || !*c->resource) {
        v_field(v, "resource");
        v_required(v, NULL);
        v_pop(v);
    }
    if (!c->name || !*c->name) {
        v_field(v, "name");
        v_required(v, NULL);
        v_pop(v);
    }
    if (!c->uid || !*c->uid) {
        v_field(v, "uid");
        v_required(v, NULL);
        v_pop(v);
    }
}

/* A CIDR address as IsValidInterfaceAddress accepts it, in canonical form. */
static void v_interface_address(vctx *v, const char *s)
{
    char ip[64], canon[80], msg[160];
    const char *slash = strchr(s, '/');
    unsigned char bin[16];
    char *end;
    long bits;
    int fam;
    size_t len = slash ? (size_t)(slash - s) : 0;
    if (!slash || len == 0 || len >= sizeof ip)
        goto bad;
    memcpy(ip, s, len);
    ip[len] = '\0';
    fam = strchr(ip, ':') ? AF_INET6 : AF_INET;
    if (inet_pton(fam, ip, bin) != 1 || !slash[1] ||
        (slash[1] == '0' && slash[2]) || slash[1] == '+' || slash[1] == '-')
        goto bad;
    bits = strtol(slash + 1, &end, 10);
    if (*end || bits < 0 || bits > (fam == AF_INET ? 32 : 128))
        goto bad;
    if (!inet_ntop(fam, bin, canon, sizeof canon))
        goto bad;
    snprintf(canon + strlen(canon), sizeof canon - strlen(canon), "/%ld", bits);
    if (strcmp(canon, s) != 0) {
        snprintf(msg, sizeof msg, "must be in canonical form (\"%s\")", canon);
        v_invalid_str(v, s, msg);
    }
    return;
bad:
    v_invalid_str(v, s, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 "
                        "or 2001:db8::1/64)");
}

static void v_network_data(vctx *v, const dra_network_data *nd)
{
    if (!nd)
        return;
    v_field(v, "networkData");
    if (nd->interface_name && strlen(nd->interface_name) > IFNAME_MAX_LEN) {
        v_field(v, "interfaceName");
        v_too_long(v, IFNAME_MAX_LEN);
        v_pop(v);
    }
    if (nd->hardware_address && strlen(nd->hardware_address) > HWADDR_MAX_LEN) {
        v_field(v, "hardwareAddress");
        v_too_long(v, HWADDR_MAX_LEN);
        v_pop(v);
    }
    v_field(v, "ips");
    if (v_at_most(v, nd->ips.n, MAX_IPS)) {
        for (size_t i = 0; i < nd->ips.n; i++) {
            v_index(v, i);
            v_interface_address(v, nd->ips.v[i] ? nd->ips.v[i] : "");
            v_pop(v);
        }
        v_unique_keys(v, nd->ips.v, nd->ips.n, sizeof nd->ips.v[0], 0);
    }
    v_pop(v);
    v_pop(v);
}

static void v_device_status(vctx *v, const vset *allocated,
                            const dra_allocated_device_status *ds)
{
    char id[800];
    v_field(v, "driver");
    v_driver_name(v, ds->driver ? ds->driver : "");
    v_pop(v);
    v_field(v, "pool");
    v_pool_name(v, ds->pool ? ds->pool : "");
    v_pop(v);
    v_field(v, "device");
    v_dns_label(v, ds->device ? ds->device : "");
    v_pop(v);
    if (ds->share_id) {
        v_field(v, "shareID");
        v_uid(v, ds->share_id);
        v_pop(v);
    }
    device_id(id, sizeof id, ds->driver, ds->pool, ds->device, ds->share_id);
    if (!vset_has(allocated, id))
        v_invalid_raw(v, id, "must be an allocated device in the claim");
    v_field(v, "conditions");
    if (ds->n_conditions > MAX_DEVICE_CONDITIONS)
        v_too_many(v, ds->n_conditions, MAX_DEVICE_CONDITIONS);
    v_conditions(v, ds->conditions, ds->n_conditions);
    v_pop(v);
    if (ds->data && ds->data->kind != DRA_DOC_NULL) {
        v_field(v, "data");
        v_raw_object(v, ds->data, STATUS_DATA_MAX_LEN, 0);
        v_pop(v);
    }
    v_network_data(v, ds->network_data);
}

static void v_status_devices(vctx *v, const dra_claim_status *st)
{
    vset allocated, seen;
    char id[800];
    vset_init(&allocated, v);
    vset_init(&seen, v);
    for (size_t i = 0; st->allocation && i < st->allocation->n_results; i++) {
        const dra_device_result *r = &st->allocation->results[i];
        device_id(id, sizeof id, r->driver, r->pool, r->device, r->share_id);
        vset_seen(v, &allocated, id);
    }
    v_field(v, "devices");
    for (size_t i = 0; i < st->n_devices; i++) {
        v_index(v, i);
        v_device_status(v, &allocated, &st->devices[i]);
        v_pop(v);
    }
    for (size_t i = 0; i < st->n_devices; i++) {
        const dra_allocated_device_status *ds = &st->devices[i];
        device_id(id, sizeof id, ds->driver, ds->pool, ds->device, ds->share_id);
        if (vset_seen(v, &seen, id)) {
            v_index(v, i);
            v_error(v, "Duplicate value: %s", id);
            v_pop(v);
        }
    }
    v_pop(v);
    vset_fini(&allocated);
    vset_fini(&seen);
}

static void v_reserved_for(vctx *v, const dra_claim_status *st,
                           const dra_claim_status *old, int deleting)
{
    size_t n = st->n_reserved_for;
    v_field(v, "reservedFor");
    if (v_at_most(v, n, MAX_RESERVED_FOR)) {
        for (size_t i = 0; i < n; i++) {
            v_index(v, i);
            v_consumer(v, &st->reserved_for[i]);
            v_pop(v);
        }
        v_unique_keys(v, st->reserved_for, n, sizeof st->reserved_for[0],
                      offsetof(dra_consumer_ref, uid));
    }
    if (n > 0 && !st->allocation) {
        v_forbidden(v, "may not be specified when `allocated` is not set");
    } else if (n > 0 && deleting && old) {
        /* Consumers may leave a claim that is going away, not join it. */
        vset before;
        int added = 0;
        vset_init(&before, v);
        for (size_t i = 0; i < old->n_reserved_for; i++) {
            const dra_consumer_ref *c = &old->reserved_for[i];
            char key[1200];
            snprintf(key, sizeof key, "%s\n%s\n%s\n%s", c->api_group ? c->api_group : "",
                     c->resource ? c->resource : "", c->name ? c->name : "",
                     c->uid ? c->uid : "");
            vset_seen(v, &before, key);
        }
        for (size_t i = 0; i < n && !added; i++) {
            const dra_consumer_ref *c = &st->reserved_for[i];
            char key[1200];
            snprintf(key, sizeof key, "%s\n%s\n%s\n%s", c->api_group ? c->api_group : "",
                     c->resource ? c->resource : "", c->name ? c->name : "",
                     c->uid ? c->uid : "");
            added = !vset_has(&before, key);
        }
        vset_fini(&before);
        if (added)
            v_forbidden(v, "new entries may not be added while "
                           "`deallocationRequested` or `deletionTimestamp` are set");
    }
    v_pop(v);
}

/* |old| NULL: the status is judged as if it replaced an empty one. The
 * caller reports a changed allocation when both old and new have one. */
void v_claim_status(vctx *v, const dra_claim_spec *spec,
                    const dra_claim_status *st, const dra_claim_status *old,
                    int deleting)
{
    reqnames r;
    reqnames_init(v, &r, spec);
    v_field(v, "status");
    v_reserved_for(v, st, old, deleting);
    v_status_devices(v, st);
    if (st->allocation && !(old && old->allocation)) {
        v_field(v, "allocation");
        v_allocation(v, &r, st->allocation);
        v_pop(v);
    }
    v_pop(v);
    vset_fini(&r.names);
}
