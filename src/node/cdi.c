/*
 * cdi.c: Container Device Interface specs. Parses spec files (YAML or
 * JSON, through the codec's dra_doc), validates them as the CDI library
 * does, scans spec directories with containerd's priority rules and
 * merges the edits of the requested devices in InjectDevices' order.
 * The runtime (bwrap.c) applies the result.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_int.h"

/* ---- names (pkg/parser) --------------------------------------------- */

static int is_letter(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int is_alnum(char c)
{
    return is_letter(c) || (c >= '0' && c <= '9');
}

/* Vendor or class rules; |what| is "vendor" or "class". */
static dra_err check_vendor_class(const char *s, const char *what,
                                  const char *id, dra_diag *d)
{
    size_t n = strlen(s);
    if (n == 0)
        return dra_diag_add(d, "", 0, 0, "invalid device \"%s\": invalid %s. empty name", id, what),
               DRA_EINVAL;
    if (!is_letter(s[0]))
        return dra_diag_add(d, "", 0, 0, "invalid device \"%s\": invalid %s. \"%s\", should start with letter",
                            id, what, s),
               DRA_EINVAL;
    for (size_t i = 1; i + 1 < n; i++) {
        char c = s[i];
        if (!is_alnum(c) && c != '_' && c != '-' && c != '.')
            return dra_diag_add(d, "", 0, 0, "invalid device \"%s\": invalid %s. invalid character '%c' in name \"%s\"",
                                id, what, c, s),
                   DRA_EINVAL;
    }
    if (n > 1 && !is_alnum(s[n - 1]))
        return dra_diag_add(d, "", 0, 0, "invalid device \"%s\": invalid %s. \"%s\", should end with a letter or digit",
                            id, what, s),
               DRA_EINVAL;
    return DRA_OK;
}

/* Device name rules; returns the bare message (no "invalid device"
 * prefix) through |msg| so spec validation can word it its own way. */
static const char *device_name_problem(const char *s, char *msg, size_t size)
{
    size_t n = strlen(s);
    if (n == 0)
        return "invalid (empty) device name";
    if (!is_alnum(s[0])) {
        node_errf(msg, size, "invalid class \"%s\", should start with a letter or digit", s);
        return msg;
    }
    for (size_t i = 1; i + 1 < n; i++) {
        char c = s[i];
        if (!is_alnum(c) && c != '_' && c != '-' && c != '.' && c != ':') {
            node_errf(msg, size, "invalid character '%c' in device name \"%s\"", c, s);
            return msg;
        }
    }
    if (n > 1 && !is_alnum(s[n - 1])) {
        node_errf(msg, size, "invalid name \"%s\", should end with a letter or digit", s);
        return msg;
    }
    return NULL;
}

dra_err dra_node_cdi_parse_name(const char *id, dra_arena *a, const char **vendor,
                           const char **class_, const char **name,
                           dra_diag *d)
{
    const char *eq, *slash;
    char msg[256];
    const char *p;
    if (!id || !a)
        return DRA_EINVAL;
    eq = id[0] && id[0] != '/' ? strchr(id, '=') : NULL;
    slash = eq ? memchr(id, '/', (size_t)(eq - id)) : NULL;
    if (!eq || eq == id || !eq[1] || !slash || slash == id || slash + 1 == eq)
        return dra_diag_add(d, "", 0, 0, "unqualified device \"%s\", missing vendor", id), DRA_EINVAL;
    char *v = dra_arena_strndup(a, id, (size_t)(slash - id));
    char *c = dra_arena_strndup(a, slash + 1, (size_t)(eq - slash - 1));
    char *nm = dra_arena_strdup(a, eq + 1);
    if (!v || !c || !nm)
        return DRA_ENOMEM;
    if (check_vendor_class(v, "vendor", id, d) || check_vendor_class(c, "class", id, d))
        return DRA_EINVAL;
    if ((p = device_name_problem(nm, msg, sizeof msg)) != NULL)
        return dra_diag_add(d, "", 0, 0, "invalid device \"%s\": %s", id, p), DRA_EINVAL;
    if (vendor)
        *vendor = v;
    if (class_)
        *class_ = c;
    if (name)
        *name = nm;
    return DRA_OK;
}

/* ---- decoding ----------------------------------------------------------
 * A reader over a dra_doc that records the first error and lets the
 * decoder go on, so each function stays a flat list of fields. */
typedef struct rd {
    dra_arena *a;
    dra_diag *d;
    dra_err err;
} rd;

static void rd_fail(rd *r, dra_err e, const dra_doc *at, const char *fmt, ...) DRA_PRINTF(4, 5);
static void rd_fail(rd *r, dra_err e, const dra_doc *at, const char *fmt, ...)
{
    va_list ap;
    if (r->err)
        return;
    r->err = e;
    va_start(ap, fmt);
    dra_diag_vadd(r->d, "", at ? at->line : 0, at ? at->col : 0, fmt, ap);
    va_end(ap);
}

/* Rejects members of |map| not named in |known| (UnmarshalStrict). */
static void rd_known(rd *r, const dra_doc *map, const char *const *known)
{
    for (size_t i = 0; map && i < map->u.map.n; i++) {
        const char *k = map->u.map.m[i].key;
        size_t j = 0;
        while (known[j] && strcmp(known[j], k) != 0)
            j++;
        if (!known[j])
            rd_fail(r, DRA_EINVALID, map->u.map.m[i].val, "failed to unmarshal CDI Spec: unknown field \"%s\"", k);
    }
}

static const dra_doc *rd_map(rd *r, const dra_doc *doc, const char *what)
{
    if (!doc || doc->kind == DRA_DOC_NULL)
        return NULL;
    if (doc->kind != DRA_DOC_MAP) {
        rd_fail(r, DRA_EINVALID, doc, "failed to unmarshal CDI Spec: %s: expected an object", what);
        return NULL;
    }
    return doc;
}

/* Member |key| of |map| when it has |kind|; NULL when absent or null, and
 * when of another kind, which fails |r| ("expected |what|"). */
static const dra_doc *rd_member(rd *r, const dra_doc *map, const char *key,
                                dra_doc_kind kind, const char *what)
{
    const dra_doc *v = dra_doc_get(map, key);
    if (!v || v->kind == DRA_DOC_NULL)
        return NULL;
    if (v->kind != kind) {
        rd_fail(r, DRA_EINVALID, v, "failed to unmarshal CDI Spec: %s: expected %s", key, what);
        return NULL;
    }
    return v;
}

static const char *rd_str(rd *r, const dra_doc *map, const char *key)
{
    const dra_doc *v = rd_member(r, map, key, DRA_DOC_STRING, "a string");
    return v ? v->u.str.s : NULL;
}

static int64_t rd_int(rd *r, const dra_doc *map, const char *key, int64_t dflt)
{
    const dra_doc *v = rd_member(r, map, key, DRA_DOC_INT, "an integer");
    return v ? v->u.i : dflt;
}

/* A list member: NULL (n = 0) when absent. */
static const dra_doc *rd_list(rd *r, const dra_doc *map, const char *key)
{
    return rd_member(r, map, key, DRA_DOC_LIST, "a list");
}

static const char **rd_strs(rd *r, const dra_doc *map, const char *key, size_t *n)
{
    const dra_doc *l = rd_list(r, map, key);
    const char **out;
    *n = 0;
    if (!l || l->u.list.n == 0)
        return NULL;
    out = dra_arena_array(r->a, l->u.list.n, sizeof *out);
    if (!out) {
        rd_fail(r, DRA_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < l->u.list.n; i++) {
        const dra_doc *it = l->u.list.items[i];
        if (it->kind != DRA_DOC_STRING) {
            rd_fail(r, DRA_EINVALID, it, "failed to unmarshal CDI Spec: %s: expected strings", key);
            return NULL;
        }
        out[i] = it->u.str.s;
    }
    *n = l->u.list.n;
    return out;
}

static void *rd_array(rd *r, size_t n, size_t size)
{
    void *p = n ? dra_arena_array(r->a, n, size) : NULL;
    if (n && !p)
        rd_fail(r, DRA_ENOMEM, NULL, "out of memory");
    return p;
}

static const char *const node_keys[] = {"path", "hostPath", "type", "major", "minor", "fileMode",
                                        "permissions", "uid", "gid", NULL};

static void rd_device_node(rd *r, const dra_doc *m, dra_node_cdi_device_node *dn)
{
    const char *t;
    rd_known(r, m, node_keys);
    dn->path = rd_str(r, m, "path");
    dn->host_path = rd_str(r, m, "hostPath");
    if (dn->host_path && !dn->host_path[0])
        dn->host_path = NULL;
    t = rd_str(r, m, "type");
    dn->type = t ? t : "";
    dn->major = rd_int(r, m, "major", 0);
    dn->minor = rd_int(r, m, "minor", 0);
    dn->file_mode = rd_int(r, m, "fileMode", -1);
    dn->permissions = rd_str(r, m, "permissions");
    dn->uid = rd_int(r, m, "uid", -1);
    dn->gid = rd_int(r, m, "gid", -1);
}

static const char *const hook_names[] = {"prestart", "createRuntime", "createContainer",
                                         "startContainer", "poststart", "poststop"};

static void rd_hook(rd *r, const dra_doc *m, dra_node_cdi_hook *h)
{
    static const char *const keys[] = {"hookName", "path", "args", "env", "timeout", NULL};
    rd_known(r, m, keys);
    h->hook_name = rd_str(r, m, "hookName");
    h->path = rd_str(r, m, "path");
    h->args = rd_strs(r, m, "args", &h->n_args);
    h->env = rd_strs(r, m, "env", &h->n_env);
    h->timeout = rd_int(r, m, "timeout", -1);
    h->kind = (dra_node_cdi_hook_kind)-1;
    for (size_t i = 0; h->hook_name && i < sizeof hook_names / sizeof *hook_names; i++)
        if (strcmp(h->hook_name, hook_names[i]) == 0)
            h->kind = (dra_node_cdi_hook_kind)i;
}

static void rd_mount(rd *r, const dra_doc *m, dra_node_cdi_mount *mt)
{
    static const char *const keys[] = {"hostPath", "containerPath", "options", "type", NULL};
    rd_known(r, m, keys);
    mt->host_path = rd_str(r, m, "hostPath");
    mt->container_path = rd_str(r, m, "containerPath");
    mt->options = rd_strs(r, m, "options", &mt->n_options);
    mt->type = rd_str(r, m, "type");
    if (mt->type && !mt->type[0])
        mt->type = NULL;
}

/* Fills a typed array of |n| items from the list at |key| with |fn|. */
#define RD_ITEMS(r, map, key, arr, cnt, fn)                                   \
    do {                                                                    \
        const dra_doc *l_ = rd_list((r), (map), (key));                     \
        size_t n_ = l_ ? l_->u.list.n : 0;                                  \
        (arr) = rd_array((r), n_, sizeof *(arr));                           \
        for (size_t i_ = 0; (arr) && i_ < n_; i_++) {                       \
            const dra_doc *it_ = rd_map((r), l_->u.list.items[i_], (key));  \
            if (it_)                                                        \
                fn((r), it_, &(arr)[i_]);                                   \
        }                                                                   \
        (cnt) = (arr) ? n_ : 0;                                             \
    } while (0)

static void rd_edits(rd *r, const dra_doc *m, dra_node_cdi_edits *e)
{
    static const char *const keys[] = {"env", "deviceNodes", "hooks", "mounts", "intelRdt",
                                       "additionalGids", "netDevices", NULL};
    const dra_doc *gids, *net;
    memset(e, 0, sizeof *e);
    if (!m)
        return;
    rd_known(r, m, keys);
    e->env = rd_strs(r, m, "env", &e->n_env);
    RD_ITEMS(r, m, "deviceNodes", e->device_nodes, e->n_device_nodes, rd_device_node);
    RD_ITEMS(r, m, "hooks", e->hooks, e->n_hooks, rd_hook);
    RD_ITEMS(r, m, "mounts", e->mounts, e->n_mounts, rd_mount);
    gids = rd_list(r, m, "additionalGids");
    if (gids && gids->u.list.n) {
        e->additional_gids = rd_array(r, gids->u.list.n, sizeof *e->additional_gids);
        for (size_t i = 0; e->additional_gids && i < gids->u.list.n; i++) {
            const dra_doc *g = gids->u.list.items[i];
            if (g->kind != DRA_DOC_INT || g->u.i < 0 || g->u.i > UINT32_MAX)
                rd_fail(r, DRA_EINVALID, g, "failed to unmarshal CDI Spec: additionalGids: expected uint32 values");
            else
                e->additional_gids[i] = g->u.i;
        }
        e->n_additional_gids = gids->u.list.n;
    }
    net = rd_list(r, m, "netDevices");
    e->n_net_devices = net ? net->u.list.n : 0;
    e->has_intel_rdt = rd_map(r, dra_doc_get(m, "intelRdt"), "intelRdt") != NULL;
}

static int edits_empty(const dra_node_cdi_edits *e)
{
    return !e->n_env && !e->n_device_nodes && !e->n_hooks && !e->n_mounts &&
           !e->n_additional_gids && !e->has_intel_rdt && !e->n_net_devices;
}

/* ---- validation (pkg/cdi container-edits.go, spec.go, version.go) --- */

static int env_ok(const char *const *env, size_t n, const char **bad)
{
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(env[i], '=');
        if (!eq || eq == env[i]) {
            *bad = env[i];
            return 0;
        }
    }
    return 1;
}

/* The CDI library's ContainerEdits.Validate; the message into |msg|. */
static int edits_valid(const dra_node_cdi_edits *e, char *msg, size_t size)
{
    const char *bad;
    if (!env_ok(e->env, e->n_env, &bad))
        return node_errf(msg, size, "invalid container edits: invalid environment variable \"%s\"", bad), 0;
    for (size_t i = 0; i < e->n_device_nodes; i++) {
        const dra_node_cdi_device_node *dn = &e->device_nodes[i];
        if (!dn->path || !dn->path[0])
            return node_errf(msg, size, "invalid (empty) device path"), 0;
        if (strlen(dn->type) > 1 || (dn->type[0] && !strchr("bcup", dn->type[0])))
            return node_errf(msg, size, "device \"%s\": invalid type \"%s\"", dn->path, dn->type), 0;
        if (dn->permissions && dn->permissions[0] && strcmp(dn->permissions, "none") != 0 &&
            strspn(dn->permissions, "rwm") != strlen(dn->permissions))
            return node_errf(msg, size, "device \"%s\": invalid permissions \"%s\"", dn->path,
                            dn->permissions),
                   0;
    }
    for (size_t i = 0; i < e->n_hooks; i++) {
        const dra_node_cdi_hook *h = &e->hooks[i];
        if ((int)h->kind < 0)
            return node_errf(msg, size, "invalid hook name \"%s\"", h->hook_name ? h->hook_name : ""), 0;
        if (!h->path || !h->path[0])
            return node_errf(msg, size, "invalid hook \"%s\" with empty path", h->hook_name), 0;
        if (!env_ok(h->env, h->n_env, &bad))
            return node_errf(msg, size, "invalid hook \"%s\": invalid environment variable \"%s\"",
                            h->hook_name, bad),
                   0;
    }
    for (size_t i = 0; i < e->n_mounts; i++) {
        if (!e->mounts[i].host_path || !e->mounts[i].host_path[0])
            return node_errf(msg, size, "invalid mount, empty host path"), 0;
        if (!e->mounts[i].container_path || !e->mounts[i].container_path[0])
            return node_errf(msg, size, "invalid mount, empty container path"), 0;
    }
    return 1;
}

/* Index in the CDI library's table (newest first) or -1. */
static int version_index(const char *v)
{
    static const char *const known[] = {"1.1.0", "1.0.0", "0.8.0", "0.7.0", "0.6.0",
                                        "0.5.0", "0.4.0", "0.3.0", "0.2.0", "0.1.0"};
    if (v[0] == 'v')
        v++;
    for (int i = 0; i < 10; i++)
        if (strcmp(v, known[i]) == 0)
            return i;
    return -1;
}

/* What the content needs (version.go's requiresV*), given whether the
 * raw document had annotations and intelRdt schemata. */
static const char *required_version(const dra_node_cdi_spec *s, int annotations, int rdt_v110)
{
    int v110 = rdt_v110, v070 = 0, v060 = annotations, v050 = 0, v040 = 0;
    if (s->class_ && strchr(s->class_, '.'))
        v060 = 1;
    for (size_t i = 0; i <= s->n_devices; i++) {
        const dra_node_cdi_edits *e = i < s->n_devices ? &s->devices[i].edits : &s->edits;
        const char *nm = i < s->n_devices ? s->devices[i].name : NULL;
        if (nm && nm[0] >= '0' && nm[0] <= '9')
            v050 = 1;
        v110 |= e->n_net_devices > 0;
        v070 |= e->has_intel_rdt || e->n_additional_gids > 0;
        for (size_t j = 0; j < e->n_device_nodes; j++)
            v050 |= e->device_nodes[j].host_path != NULL;
        for (size_t j = 0; j < e->n_mounts; j++)
            v040 |= e->mounts[j].type != NULL;
    }
    return v110 ? "1.1.0" : v070 ? "0.7.0" : v060 ? "0.6.0" : v050 ? "0.5.0" : v040 ? "0.4.0" : "0.3.0";
}

/* Annotations or intelRdt fields that only 1.1.0 knows anywhere in the
 * raw spec: the typed model does not keep them. */
static void raw_version_needs(const dra_doc *root, int *annotations, int *rdt110)
{
    const dra_doc *devs = dra_doc_get(root, "devices");
    const dra_doc *edits[2];
    *annotations = dra_doc_get(root, "annotations") != NULL;
    *rdt110 = 0;
    for (size_t i = 0; devs && devs->kind == DRA_DOC_LIST && i <= devs->u.list.n; i++) {
        const dra_doc *dev = i < devs->u.list.n ? devs->u.list.items[i] : NULL;
        edits[0] = dev ? dra_doc_get(dev, "containerEdits") : dra_doc_get(root, "containerEdits");
        if (dev && dra_doc_get(dev, "annotations"))
            *annotations = 1;
        edits[1] = dra_doc_get(edits[0], "intelRdt");
        if (dra_doc_get(edits[1], "schemata") || dra_doc_get(edits[1], "enableMonitoring"))
            *rdt110 = 1;
    }
}

static dra_err spec_validate(const dra_node_cdi_spec *s, const dra_doc *root, dra_diag *d)
{
    char msg[512];
    const char *p;
    int ann, rdt;
    const char *need;
    if (!s->cdi_version || version_index(s->cdi_version) < 0)
        return dra_diag_add(d, "", 0, 0, "invalid version \"%s\"", s->cdi_version ? s->cdi_version : ""),
               DRA_EINVALID;
    raw_version_needs(root, &ann, &rdt);
    need = required_version(s, ann, rdt);
    if (version_index(need) < version_index(s->cdi_version))
        return dra_diag_add(d, "", 0, 0, "the spec version must be at least v%s", need), DRA_EINVALID;
    if (!edits_valid(&s->edits, msg, sizeof msg))
        return dra_diag_add(d, "", 0, 0, "%s", msg), DRA_EINVALID;
    for (size_t i = 0; i < s->n_devices; i++) {
        const dra_node_cdi_device *dev = &s->devices[i];
        const char *nm = dev->name ? dev->name : "";
        if ((p = device_name_problem(nm, msg, sizeof msg)) != NULL)
            return dra_diag_add(d, "", 0, 0, "failed add device \"%s\": %s", nm, p), DRA_EINVALID;
        if (edits_empty(&dev->edits))
            return dra_diag_add(d, "", 0, 0, "failed add device \"%s\": invalid device, empty device edits", nm),
                   DRA_EINVALID;
        if (!edits_valid(&dev->edits, msg, sizeof msg))
            return dra_diag_add(d, "", 0, 0, "failed add device \"%s\": invalid device \"%s\": %s", nm, nm, msg),
                   DRA_EINVALID;
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->devices[j].name, nm) == 0)
                return dra_diag_add(d, "", 0, 0, "invalid spec, multiple device \"%s\"", nm), DRA_EINVALID;
    }
    if (s->n_devices == 0)
        return dra_diag_add(d, "", 0, 0, "invalid spec, no devices"), DRA_EINVALID;
    return DRA_OK;
}

