/*
 * plugin/checkpoint.c: <plugin dir>/checkpoint.json, what this node has
 * prepared, in the shape NVIDIA's plugin writes (v2.preparedClaims keyed
 * by claim UID, checkpointState PrepareStarted / PrepareCompleted, the
 * claim's status, preparedDevices grouped by configuration, the node's
 * boot id as on NVIDIA's main branch). The checksum is our own (FNV-1a
 * 32 of v2's compact JSON), not the kubelet checkpointmanager's, so the
 * file is not interchangeable with a Go plugin's. Each write replaces
 * the file atomically, its data synced before the rename but not the
 * directory after it: whatever a power loss leaves is a whole checkpoint,
 * old or new, and which one does not matter, since the loss means another
 * boot and another boot's claims are all discarded (the boot id). That
 * halves the syncs of a prepare (two checkpoint writes) on a disk.
 */
#include <stdio.h>
#include <string.h>

#include "plugin_int.h"

#define CP_MAX_BYTES ((size_t)64 << 20)

static uint32_t fnv32a(const char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 16777619u;
    }
    return h;
}

const char *plugin_cp_state_name(int state)
{
    return state == PLUGIN_CP_COMPLETED ? "PrepareCompleted"
           : state == PLUGIN_CP_STARTED ? "PrepareStarted"
                                        : "";
}

plugin_cp_claim *plugin_cp_find(plugin_cp *cp, const char *uid)
{
    for (size_t i = 0; i < cp->n; i++)
        if (strcmp(cp->claims[i].uid, uid) == 0)
            return &cp->claims[i];
    return NULL;
}

dra_err plugin_cp_put(plugin_cp *cp, dra_arena *a, const plugin_cp_claim *c)
{
    plugin_cp_claim *old = plugin_cp_find(cp, c->uid);
    if (old) {
        *old = *c;
        return DRA_OK;
    }
    if (cp->n == cp->cap) {
        size_t cap = cp->cap ? cp->cap * 2 : 8;
        plugin_cp_claim *v = dra_arena_array(a, cap, sizeof(*v));
        if (!v)
            return DRA_ENOMEM;
        if (cp->n)
            memcpy(v, cp->claims, cp->n * sizeof(*v));
        cp->claims = v;
        cp->cap = cap;
    }
    cp->claims[cp->n++] = *c;
    return DRA_OK;
}

int plugin_cp_del(plugin_cp *cp, const char *uid)
{
    for (size_t i = 0; i < cp->n; i++)
        if (strcmp(cp->claims[i].uid, uid) == 0) {
            memmove(&cp->claims[i], &cp->claims[i + 1],
                    (cp->n - i - 1) * sizeof(cp->claims[0]));
            cp->n--;
            return 1;
        }
    return 0;
}

/* ---- encode --------------------------------------------------------------------- */

static dra_doc *kd_doc(dra_docb *b, const plugin_cp_device *d)
{
    /* kubeletplugin.Device has no JSON tags: Go field names. */
    dra_doc *m = dra_docb_map(b);
    dra_docb_set(b, m, "Requests", dra_docb_strs(b, d->requests, d->n_requests));
    dra_docb_set_str(b, m, "PoolName", d->pool);
    dra_docb_set_str(b, m, "DeviceName", d->device);
    dra_docb_set(b, m, "CDIDeviceIDs", dra_docb_strs(b, d->cdi_ids, d->n_cdi_ids));
    return m;
}

static dra_doc *device_doc(dra_docb *b, const plugin_cp_device *d)
{
    dra_doc *m = dra_docb_map(b);
    dra_doc *inner = dra_docb_map(b);
    if (d->mig) {
        dra_doc *c = dra_docb_map(b);
        dra_docb_set(b, c, "parentMinor", dra_docb_int(b, d->parent_minor));
        dra_docb_set(b, c, "giId", dra_docb_int(b, d->gi));
        dra_docb_set(b, c, "ciId", dra_docb_int(b, d->ci));
        dra_docb_set_str(b, c, "migUUID", d->uuid);
        dra_docb_set_str(b, c, "parentUUID", d->parent_uuid);
        dra_docb_set(b, inner, "concrete", c);
        dra_docb_set(b, inner, "device", kd_doc(b, d));
        dra_docb_set(b, m, "gpu", dra_doc_new_null(b->a));
        dra_docb_set(b, m, "mig", inner);
    } else {
        dra_doc *info = dra_docb_map(b);
        dra_docb_set_str(b, info, "uuid", d->uuid);
        dra_docb_set(b, inner, "info", info);
        dra_docb_set(b, inner, "device", kd_doc(b, d));
        dra_docb_set(b, m, "gpu", inner);
        dra_docb_set(b, m, "mig", dra_doc_new_null(b->a));
    }
    return m;
}

