/*
 * plugin/config.c: the opaque device configuration NVIDIA's driver
 * accepts (apiVersion resource.nvidia.com/v1beta1: GpuConfig,
 * MigDeviceConfig, VfioDeviceConfig; ComputeDomain kinds decode but are
 * not this plugin's), decoded strictly with the wording of
 * apimachinery's strict JSON serializer, normalised and validated under
 * the feature gates as NVIDIA's api package does, and matched to
 * allocation results with its precedence: defaults < class < claim,
 * later entries win, one backward pass (device_state.go).
 * Pure: no I/O.
 */
#include <stdio.h>
#include <string.h>

#include "plugin_int.h"

#define CFG_GROUP_VERSION "resource.nvidia.com/v1beta1"
#define CFG_SCHEME "github.com/NVIDIA/k8s-dra-driver-gpu/api/nvidia.com/resource/v1beta1"

/* Decoding state: strict errors are collected (all of them, like
 * apimachinery), the first type error wins over them. */
typedef struct dec {
    dra_arena *a;
    dra_buf strict; /* "unknown field \"x\", ..." */
    char type_err[512];
    int oom;
} dec;

static const char *json_kind(const dra_doc *v)
{
    switch (v->kind) {
    case DRA_DOC_NULL:
        return "null";
    case DRA_DOC_BOOL:
        return "bool";
    case DRA_DOC_INT:
    case DRA_DOC_FLOAT:
        return "number";
    case DRA_DOC_STRING:
        return "string";
    case DRA_DOC_LIST:
        return "array";
    default:
        return "object";
    }
}

static void type_error(dec *x, const dra_doc *v, const char *gostruct,
                       const char *path, const char *gotype)
{
    if (x->type_err[0])
        return;
    if (v->kind == DRA_DOC_INT || v->kind == DRA_DOC_FLOAT) {
        char num[64];
        if (v->kind == DRA_DOC_INT)
            snprintf(num, sizeof(num), "%lld", (long long)v->u.i);
        else
            snprintf(num, sizeof(num), "%s", v->u.f.num ? v->u.f.num : "?");
        snprintf(x->type_err, sizeof(x->type_err),
                 "json: cannot unmarshal number %s into Go struct field %s.%s of type %s",
                 num, gostruct, path, gotype);
        return;
    }
    snprintf(x->type_err, sizeof(x->type_err),
             "json: cannot unmarshal %s into Go struct field %s.%s of type %s",
             json_kind(v), gostruct, path, gotype);
}

static void unknown_field(dec *x, const char *prefix, const char *key)
{
    if (x->strict.len)
        dra_buf_puts(&x->strict, ", ");
    dra_buf_printf(&x->strict, "unknown field \"%s%s%s\"", prefix, *prefix ? "." : "", key);
}

/* A string field; null leaves it unset. */
static const char *str_field(dec *x, const dra_doc *v, const char *gostruct,
                             const char *path, const char *gotype)
{
    if (v->kind == DRA_DOC_NULL)
        return NULL;
    if (v->kind != DRA_DOC_STRING) {
        type_error(x, v, gostruct, path, gotype);
        return NULL;
    }
    return v->u.str.s;
}