static void rd_device(rd *r, const dra_doc *m, dra_node_cdi_device *dev)
{
    static const char *const keys[] = {"name", "annotations", "containerEdits", NULL};
    rd_known(r, m, keys);
    dev->name = rd_str(r, m, "name");
    rd_edits(r, rd_map(r, dra_doc_get(m, "containerEdits"), "containerEdits"), &dev->edits);
}

/* The kind's vendor and class, validated. */
static dra_err spec_kind(dra_arena *a, dra_node_cdi_spec *s, dra_diag *d)
{
    const char *slash = s->kind ? strchr(s->kind, '/') : NULL;
    if (!slash || slash == s->kind || !slash[1])
        return dra_diag_add(d, "", 0, 0, "invalid vendor/class \"%s\" in Spec", s->kind ? s->kind : ""),
               DRA_EINVALID;
    s->vendor = dra_arena_strndup(a, s->kind, (size_t)(slash - s->kind));
    s->class_ = dra_arena_strdup(a, slash + 1);
    if (!s->vendor || !s->class_)
        return DRA_ENOMEM;
    if (check_vendor_class(s->vendor, "vendor", s->kind, d) ||
        check_vendor_class(s->class_, "class", s->kind, d))
        return DRA_EINVALID;
    return DRA_OK;
}