static dra_doc *claim_doc(dra_docb *b, const plugin_cp_claim *c)
{
    dra_doc *m = dra_docb_map(b);
    dra_docb_set_str(b, m, "checkpointState", plugin_cp_state_name(c->state));
    dra_docb_set(b, m, "status", c->status ? c->status : dra_docb_map(b));
    if (c->state == PLUGIN_CP_COMPLETED) {
        dra_doc *groups = dra_docb_list(b);
        for (size_t g = 0; g < c->n_groups; g++) {
            const plugin_cp_group *grp = &c->groups[g];
            dra_doc *gm = dra_docb_map(b), *devs = dra_docb_list(b);
            for (size_t i = 0; i < grp->n_devices; i++)
                dra_docb_push(b, devs, device_doc(b, &grp->devices[i]));
            dra_doc *cs = dra_docb_map(b);
            dra_docb_set_str(b, cs, "mpsControlDaemonID", grp->mps_id);
            if (grp->timeslice)
                dra_docb_set(b, cs, "timeSlicing", dra_doc_new_bool(b->a, 1));
            dra_docb_set(b, gm, "devices", devs);
            dra_docb_set(b, gm, "configState", cs);
            dra_docb_push(b, groups, gm);
        }
        dra_docb_set(b, m, "preparedDevices", groups);
    }
    if (c->name && *c->name)
        dra_docb_set_str(b, m, "name", c->name);
    if (c->namespace_ && *c->namespace_)
        dra_docb_set_str(b, m, "namespace", c->namespace_);
    return m;
}

dra_err plugin_cp_encode(const plugin_cp *cp, dra_arena *a, dra_buf *out)
{
    dra_docb b = {a, 0};
    dra_doc *v2 = dra_docb_map(&b), *claims = dra_docb_map(&b);
    for (size_t i = 0; i < cp->n; i++)
        dra_docb_set(&b, claims, cp->claims[i].uid, claim_doc(&b, &cp->claims[i]));
    dra_docb_set(&b, v2, "preparedClaims", claims);
    if (cp->boot_id)
        dra_docb_set_str(&b, v2, "nodeBootID", cp->boot_id);
    if (b.oom)
        return DRA_ENOMEM;
    dra_buf v2json;
    dra_buf_init(&v2json, out->mem);
    dra_err e = dra_doc_to_json(v2, 0, &v2json);
    if (e == DRA_OK) {
        /* Trim the encoder's newline: the checksum covers the object. */
        while (v2json.len && v2json.p[v2json.len - 1] == '\n')
            v2json.p[--v2json.len] = '\0';
        dra_buf_printf(out, "{\"checksum\":%u,\"v2\":%s}\n", fnv32a(v2json.p, v2json.len),
                       v2json.p);
        e = out->oom ? DRA_ENOMEM : DRA_OK;
    }
    dra_buf_fini(&v2json);
    return e;
}

dra_err plugin_cp_write(const char *dir, const plugin_cp *cp, const dra_mem *mem, int sync,
                        dra_diag *d)
{
    dra_arena a;
    dra_arena_init(&a, mem);
    dra_buf out;
    dra_buf_init(&out, mem);
    dra_err e = plugin_cp_encode(cp, &a, &out);
    if (e == DRA_OK)
        e = plugin_write_atomic(dir, PLUGIN_CP_FILE, out.p, out.len, 0600,
                                sync ? PLUGIN_SYNC_DATA : PLUGIN_SYNC_NONE, d);
    dra_buf_fini(&out);
    dra_arena_fini(&a);
    return e;
}