/* resource.Quantity's UnmarshalJSON: a string or a number. */
static int qty_field(dec *x, const dra_doc *v, dra_quantity *out)
{
    const char *s = NULL;
    char num[64];
    if (v->kind == DRA_DOC_NULL)
        return 0;
    if (v->kind == DRA_DOC_STRING)
        s = v->u.str.s;
    else if (v->kind == DRA_DOC_INT)
        snprintf(num, sizeof(num), "%lld", (long long)v->u.i), s = num;
    else if (v->kind == DRA_DOC_FLOAT && v->u.f.num)
        s = v->u.f.num;
    if (!s || dra_quantity_parse(s, strlen(s), out) != DRA_OK) {
        if (!x->type_err[0])
            snprintf(x->type_err, sizeof(x->type_err),
                     "quantities must match the regular expression "
                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        return 0;
    }
    return 1;
}

static void decode_mps(dec *x, const dra_doc *m, plugin_mps_cfg *c, const char *path)
{
    char p[160];
    for (size_t i = 0; i < m->u.map.n; i++) {
        const char *k = m->u.map.m[i].key;
        const dra_doc *v = m->u.map.m[i].val;
        if (strcmp(k, "defaultActiveThreadPercentage") == 0) {
            snprintf(p, sizeof(p), "%s.%s", path, k);
            if (v->kind == DRA_DOC_INT && v->u.i >= INT32_MIN && v->u.i <= INT32_MAX) {
                c->thread_pct_set = 1;
                c->thread_pct = v->u.i;
            } else if (v->kind != DRA_DOC_NULL) {
                type_error(x, v, "MpsConfig", p, "int");
            }
        } else if (strcmp(k, "defaultPinnedDeviceMemoryLimit") == 0) {
            c->pinned_set = qty_field(x, v, &c->pinned);
        } else if (strcmp(k, "defaultPerDevicePinnedMemoryLimit") == 0) {
            snprintf(p, sizeof(p), "%s.%s", path, k);
            if (v->kind == DRA_DOC_NULL)
                continue;
            if (v->kind != DRA_DOC_MAP) {
                type_error(x, v, "MpsConfig", p, "v1beta1.MpsPerDevicePinnedMemoryLimit");
                continue;
            }
            c->per_dev = dra_arena_array(x->a, v->u.map.n ? v->u.map.n : 1,
                                         sizeof(*c->per_dev));
            if (!c->per_dev) {
                x->oom = 1;
                return;
            }
            for (size_t j = 0; j < v->u.map.n; j++) {
                c->per_dev[c->n_per_dev].key = v->u.map.m[j].key;
                if (qty_field(x, v->u.map.m[j].val, &c->per_dev[c->n_per_dev].q))
                    c->n_per_dev++;
            }
        } else {
            unknown_field(x, path, k);
        }
    }
}

static void decode_sharing(dec *x, const dra_doc *m, plugin_cfg *c)
{
    const char *gs = c->kind == PLUGIN_CFG_GPU ? "GpuSharing" : "MigDeviceSharing";
    for (size_t i = 0; i < m->u.map.n; i++) {
        const char *k = m->u.map.m[i].key;
        const dra_doc *v = m->u.map.m[i].val;
        if (strcmp(k, "strategy") == 0) {
            const char *s = str_field(x, v, gs, "sharing.strategy", "v1beta1.GpuSharingStrategy");
            c->strategy = s ? s : "";
        } else if (strcmp(k, "timeSlicingConfig") == 0 && c->kind == PLUGIN_CFG_GPU) {
            if (v->kind == DRA_DOC_NULL)
                continue;
            if (v->kind != DRA_DOC_MAP) {
                type_error(x, v, gs, "sharing.timeSlicingConfig", "v1beta1.TimeSlicingConfig");
                continue;
            }
            c->ts_set = 1;
            for (size_t j = 0; j < v->u.map.n; j++) {
                const char *tk = v->u.map.m[j].key;
                if (strcmp(tk, "interval") == 0)
                    c->interval = str_field(x, v->u.map.m[j].val, "TimeSlicingConfig",
                                            "sharing.timeSlicingConfig.interval",
                                            "v1beta1.TimeSliceInterval");
                else
                    unknown_field(x, "sharing.timeSlicingConfig", tk);
            }
        } else if (strcmp(k, "mpsConfig") == 0) {
            if (v->kind == DRA_DOC_NULL)
                continue;
            if (v->kind != DRA_DOC_MAP) {
                type_error(x, v, gs, "sharing.mpsConfig", "v1beta1.MpsConfig");
                continue;
            }
            c->mps_set = 1;
            decode_mps(x, v, &c->mps, "sharing.mpsConfig");
        } else {
            unknown_field(x, "sharing", k);
        }
    }
}

static int kind_of(const char *kind)
{
    static const struct {
        const char *name;
        int kind;
    } kinds[] = {{"GpuConfig", PLUGIN_CFG_GPU},
                 {"MigDeviceConfig", PLUGIN_CFG_MIG},
                 {"VfioDeviceConfig", PLUGIN_CFG_VFIO},
                 {"ComputeDomainChannelConfig", PLUGIN_CFG_OTHER},
                 {"ComputeDomainDaemonConfig", PLUGIN_CFG_OTHER}};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kind, kinds[i].name) == 0)
            return kinds[i].kind;
    return 0;
}