dra_err dra_node_cdi_spec_parse(dra_arena *a, const char *text, size_t len,
                           int json, dra_node_cdi_spec **out, dra_diag *d)
{
    static const char *const keys[] = {"cdiVersion", "kind", "annotations", "devices",
                                       "containerEdits", NULL};
    dra_doc *root = NULL, **docs = NULL;
    size_t n = 0;
    dra_err e;
    rd r = {a, d, DRA_OK};
    dra_node_cdi_spec *s;
    *out = NULL;
    e = json ? dra_doc_parse_json(a, text, len, &root, d) : dra_doc_parse_yaml(a, text, len, &docs, &n, d);
    if (e)
        return e == DRA_ENOMEM ? e : DRA_EPARSE;
    if (!json)
        root = n ? docs[0] : NULL;
    if (!root || root->kind != DRA_DOC_MAP)
        return dra_diag_add(d, "", 0, 0, "failed to parse CDI Spec, no Spec data"), DRA_EINVALID;
    if (!(s = dra_arena_zalloc(a, sizeof *s)))
        return DRA_ENOMEM;
    rd_known(&r, root, keys);
    s->cdi_version = rd_str(&r, root, "cdiVersion");
    s->kind = rd_str(&r, root, "kind");
    RD_ITEMS(&r, root, "devices", s->devices, s->n_devices, rd_device);
    rd_edits(&r, rd_map(&r, dra_doc_get(root, "containerEdits"), "containerEdits"), &s->edits);
    if (r.err)
        return r.err;
    if ((e = spec_kind(a, s, d)) != DRA_OK || (e = spec_validate(s, root, d)) != DRA_OK)
        return e;
    *out = s;
    return DRA_OK;
}