/* ---- decode ---------------------------------------------------------------------- */

static const char *get_str(const dra_doc *m, const char *key)
{
    const dra_doc *v = dra_doc_get(m, key);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

static int64_t get_int(const dra_doc *m, const char *key)
{
    const dra_doc *v = dra_doc_get(m, key);
    return v && v->kind == DRA_DOC_INT ? v->u.i : 0;
}

static dra_err get_strs(dra_arena *a, const dra_doc *m, const char *key,
                        const char ***out, size_t *n)
{
    const dra_doc *l = dra_doc_get(m, key);
    *out = NULL;
    *n = 0;
    if (!l || l->kind != DRA_DOC_LIST)
        return DRA_OK;
    const char **v = dra_arena_array(a, l->u.list.n ? l->u.list.n : 1, sizeof(char *));
    if (!v)
        return DRA_ENOMEM;
    for (size_t i = 0; i < l->u.list.n; i++) {
        if (l->u.list.items[i]->kind != DRA_DOC_STRING)
            return DRA_EINVALID;
        v[i] = l->u.list.items[i]->u.str.s;
    }
    *out = v;
    *n = l->u.list.n;
    return DRA_OK;
}

static dra_err device_from(dra_arena *a, const dra_doc *m, plugin_cp_device *d)
{
    const dra_doc *gpu = dra_doc_get(m, "gpu"), *mig = dra_doc_get(m, "mig");
    const dra_doc *inner = NULL;
    memset(d, 0, sizeof(*d));
    if (mig && mig->kind == DRA_DOC_MAP) {
        const dra_doc *c = dra_doc_get(mig, "concrete");
        d->mig = 1;
        d->uuid = get_str(c, "migUUID");
        d->parent_uuid = get_str(c, "parentUUID");
        d->parent_minor = (unsigned)get_int(c, "parentMinor");
        d->gi = (unsigned)get_int(c, "giId");
        d->ci = (unsigned)get_int(c, "ciId");
        inner = mig;
    } else if (gpu && gpu->kind == DRA_DOC_MAP) {
        d->uuid = get_str(dra_doc_get(gpu, "info"), "uuid");
        inner = gpu;
    } else {
        return DRA_EINVALID;
    }
    const dra_doc *kd = dra_doc_get(inner, "device");
    d->pool = get_str(kd, "PoolName");
    d->device = get_str(kd, "DeviceName");
    if (!d->device || !d->pool)
        return DRA_EINVALID;
    dra_err e = get_strs(a, kd, "Requests", &d->requests, &d->n_requests);
    if (e == DRA_OK)
        e = get_strs(a, kd, "CDIDeviceIDs", &d->cdi_ids, &d->n_cdi_ids);
    return e;
}

static dra_err groups_from(dra_arena *a, const dra_doc *l, plugin_cp_claim *c)
{
    if (!l || l->kind != DRA_DOC_LIST)
        return l ? DRA_EINVALID : DRA_OK;
    c->n_groups = l->u.list.n;
    c->groups = dra_arena_array(a, c->n_groups ? c->n_groups : 1, sizeof(*c->groups));
    if (!c->groups)
        return DRA_ENOMEM;
    for (size_t g = 0; g < c->n_groups; g++) {
        const dra_doc *gm = l->u.list.items[g];
        const dra_doc *devs = dra_doc_get(gm, "devices");
        const dra_doc *cs = dra_doc_get(gm, "configState");
        plugin_cp_group *grp = &c->groups[g];
        grp->mps_id = get_str(cs, "mpsControlDaemonID");
        const dra_doc *ts = dra_doc_get(cs, "timeSlicing");
        grp->timeslice = ts && ts->kind == DRA_DOC_BOOL && ts->u.b;
        if (!devs || devs->kind != DRA_DOC_LIST)
            return DRA_EINVALID;
        grp->n_devices = devs->u.list.n;
        grp->devices = dra_arena_array(a, grp->n_devices ? grp->n_devices : 1,
                                       sizeof(*grp->devices));
        if (!grp->devices)
            return DRA_ENOMEM;
        for (size_t i = 0; i < grp->n_devices; i++) {
            dra_err e = device_from(a, devs->u.list.items[i], &grp->devices[i]);
            if (e != DRA_OK)
                return e;
        }
    }
    return DRA_OK;
}

static dra_err claim_from(dra_arena *a, const char *uid, const dra_doc *m,
                          plugin_cp_claim *c)
{
    memset(c, 0, sizeof(*c));
    c->uid = uid;
    const char *st = get_str(m, "checkpointState");
    if (st && strcmp(st, "PrepareCompleted") == 0)
        c->state = PLUGIN_CP_COMPLETED;
    else if (st && strcmp(st, "PrepareStarted") == 0)
        c->state = PLUGIN_CP_STARTED;
    else
        return DRA_EINVALID;
    c->name = get_str(m, "name");
    c->namespace_ = get_str(m, "namespace");
    c->status = (dra_doc *)dra_doc_get(m, "status");
    return groups_from(a, dra_doc_get(m, "preparedDevices"), c);
}

dra_err plugin_cp_decode(dra_arena *a, const char *text, size_t len, plugin_cp *cp,
                         dra_diag *d)
{
    memset(cp, 0, sizeof(*cp));
    dra_doc *root;
    dra_err e = dra_doc_parse_json(a, text, len, &root, d);
    if (e != DRA_OK)
        return e == DRA_ENOMEM ? e : DRA_EINVALID;
    const dra_doc *v2 = dra_doc_get(root, "v2");
    const dra_doc *sum = dra_doc_get(root, "checksum");
    if (!v2 || v2->kind != DRA_DOC_MAP || !sum || sum->kind != DRA_DOC_INT) {
        dra_diag_add(d, "", 0, 0, "checkpoint has no v2 section or checksum");
        return DRA_EINVALID;
    }
    dra_buf j;
    dra_buf_init(&j, a->mem);
    e = dra_doc_to_json(v2, 0, &j);
    while (e == DRA_OK && j.len && j.p[j.len - 1] == '\n')
        j.p[--j.len] = '\0';
    uint32_t want = e == DRA_OK ? fnv32a(j.p, j.len) : 0;
    dra_buf_fini(&j);
    if (e != DRA_OK)
        return e;
    if ((int64_t)want != sum->u.i) {
        dra_diag_add(d, "", 0, 0, "checkpoint is corrupted: checksum %lld, content %u",
                     (long long)sum->u.i, want);
        return DRA_EINVALID;
    }
    cp->boot_id = get_str(v2, "nodeBootID");
    const dra_doc *claims = dra_doc_get(v2, "preparedClaims");
    if (!claims || claims->kind != DRA_DOC_MAP)
        return DRA_OK;
    for (size_t i = 0; i < claims->u.map.n; i++) {
        plugin_cp_claim c;
        e = claim_from(a, claims->u.map.m[i].key, claims->u.map.m[i].val, &c);
        if (e == DRA_OK)
            e = plugin_cp_put(cp, a, &c);
        if (e != DRA_OK) {
            if (e == DRA_EINVALID)
                dra_diag_add(d, "", 0, 0, "checkpoint entry for claim %s is invalid",
                             claims->u.map.m[i].key);
            return e;
        }
    }
    return DRA_OK;
}

dra_err plugin_cp_read(const char *dir, dra_arena *a, plugin_cp *cp, dra_diag *d)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, PLUGIN_CP_FILE);
    dra_buf text;
    dra_buf_init(&text, a->mem);
    memset(cp, 0, sizeof(*cp));
    dra_err e = plugin_read_file(path, a->mem, &text, CP_MAX_BYTES, d);
    if (e == DRA_ENOTFOUND) {
        dra_buf_fini(&text);
        return DRA_OK; /* no checkpoint yet: nothing prepared */
    }
    if (e == DRA_OK) {
        /* The tree keeps pointers into its own arena copy of the text. */
        e = plugin_cp_decode(a, text.p ? text.p : "", text.len, cp, d);
        if (e == DRA_EINVALID || e == DRA_EPARSE)
            dra_diag_add(d, "", 0, 0, "in %s", path);
    }
    dra_buf_fini(&text);
    return e;
}