/* The compact JSON of |v| for the "Object 'Kind' is missing" messages. */
static void json_text(const dra_doc *v, char *buf, size_t size)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    if (dra_doc_to_json(v, 0, &b) == DRA_OK && b.p) {
        while (b.len && b.p[b.len - 1] == '\n')
            b.p[--b.len] = '\0';
        snprintf(buf, size, "%s", b.p);
    } else {
        snprintf(buf, size, "?");
    }
    dra_buf_fini(&b);
}

static dra_err decode_head(const dra_doc *params, plugin_cfg *out, char *err, size_t cap)
{
    char text[256];
    if (!params || params->kind != DRA_DOC_MAP) {
        snprintf(err, cap, "couldn't get version/kind; json parse error: json: cannot "
                           "unmarshal %s into Go value of type struct { APIVersion string "
                           "\"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
                           "\"json:\\\"kind,omitempty\\\"\" }",
                 params ? json_kind(params) : "null");
        return DRA_EINVAL;
    }
    const dra_doc *av = dra_doc_get(params, "apiVersion");
    const dra_doc *kd = dra_doc_get(params, "kind");
    const char *api = av && av->kind == DRA_DOC_STRING ? av->u.str.s : "";
    const char *kind = kd && kd->kind == DRA_DOC_STRING ? kd->u.str.s : "";
    if (!*kind) {
        json_text(params, text, sizeof(text));
        snprintf(err, cap, "Object 'Kind' is missing in '%s'", text);
        return DRA_EINVAL;
    }
    if (!*api) {
        json_text(params, text, sizeof(text));
        snprintf(err, cap, "Object 'apiVersion' is missing in '%s'", text);
        return DRA_EINVAL;
    }
    out->kind = strcmp(api, CFG_GROUP_VERSION) == 0 ? kind_of(kind) : 0;
    if (!out->kind) {
        snprintf(err, cap, "no kind \"%s\" is registered for version \"%s\" in scheme \"%s\"",
                 kind, api, CFG_SCHEME);
        return DRA_EINVAL;
    }
    out->kind_name = kind;
    return DRA_OK;
}

dra_err plugin_cfg_decode(dra_arena *a, const dra_doc *params, plugin_cfg *out,
                          char *err, size_t cap)
{
    memset(out, 0, sizeof(*out));
    dra_err e = decode_head(params, out, err, cap);
    if (e != DRA_OK)
        return e;
    dec x;
    memset(&x, 0, sizeof(x));
    x.a = a;
    dra_buf_init(&x.strict, NULL);
    const char *gostruct = out->kind_name;
    for (size_t i = 0; i < params->u.map.n; i++) {
        const char *k = params->u.map.m[i].key;
        const dra_doc *v = params->u.map.m[i].val;
        if (strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0)
            continue;
        if (strcmp(k, "sharing") == 0 &&
            (out->kind == PLUGIN_CFG_GPU || out->kind == PLUGIN_CFG_MIG)) {
            if (v->kind == DRA_DOC_NULL)
                continue;
            if (v->kind != DRA_DOC_MAP) {
                type_error(&x, v, gostruct, "sharing",
                           out->kind == PLUGIN_CFG_GPU ? "v1beta1.GpuSharing"
                                                       : "v1beta1.MigDeviceSharing");
                continue;
            }
            out->has_sharing = 1;
            out->strategy = "";
            decode_sharing(&x, v, out);
        } else if (out->kind == PLUGIN_CFG_OTHER &&
                   (strcmp(k, "domainID") == 0 || strcmp(k, "allocationMode") == 0)) {
            (void)str_field(&x, v, gostruct, k, "string");
        } else {
            unknown_field(&x, "", k);
        }
    }
    e = DRA_OK;
    if (x.oom || x.strict.oom)
        e = DRA_ENOMEM;
    else if (x.type_err[0]) {
        snprintf(err, cap, "%s", x.type_err);
        e = DRA_EINVAL;
    } else if (x.strict.len) {
        snprintf(err, cap, "strict decoding error: %s", x.strict.p);
        e = DRA_EINVAL;
    }
    dra_buf_fini(&x.strict);
    return e;
}