/* ---- merging ---------------------------------------------------------- */

static dra_err grow_append(dra_arena *a, void **dst, size_t *n, const void *src, size_t m, size_t size)
{
    void *p;
    if (!m)
        return DRA_OK;
    if (!(p = dra_arena_array(a, *n + m, size)))
        return DRA_ENOMEM;
    if (*n)
        memcpy(p, *dst, *n * size);
    memcpy((char *)p + *n * size, src, m * size);
    *dst = p;
    *n += m;
    return DRA_OK;
}

dra_err cdi_edits_append(dra_arena *a, dra_node_cdi_edits *dst, const dra_node_cdi_edits *src)
{
    if (grow_append(a, (void **)&dst->env, &dst->n_env, src->env, src->n_env, sizeof *src->env) ||
        grow_append(a, (void **)&dst->device_nodes, &dst->n_device_nodes, src->device_nodes,
                    src->n_device_nodes, sizeof *src->device_nodes) ||
        grow_append(a, (void **)&dst->mounts, &dst->n_mounts, src->mounts, src->n_mounts,
                    sizeof *src->mounts) ||
        grow_append(a, (void **)&dst->hooks, &dst->n_hooks, src->hooks, src->n_hooks,
                    sizeof *src->hooks) ||
        grow_append(a, (void **)&dst->additional_gids, &dst->n_additional_gids, src->additional_gids,
                    src->n_additional_gids, sizeof *src->additional_gids))
        return DRA_ENOMEM;
    dst->n_net_devices += src->n_net_devices;
    dst->has_intel_rdt |= src->has_intel_rdt;
    return DRA_OK;
}

/* Number of '/' in the cleaned path (filepath.Clean, then Count). */
static size_t path_depth(const char *p)
{
    size_t n = 0;
    int prev_slash = 0;
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/')
        len--;
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '/' && !prev_slash)
            n++;
        prev_slash = p[i] == '/';
    }
    return n;
}

void cdi_edits_finish(dra_node_cdi_edits *e)
{
    size_t w = 0;
    /* containerd removes the earlier entry and appends the later one, so
     * the survivor keeps the later position. Same for mounts. */
    for (size_t i = 0; i < e->n_device_nodes; i++) {
        int later = 0;
        for (size_t j = i + 1; j < e->n_device_nodes && !later; j++)
            later = strcmp(e->device_nodes[i].path, e->device_nodes[j].path) == 0;
        if (!later)
            e->device_nodes[w++] = e->device_nodes[i];
    }
    e->n_device_nodes = w;
    w = 0;
    for (size_t i = 0; i < e->n_mounts; i++) {
        int later = 0;
        for (size_t j = i + 1; j < e->n_mounts && !later; j++)
            later = strcmp(e->mounts[i].container_path, e->mounts[j].container_path) == 0;
        if (!later)
            e->mounts[w++] = e->mounts[i];
    }
    e->n_mounts = w;
    /* Stable insertion sort by depth: mount lists are short. */
    for (size_t i = 1; i < e->n_mounts; i++) {
        dra_node_cdi_mount m = e->mounts[i];
        size_t dm = path_depth(m.container_path), j = i;
        while (j > 0 && path_depth(e->mounts[j - 1].container_path) > dm) {
            e->mounts[j] = e->mounts[j - 1];
            j--;
        }
        e->mounts[j] = m;
    }
}