/* ---- normalise and validate (gpuconfig.go, migconfig.go, validate.go) ------ */

void plugin_cfg_default(plugin_cfg *c, int kind, const dra_plugin_gates *g)
{
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    c->kind_name = kind == PLUGIN_CFG_GPU ? "GpuConfig"
                   : kind == PLUGIN_CFG_MIG ? "MigDeviceConfig"
                                            : "VfioDeviceConfig";
    c->is_default = 1;
    if (g->time_slicing_settings && kind != PLUGIN_CFG_VFIO) {
        c->has_sharing = 1;
        c->strategy = "TimeSlicing";
        if (kind == PLUGIN_CFG_GPU) {
            c->ts_set = 1;
            c->interval = "Default";
        }
    }
}

void plugin_cfg_normalize(plugin_cfg *c, const dra_plugin_gates *g)
{
    if (c->kind != PLUGIN_CFG_GPU && c->kind != PLUGIN_CFG_MIG)
        return;
    if (!c->has_sharing) {
        if (!g->time_slicing_settings)
            return;
        c->has_sharing = 1;
        c->strategy = "TimeSlicing";
    }
    if (g->time_slicing_settings && c->kind == PLUGIN_CFG_GPU &&
        strcmp(c->strategy, "TimeSlicing") == 0 && !c->ts_set) {
        c->ts_set = 1;
        c->interval = "Default";
    }
    if (g->mps_support && strcmp(c->strategy, "MPS") == 0 && !c->mps_set)
        c->mps_set = 1;
}

int plugin_cfg_interval(const char *interval)
{
    static const char *const names[] = {"Default", "Short", "Medium", "Long"};
    /* A timeSlicingConfig without an interval: NVIDIA's Validate would
     * dereference nil and crash the plugin; here it means Default. */
    if (!interval)
        return 0;
    for (int i = 0; i < 4; i++)
        if (strcmp(interval, names[i]) == 0)
            return i;
    return -1;
}

dra_err plugin_cfg_validate(const plugin_cfg *c, const dra_plugin_gates *g, char *err,
                            size_t cap)
{
    if ((c->kind != PLUGIN_CFG_GPU && c->kind != PLUGIN_CFG_MIG) || !c->has_sharing)
        return DRA_OK;
    int ts = strcmp(c->strategy, "TimeSlicing") == 0;
    int mps = strcmp(c->strategy, "MPS") == 0;
    if (!((g->time_slicing_settings && ts) || (g->mps_support && mps))) {
        snprintf(err, cap, "unknown GPU sharing strategy: %s", c->strategy);
        return DRA_EINVAL;
    }
    if (ts && c->kind == PLUGIN_CFG_GPU && c->ts_set && plugin_cfg_interval(c->interval) < 0) {
        snprintf(err, cap, "unknown time-slice interval: %s", c->interval);
        return DRA_EINVAL;
    }
    if (mps && c->mps.thread_pct_set) {
        if (c->mps.thread_pct < 0) {
            snprintf(err, cap, "active thread percentage must not be negative");
            return DRA_EINVAL;
        }
        if (c->mps.thread_pct > 100) {
            snprintf(err, cap, "active thread percentage must not be greater than 100");
            return DRA_EINVAL;
        }
    }
    return DRA_OK;
}

/* ---- collecting and matching (device_state.go) -------------------------------- */

static dra_err push_cfg(dra_arena *a, plugin_cfg **v, size_t *n, size_t *cap,
                        const plugin_cfg *c)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        plugin_cfg *nv = dra_arena_array(a, nc, sizeof(*nv));
        if (!nv)
            return DRA_ENOMEM;
        if (*n)
            memcpy(nv, *v, *n * sizeof(*nv));
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = *c;
    return DRA_OK;
}