/* ---- directories and resolution --------------------------------------- */

typedef struct found {
    const dra_node_cdi_spec *spec;
    const dra_node_cdi_device *dev;
    size_t prio;
    const char *path;
    int conflict;
} found;

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The spec file names of |dir| (sorted, in |a|); a missing directory
 * has none. */
static dra_err list_specs(dra_arena *a, const char *dir, char ***out, size_t *n)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    char **v = NULL;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (!dp)
        return DRA_OK;
    while ((de = readdir(dp)) != NULL) {
        if (de->d_type == DT_DIR || !(ends_with(de->d_name, ".yaml") || ends_with(de->d_name, ".json")))
            continue;
        if (*n == cap) {
            char **nv = dra_arena_array(a, cap * 2 + 8, sizeof *nv);
            if (!nv) {
                closedir(dp);
                return DRA_ENOMEM;
            }
            if (*n)
                memcpy(nv, v, *n * sizeof *v);
            v = nv;
            cap = cap * 2 + 8;
        }
        if (!(v[(*n)++] = dra_arena_sprintf(a, "%s/%s", dir, de->d_name))) {
            closedir(dp);
            return DRA_ENOMEM;
        }
    }
    closedir(dp);
    if (*n)
        qsort(v, *n, sizeof *v, cmp_str);
    *out = v;
    return DRA_OK;
}