static dra_err collect_source(dra_arena *a, const dra_allocation_result *al,
                              const char *source, plugin_cfg **v, size_t *n,
                              size_t *cap, char *err, size_t errcap)
{
    for (size_t i = 0; i < al->n_config; i++) {
        const dra_device_config *dc = &al->config[i];
        if (!dc->source || strcmp(dc->source, source) != 0)
            continue;
        if (!dc->opaque) {
            snprintf(err, errcap, "only opaque parameters are supported by this driver");
            return DRA_EINVAL;
        }
        if (!dc->opaque->driver || strcmp(dc->opaque->driver, DRA_PLUGIN_DRIVER) != 0)
            continue;
        plugin_cfg c;
        char why[900];
        dra_err e = plugin_cfg_decode(a, dc->opaque->parameters, &c, why, sizeof(why));
        if (e == DRA_ENOMEM)
            return e;
        if (e != DRA_OK) {
            snprintf(err, errcap, "error decoding config parameters: %s", why);
            return DRA_EINVAL;
        }
        c.requests = dc->requests.v;
        c.n_requests = dc->requests.n;
        if ((e = push_cfg(a, v, n, cap, &c)) != DRA_OK)
            return e;
    }
    return DRA_OK;
}

dra_err plugin_cfg_collect(dra_arena *a, const dra_allocation_result *al,
                           const dra_plugin_gates *g, plugin_cfg **out, size_t *n_out,
                           char *err, size_t errcap)
{
    plugin_cfg *v = NULL;
    size_t n = 0, cap = 0;
    plugin_cfg d;
    dra_err e;
    *out = NULL;
    *n_out = 0;
    for (size_t i = 0; i < al->n_config; i++) {
        const char *s = al->config[i].source;
        if (!s || (strcmp(s, "FromClass") != 0 && strcmp(s, "FromClaim") != 0)) {
            snprintf(err, errcap, "error getting opaque device configs: invalid config source: %s",
                     s ? s : "");
            return DRA_EINVAL;
        }
    }
    /* Lowest precedence first: VfioDeviceConfig (passthrough), then the
     * MIG and GPU defaults (inserted at the front in that order). */
    if (g->passthrough_support) {
        plugin_cfg_default(&d, PLUGIN_CFG_VFIO, g);
        if ((e = push_cfg(a, &v, &n, &cap, &d)) != DRA_OK)
            return e;
    }
    plugin_cfg_default(&d, PLUGIN_CFG_MIG, g);
    if ((e = push_cfg(a, &v, &n, &cap, &d)) != DRA_OK)
        return e;
    plugin_cfg_default(&d, PLUGIN_CFG_GPU, g);
    if ((e = push_cfg(a, &v, &n, &cap, &d)) != DRA_OK)
        return e;
    char why[1000];
    e = collect_source(a, al, "FromClass", &v, &n, &cap, why, sizeof(why));
    if (e == DRA_OK)
        e = collect_source(a, al, "FromClaim", &v, &n, &cap, why, sizeof(why));
    if (e == DRA_EINVAL)
        snprintf(err, errcap, "error getting opaque device configs: %s", why);
    if (e != DRA_OK)
        return e;
    *out = v;
    *n_out = n;
    return DRA_OK;
}

static int fits(const plugin_cfg *c, int dev_kind)
{
    switch (c->kind) {
    case PLUGIN_CFG_GPU:
        return dev_kind == PLUGIN_DEV_GPU;
    case PLUGIN_CFG_MIG:
        return dev_kind == PLUGIN_DEV_MIG;
    case PLUGIN_CFG_VFIO:
        return dev_kind == PLUGIN_DEV_VFIO;
    default:
        return 1; /* not a sharing config: NVIDIA's checks let it through */
    }
}

static const char *dev_kind_name(int k)
{
    return k == PLUGIN_DEV_MIG ? "mig" : k == PLUGIN_DEV_VFIO ? "vfio" : "gpu";
}

int plugin_cfg_match(const plugin_cfg *cfgs, size_t n, const char *request,
                     int dev_kind, char *err, size_t errcap)
{
    for (size_t i = n; i-- > 0;) {
        const plugin_cfg *c = &cfgs[i];
        int named = 0;
        for (size_t r = 0; r < c->n_requests; r++)
            if (strcmp(c->requests[r], request) == 0)
                named = 1;
        if (named) {
            if (!fits(c, dev_kind)) {
                snprintf(err, errcap, "cannot apply %s to device type %s (request: %s)",
                         c->kind_name, dev_kind_name(dev_kind), request);
                return -1;
            }
            return (int)i;
        }
        if (c->n_requests == 0 && fits(c, dev_kind))
            return (int)i;
    }
    snprintf(err, errcap, "no configuration applies to request %s", request);
    return -1;
}