static dra_err index_spec(dra_arena *a, dra_map *m, const dra_node_cdi_spec *s, size_t prio,
                          const char *path, dra_diag *errs)
{
    for (size_t i = 0; i < s->n_devices; i++) {
        char *q = dra_arena_sprintf(a, "%s=%s", s->kind, s->devices[i].name);
        found *f, *old;
        if (!q)
            return DRA_ENOMEM;
        old = dra_map_get(m, q, strlen(q));
        if (old && old->prio == prio) {
            dra_diag_add(errs, "", 0, 0, "conflicting device \"%s\" (specs \"%s\", \"%s\")", q, path,
                         old->path);
            old->conflict = 1;
            continue;
        }
        if (!(f = dra_arena_zalloc(a, sizeof *f)))
            return DRA_ENOMEM;
        *f = (found){s, &s->devices[i], prio, path, 0};
        if (dra_map_put(m, q, strlen(q), f))
            return DRA_ENOMEM;
    }
    return DRA_OK;
}

/* Loads every spec of every directory into |m| (qualified name ->
 * found); errors of individual files go to |errs|. */
static dra_err load_dirs(dra_arena *a, const char *const *dirs, size_t n_dirs, dra_map *m,
                         dra_diag *errs)
{
    for (size_t di = 0; di < n_dirs; di++) {
        char **files;
        size_t nf;
        dra_err e = list_specs(a, dirs[di], &files, &nf);
        if (e)
            return e;
        for (size_t i = 0; i < nf; i++) {
            char *text;
            size_t len;
            dra_node_cdi_spec *s;
            dra_diag one;
            if (node_read_file(a, files[i], DRA_DOC_MAX_BYTES, &text, &len) != 0) {
                dra_diag_add(errs, "", 0, 0, "failed to read CDI Spec \"%s\": %s", files[i], strerror(errno));
                continue;
            }
            dra_diag_init(&one, errs ? errs->mem : NULL);
            e = dra_node_cdi_spec_parse(a, text, len, ends_with(files[i], ".json"), &s, &one);
            if (e == DRA_ENOMEM) {
                dra_diag_fini(&one);
                return e;
            }
            if (e)
                dra_diag_add(errs, "", 0, 0, "failed to load CDI Spec %s: %s", files[i],
                             dra_diag_first(&one) ? dra_diag_first(&one) : dra_strerror(e));
            dra_diag_fini(&one);
            if (!e && (e = index_spec(a, m, s, di, files[i], errs)) != DRA_OK)
                return e;
        }
    }
    return DRA_OK;
}

static dra_err merge_ids(dra_arena *a, const dra_map *m, const char *const *ids, size_t n_ids,
                         dra_node_cdi_edits *out, dra_buf *unresolved)
{
    const dra_node_cdi_spec **seen = n_ids ? dra_arena_array(a, n_ids, sizeof *seen) : NULL;
    size_t n_seen = 0;
    if (n_ids && !seen)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n_ids; i++) {
        found *f = dra_map_get(m, ids[i], strlen(ids[i]));
        size_t j;
        for (j = 0; j < i && strcmp(ids[j], ids[i]) != 0; j++)
            ;
        if (j < i)
            continue; /* containerd de-duplicates the names first */
        if (!f || f->conflict) {
            dra_buf_printf(unresolved, "%s%s", unresolved->len ? ", " : "", ids[i]);
            continue;
        }
        for (j = 0; j < n_seen && seen[j] != f->spec; j++)
            ;
        if (j == n_seen) {
            seen[n_seen++] = f->spec;
            if (cdi_edits_append(a, out, &f->spec->edits))
                return DRA_ENOMEM;
        }
        if (cdi_edits_append(a, out, &f->dev->edits))
            return DRA_ENOMEM;
    }
    return unresolved->oom ? DRA_ENOMEM : DRA_OK;
}

dra_err dra_node_cdi_resolve(const char *const *dirs, size_t n_dirs,
                        const char *const *ids, size_t n_ids, dra_arena *a,
                        dra_node_cdi_edits *out, dra_diag *d)
{
    dra_map m;
    dra_diag errs;
    dra_buf unresolved;
    dra_err e = DRA_OK;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n_ids; i++)
        if ((e = dra_node_cdi_parse_name(ids[i], a, NULL, NULL, NULL, d)) != DRA_OK)
            return e;
    if (n_ids == 0)
        return DRA_OK;
    dra_map_init(&m, NULL);
    dra_diag_init(&errs, NULL);
    dra_buf_init(&unresolved, NULL);
    e = load_dirs(a, dirs, n_dirs, &m, &errs);
    if (!e)
        e = merge_ids(a, &m, ids, n_ids, out, &unresolved);
    if (!e && unresolved.len) {
        dra_diag_add(d, "", 0, 0, "unresolvable CDI devices %s", unresolved.p);
        for (size_t i = 0; i < errs.n; i++)
            dra_diag_add(d, "", 0, 0, "%s", errs.v[i].msg);
        e = DRA_ENOTFOUND;
    }
    if (!e)
        cdi_edits_finish(out);
    dra_buf_fini(&unresolved);
    dra_diag_fini(&errs);
    dra_map_fini(&m);
    return e;
}
