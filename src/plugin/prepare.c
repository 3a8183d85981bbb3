/*
 * plugin/prepare.c: NodePrepareResources and NodeUnprepareResources for
 * driver gpu.nvidia.com, step by step as NVIDIA's device_state.go does:
 * read each claim from the API server (UID and allocation checked),
 * then per claim, under a per-claim lock: a completed claim answers its
 * stored devices; otherwise PrepareStarted goes to the checkpoint before
 * any side effect, configs are matched and applied, the CDI spec is
 * written, and PrepareCompleted goes to the checkpoint before the
 * answer. Different claims prepare concurrently; checkpoint updates are
 * serialised (a mutex in process, cp.lock across processes).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plugin_int.h"

#define LOCK_TIMEOUT_MS 10000
#define ERRCAP 2048

/* ---- per-claim locks ------------------------------------------------------------- */

static int busy_has(dra_plugin *p, const char *uid)
{
    for (size_t i = 0; i < p->n_busy; i++)
        if (strcmp(p->busy[i], uid) == 0)
            return 1;
    return 0;
}

/* Waits until no other call works on |uid|, then claims it. DRA_OK,
 * DRA_ETIMEOUT after LOCK_TIMEOUT_MS, DRA_ENOMEM. */
static dra_err claim_lock(dra_plugin *p, const char *uid)
{
    int64_t deadline = plugin_now_ms() + LOCK_TIMEOUT_MS;
    dra_err e = DRA_OK;
    pthread_mutex_lock(&p->mu);
    while (busy_has(p, uid)) {
        int64_t left = deadline - plugin_now_ms();
        if (left <= 0) {
            e = DRA_ETIMEOUT;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        dra_timespec_add_ms(&ts, left);
        pthread_cond_timedwait(&p->cond, &p->mu, &ts);
    }
    if (e == DRA_OK) {
        if (p->n_busy == p->cap_busy &&
            dra_grow(p->mem, (void **)&p->busy, &p->cap_busy, p->n_busy + 1,
                     sizeof(char *)) != DRA_OK)
            e = DRA_ENOMEM;
        else
            p->busy[p->n_busy++] = uid;
    }
    pthread_mutex_unlock(&p->mu);
    return e;
}

static void claim_unlock(dra_plugin *p, const char *uid)
{
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->n_busy; i++)
        if (p->busy[i] == uid) {
            p->busy[i] = p->busy[--p->n_busy];
            break;
        }
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
}

/* ---- checkpoint transactions ---------------------------------------------------- */

typedef dra_err (*cp_fn)(dra_plugin *p, plugin_cp *cp, dra_arena *a, void *ud, int *dirty);

/* Reads the checkpoint, lets |fn| look or change it, writes it back when
 * |fn| says it changed. The file lock makes this safe against another
 * plugin process (an upgrade overlapping the old one). */
static dra_err cp_txn(dra_plugin *p, cp_fn fn, void *ud, char *err, size_t cap)
{
    dra_diag d;
    dra_diag_init(&d, p->mem);
    dra_arena a;
    dra_arena_init(&a, p->mem);
    int fd = -1, dirty = 0;
    pthread_mutex_lock(&p->cp_mu);
    dra_err e = plugin_flock(p->cp_lock, LOCK_TIMEOUT_MS, &fd);
    if (e != DRA_OK) {
        snprintf(err, cap, "error acquiring cplock: %s", dra_strerror(e));
        goto out;
    }
    plugin_cp cp;
    e = plugin_cp_read(p->plugin_dir, &a, &cp, &d);
    if (e != DRA_OK) {
        snprintf(err, cap, "unable to get checkpoint: %s",
                 dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
        goto out;
    }
    e = fn(p, &cp, &a, ud, &dirty);
    if (e == DRA_OK && dirty) {
        cp.boot_id = p->boot_id;
        e = plugin_cp_write(p->plugin_dir, &cp, p->mem, p->checkpoint_sync, &d);
        if (e != DRA_OK)
            snprintf(err, cap, "unable to update checkpoint: %s",
                     dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
    }
out:
    plugin_funlock(fd);
    pthread_mutex_unlock(&p->cp_mu);
    dra_arena_fini(&a);
    dra_diag_fini(&d);
    return e;
}

/* ---- the prepare state machine ----------------------------------------------------- */

typedef struct prep {
    const dra_object *claim; /* decoded, for the allocation */
    const dra_doc *status;   /* the claim's status document */
    const char *uid;
    dra_arena *a; /* the call's arena: results live here */
    dra_plugin_claim_result *r;
    /* what the started step found */
    int completed;
    plugin_cp_claim stored; /* copied into |a| when completed */
    int started; /* a previous PrepareStarted was found: roll back */
    /* what prepare produced */
    plugin_cp_group *groups;
    size_t n_groups;
    char err[ERRCAP];
} prep;

static const char **strs_copy(dra_arena *a, const char *const *v, size_t n)
{
    const char **c = dra_arena_array(a, n ? n : 1, sizeof(char *));
    for (size_t i = 0; c && i < n; i++)
        if (!(c[i] = dra_arena_strdup(a, v[i])))
            return NULL;
    return c;
}

/* "req/sub" -> "req": the kubelet gets request names without the
 * subrequest (kubeletplugin stripSubrequestNames). */
static const char *base_request(dra_arena *a, const char *r)
{
    const char *slash = strchr(r, '/');
    return slash ? dra_arena_strndup(a, r, (size_t)(slash - r)) : dra_arena_strdup(a, r);
}

/* Fills the response from prepared groups (copying into |a|). */
static dra_err result_from_groups(dra_arena *a, const plugin_cp_group *g, size_t ng,
                                  dra_plugin_claim_result *r)
{
    size_t n = 0;
    for (size_t i = 0; i < ng; i++)
        n += g[i].n_devices;
    r->devices = dra_arena_array(a, n ? n : 1, sizeof(*r->devices));
    if (!r->devices)
        return DRA_ENOMEM;
    r->n_devices = 0;
    for (size_t i = 0; i < ng; i++)
        for (size_t j = 0; j < g[i].n_devices; j++) {
            const plugin_cp_device *cd = &g[i].devices[j];
            dra_plugin_device *d = &r->devices[r->n_devices++];
            d->n_request_names = cd->n_requests;
            d->request_names = dra_arena_array(a, cd->n_requests ? cd->n_requests : 1,
                                               sizeof(char *));
            for (size_t k = 0; d->request_names && k < cd->n_requests; k++)
                d->request_names[k] = base_request(a, cd->requests[k]);
            d->pool_name = dra_arena_strdup(a, cd->pool);
            d->device_name = dra_arena_strdup(a, cd->device);
            d->cdi_device_ids = strs_copy(a, cd->cdi_ids, cd->n_cdi_ids);
            d->n_cdi_device_ids = cd->n_cdi_ids;
            if (!d->request_names || !d->pool_name || !d->device_name || !d->cdi_device_ids)
                return DRA_ENOMEM;
        }
    return DRA_OK;
}

/* Non-admin results for this driver: the devices a claim holds alone. */
static int holds_device(const dra_doc *status, const char *device)
{
    const dra_doc *res = dra_doc_get(dra_doc_get(dra_doc_get(status, "allocation"), "devices"),
                                     "results");
    if (!res || res->kind != DRA_DOC_LIST)
        return 0;
    for (size_t i = 0; i < res->u.list.n; i++) {
        const dra_doc *r = res->u.list.items[i];
        const dra_doc *drv = dra_doc_get(r, "driver"), *dev = dra_doc_get(r, "device");
        const dra_doc *admin = dra_doc_get(r, "adminAccess");
        if (admin && admin->kind == DRA_DOC_BOOL && admin->u.b)
            continue;
        if (drv && drv->kind == DRA_DOC_STRING && strcmp(drv->u.str.s, DRA_PLUGIN_DRIVER) == 0 &&
            dev && dev->kind == DRA_DOC_STRING && strcmp(dev->u.str.s, device) == 0)
            return 1;
    }
    return 0;
}

/* validateNoOverlappingPreparedDevices, extended to claims that are being
 * prepared right now in this process (NVIDIA serialises all prepares
 * instead; here different claims run concurrently). */
static int overlap(dra_plugin *p, plugin_cp *cp, prep *x)
{
    const dra_allocation_result *al = x->claim->u.claim.status.allocation;
    for (size_t i = 0; i < al->n_results; i++) {
        const dra_device_result *r = &al->results[i];
        if (!r->driver || strcmp(r->driver, DRA_PLUGIN_DRIVER) != 0 ||
            DRA_TRI_IS_TRUE(r->admin_access))
            continue;
        for (size_t j = 0; j < cp->n; j++) {
            const plugin_cp_claim *o = &cp->claims[j];
            if (strcmp(o->uid, x->uid) == 0)
                continue;
            int live = o->state == PLUGIN_CP_COMPLETED;
            if (!live) {
                pthread_mutex_lock(&p->mu);
                live = busy_has(p, o->uid);
                pthread_mutex_unlock(&p->mu);
            }
            if (live && holds_device(o->status, r->device)) {
                snprintf(x->err, sizeof(x->err),
                         "unable to prepare claim %s: requested device %s is already "
                         "allocated to different claim %s",
                         x->uid, r->device, o->uid);
                return 1;
            }
        }
    }
    return 0;
}

static dra_err copy_stored(dra_arena *a, const plugin_cp_claim *c, prep *x)
{
    /* The checkpoint's arena dies with the transaction: answer now. */
    return result_from_groups(a, c->groups, c->n_groups, x->r);
}

/* Records |x| in the checkpoint in |state| (a completed claim with its
 * prepared groups) and marks the checkpoint dirty. */
static dra_err put_claim(plugin_cp *cp, dra_arena *a, const prep *x, int state, int *dirty)
{
    plugin_cp_claim n;
    memset(&n, 0, sizeof(n));
    n.uid = x->uid;
    n.state = state;
    n.status = (dra_doc *)x->status;
    n.name = x->claim->meta.name;
    n.namespace_ = x->claim->meta.namespace_;
    if (state == PLUGIN_CP_COMPLETED) {
        n.groups = x->groups;
        n.n_groups = x->n_groups;
    }
    *dirty = 1;
    return plugin_cp_put(cp, a, &n);
}

static dra_err step_start(dra_plugin *p, plugin_cp *cp, dra_arena *a, void *ud, int *dirty)
{
    prep *x = ud;
    plugin_cp_claim *c = plugin_cp_find(cp, x->uid);
    if (c && c->state == PLUGIN_CP_COMPLETED) {
        x->completed = 1;
        return copy_stored(x->a, c, x);
    }
    if (overlap(p, cp, x))
        return DRA_ECONFLICT;
    x->started = c != NULL;
    return put_claim(cp, a, x, PLUGIN_CP_STARTED, dirty);
}

static dra_err step_complete(dra_plugin *p, plugin_cp *cp, dra_arena *a, void *ud, int *dirty)
{
    (void)p;
    prep *x = ud;
    return put_claim(cp, a, x, PLUGIN_CP_COMPLETED, dirty);
}

static dra_err step_forget(dra_plugin *p, plugin_cp *cp, dra_arena *a, void *ud, int *dirty)
{
    (void)p;
    (void)a;
    *dirty = plugin_cp_del(cp, (const char *)ud);
    return DRA_OK;
}

/* Undoes whatever a prepare that did not complete may have left: its CDI
 * file and MPS daemons. Time-slicing settings are left as they are (the
 * GPU's default is what the next claim sets anyway). */
static void rollback(dra_plugin *p, const char *uid)
{
    plugin_cdi_remove(p->o.cdi_root, uid, NULL);
    plugin_mps_stop_claim(p, uid);
}

/* ---- prepareDevices --------------------------------------------------------------- */

typedef struct pgroup {
    int cfg;                /* index into the configs */
    size_t *results;        /* indices into the allocation's results */
    size_t n;
} pgroup;

static const char *fmt_requests(dra_arena *a, const dra_allocation_result *al,
                                const pgroup *g)
{
    dra_buf b;
    dra_buf_init(&b, a->mem);
    dra_buf_putc(&b, '[');
    for (size_t i = 0; i < g->n; i++)
        dra_buf_printf(&b, "%s%s", i ? " " : "", al->results[g->results[i]].request);
    dra_buf_putc(&b, ']');
    const char *s = dra_arena_strdup(a, b.p ? b.p : "[]");
    dra_buf_fini(&b);
    return s;
}

/* Looks each result up among the announced devices and groups results by
 * the config that applies to them. */
static dra_err group_results(dra_plugin *p, prep *x, const plugin_cfg *cfgs, size_t n_cfg,
                             pgroup **out, size_t *n_out, plugin_devstate ***devs)
{
    const dra_allocation_result *al = x->claim->u.claim.status.allocation;
    pgroup *g = dra_arena_array(x->a, al->n_results + 1, sizeof(*g));
    *devs = dra_arena_array(x->a, al->n_results + 1, sizeof(plugin_devstate *));
    if (!g || !*devs)
        return DRA_ENOMEM;
    size_t ng = 0;
    char why[ERRCAP / 2];
    for (size_t i = 0; i < al->n_results; i++) {
        const dra_device_result *r = &al->results[i];
        if (!r->driver || strcmp(r->driver, DRA_PLUGIN_DRIVER) != 0)
            continue;
        plugin_devstate *dev = plugin_dev_find(p, r->device ? r->device : "");
        if (!dev) {
            snprintf(x->err, sizeof(x->err), "requested device is not allocatable: %s",
                     r->device ? r->device : "");
            return DRA_EINVAL;
        }
        if (!r->pool || strcmp(r->pool, p->o.node_name) != 0) {
            snprintf(x->err, sizeof(x->err),
                     "requested device is not allocatable: %s is in pool %s, this node's "
                     "pool is %s", r->device, r->pool ? r->pool : "", p->o.node_name);
            return DRA_EINVAL;
        }
        pthread_mutex_lock(&p->mu);
        int sick = 0;
        for (int t = 0; t < dev->n_taints; t++)
            if (strcmp(dev->taints[t].effect, "NoSchedule") == 0)
                sick = 1;
        pthread_mutex_unlock(&p->mu);
        if (sick) {
            snprintf(x->err, sizeof(x->err), "requested device is not healthy: %s", r->device);
            return DRA_EINVAL;
        }
        (*devs)[i] = dev;
        int c = plugin_cfg_match(cfgs, n_cfg, r->request ? r->request : "", dev->kind, why,
                                 sizeof(why));
        if (c < 0) {
            snprintf(x->err, sizeof(x->err), "%s", why);
            return DRA_EINVAL;
        }
        size_t k = 0;
        while (k < ng && g[k].cfg != c)
            k++;
        if (k == ng) {
            g[ng].cfg = c;
            g[ng].results = dra_arena_array(x->a, al->n_results, sizeof(size_t));
            if (!g[ng++].results)
                return DRA_ENOMEM;
        }
        g[k].results[g[k].n++] = i;
    }
    *out = g;
    *n_out = ng;
    return DRA_OK;
}

/* TimeSlicing on the group's full GPUs (NVIDIA's SetTimeSlice). */
static dra_err apply_ts(dra_plugin *p, prep *x, const plugin_cfg *c, const char *requests,
                        const char **gpus, size_t ngpu, plugin_cp_group *cg)
{
    char why[ERRCAP / 2];
    if (c->mps_set) {
        snprintf(x->err, sizeof(x->err),
                 "error getting timeslice config for requests '%s' in claim '%s': cannot "
                 "use MpsConfig with the 'TimeSlicing' strategy",
                 requests, x->uid);
        return DRA_EINVAL;
    }
    if (!c->ts_set || ngpu == 0)
        return DRA_OK;
    if (plugin_ts_set(p, gpus, ngpu, plugin_cfg_interval(c->interval), why, sizeof(why)) !=
        DRA_OK) {
        snprintf(x->err, sizeof(x->err),
                 "error setting timeslice config for requests '%s' in claim '%s': %s", requests,
                 x->uid, why);
        return DRA_EIO;
    }
    cg->timeslice = 1;
    return DRA_OK;
}

/* MPS for the group: one control daemon, edits for each device. */
static dra_err apply_mps(dra_plugin *p, prep *x, plugin_cfg *c, const char **uuids, size_t nu,
                         const char **gpus, size_t ngpu, plugin_cp_group *cg,
                         plugin_edits **edits)
{
    char why[ERRCAP / 2];
    if (p->o.gates.dynamic_mig) {
        snprintf(x->err, sizeof(x->err),
                 "MPS is not yet supported when using featureGates.DynamicMIG=true");
        return DRA_EUNSUPPORTED;
    }
    if (c->kind == PLUGIN_CFG_GPU && c->ts_set) {
        snprintf(x->err, sizeof(x->err), "error getting MPS configuration: cannot use "
                                         "TimeSlicingConfig with the 'MPS' strategy");
        return DRA_EINVAL;
    }
    dra_err e = plugin_mps_start(p, x->a, x->uid, uuids, nu, gpus, ngpu,
                                 c->mps_set ? &c->mps : NULL, &cg->mps_id, edits, why,
                                 sizeof(why));
    if (e != DRA_OK)
        snprintf(x->err, sizeof(x->err), "%s", why);
    return e;
}

/* Normalize, Validate and apply one group's config; fills its
 * checkpoint group's config state and the edits its devices get. */
static dra_err apply_group(dra_plugin *p, prep *x, plugin_cfg *c, const pgroup *g,
                           plugin_devstate **devs, plugin_cp_group *cg,
                           plugin_edits **edits)
{
    const dra_allocation_result *al = x->claim->u.claim.status.allocation;
    const dra_plugin_gates *gates = &p->o.gates;
    char why[ERRCAP / 2];
    *edits = NULL;
    if (c->kind == PLUGIN_CFG_OTHER) {
        snprintf(x->err, sizeof(x->err), "runtime object is not a recognized configuration");
        return DRA_EINVAL;
    }
    plugin_cfg_normalize(c, gates);
    if (plugin_cfg_validate(c, gates, why, sizeof(why)) != DRA_OK) {
        snprintf(x->err, sizeof(x->err), "error validating GPU config: %s", why);
        return DRA_EINVAL;
    }
    const char **uuids = dra_arena_array(x->a, g->n + 1, sizeof(char *));
    const char **gpus = dra_arena_array(x->a, g->n + 1, sizeof(char *));
    if (!uuids || !gpus)
        return DRA_ENOMEM;
    size_t nu = 0, ngpu = 0;
    for (size_t i = 0; i < g->n; i++) {
        const plugin_devstate *d = devs[g->results[i]];
        uuids[nu++] = d->mig ? d->mig->uuid : d->gpu->uuid;
        if (!d->mig)
            gpus[ngpu++] = d->gpu->uuid;
    }
    int ts = c->has_sharing && strcmp(c->strategy, "TimeSlicing") == 0;
    int mps = c->has_sharing && strcmp(c->strategy, "MPS") == 0;
    dra_err e = DRA_OK;
    if (gates->time_slicing_settings && ts && c->kind == PLUGIN_CFG_GPU)
        e = apply_ts(p, x, c, fmt_requests(x->a, al, g), gpus, ngpu, cg);
    if (e == DRA_OK && gates->mps_support && mps)
        e = apply_mps(p, x, c, uuids, nu, gpus, ngpu, cg, edits);
    return e;
}

static dra_err fill_group(dra_plugin *p, prep *x, const pgroup *g, plugin_devstate **devs,
                          plugin_cp_group *cg)
{
    const dra_allocation_result *al = x->claim->u.claim.status.allocation;
    cg->devices = dra_arena_array(x->a, g->n, sizeof(*cg->devices));
    if (!cg->devices)
        return DRA_ENOMEM;
    cg->n_devices = g->n;
    for (size_t i = 0; i < g->n; i++) {
        const dra_device_result *r = &al->results[g->results[i]];
        const plugin_devstate *d = devs[g->results[i]];
        plugin_cp_device *cd = &cg->devices[i];
        memset(cd, 0, sizeof(*cd));
        cd->mig = d->mig != NULL;
        cd->uuid = d->mig ? d->mig->uuid : d->gpu->uuid;
        if (d->mig) {
            cd->parent_uuid = d->gpu->uuid;
            cd->parent_minor = d->gpu->minor;
            cd->gi = d->mig->gi_id;
            cd->ci = d->mig->ci_id;
        }
        const char **req = dra_arena_array(x->a, 1, sizeof(char *));
        const char **ids = dra_arena_array(x->a, 1, sizeof(char *));
        if (!req || !ids)
            return DRA_ENOMEM;
        req[0] = r->request;
        ids[0] = dra_arena_sprintf(x->a, "%s=%s-%s", PLUGIN_CDI_KIND, x->uid, r->device);
        cd->requests = req;
        cd->n_requests = 1;
        cd->pool = r->pool;
        cd->device = r->device;
        cd->cdi_ids = ids;
        cd->n_cdi_ids = 1;
        if (!ids[0])
            return DRA_ENOMEM;
    }
    (void)p;
    return DRA_OK;
}

/* The claim's CDI spec from the prepared groups. */
static dra_err write_cdi(dra_plugin *p, prep *x, const pgroup *groups, size_t ng,
                         plugin_devstate **devs, plugin_edits **edits, size_t n_dev)
{
    dra_err e;
    plugin_cdi_dev *cdevs = dra_arena_array(x->a, n_dev ? n_dev : 1, sizeof(*cdevs));
    if (!cdevs)
        return DRA_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < ng; i++)
        for (size_t j = 0; j < groups[i].n; j++) {
            const plugin_devstate *d = devs[groups[i].results[j]];
            cdevs[k].device = d->name;
            cdevs[k].gpu = d->gpu;
            cdevs[k].mig = d->mig;
            cdevs[k++].extra = edits[i];
        }
    if (n_dev == 0)
        return DRA_OK; /* nothing of ours in this claim: no CDI spec */
    dra_doc *spec;
    e = plugin_cdi_build(x->a, &p->cdi, x->uid, cdevs, n_dev, &spec);
    if (e == DRA_ENOTFOUND) {
        snprintf(x->err, sizeof(x->err),
                 "unable to create CDI spec file for claim: failed to construct MIG device "
                 "DeviceNode edits: capability device numbers unknown (no "
                 "/proc/driver/nvidia/capabilities entry or nvidia-caps in /proc/devices)");
        return e;
    }
    if (e != DRA_OK)
        return e;
    dra_diag d;
    dra_diag_init(&d, p->mem);
    /* Not fsync'ed, like the CDI library's own writer: the rename makes it
     * atomic for readers and for a crash of this process; after a power
     * loss the boot id discards every prepared claim anyway, and
     * /var/run/cdi is usually a tmpfs. The checkpoint is fsync'ed. */
    e = plugin_cdi_write(p->o.cdi_root, x->uid, spec, p->mem, 0, &d);
    if (e != DRA_OK)
        snprintf(x->err, sizeof(x->err), "unable to create CDI spec file for claim: %s",
                 dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
    dra_diag_fini(&d);
    return e;
}

/* Everything between PrepareStarted and PrepareCompleted. */
static dra_err prepare_devices(dra_plugin *p, prep *x)
{
    const dra_allocation_result *al = x->claim->u.claim.status.allocation;
    plugin_cfg *cfgs;
    size_t n_cfg, ng;
    char why[ERRCAP / 2];
    dra_err e = plugin_cfg_collect(x->a, al, &p->o.gates, &cfgs, &n_cfg, why, sizeof(why));
    if (e != DRA_OK) {
        snprintf(x->err, sizeof(x->err), "%s", why);
        return e;
    }
    pgroup *groups;
    plugin_devstate **devs;
    if ((e = group_results(p, x, cfgs, n_cfg, &groups, &ng, &devs)) != DRA_OK)
        return e;
    x->groups = dra_arena_array(x->a, ng ? ng : 1, sizeof(*x->groups));
    plugin_edits **edits = dra_arena_array(x->a, ng ? ng : 1, sizeof(plugin_edits *));
    if (!x->groups || !edits)
        return DRA_ENOMEM;
    x->n_groups = ng;
    size_t n_dev = 0;
    for (size_t i = 0; i < ng; i++) {
        e = apply_group(p, x, &cfgs[groups[i].cfg], &groups[i], devs, &x->groups[i],
                        &edits[i]);
        if (e == DRA_OK)
            e = fill_group(p, x, &groups[i], devs, &x->groups[i]);
        if (e != DRA_OK)
            return e;
        n_dev += groups[i].n;
    }
    return write_cdi(p, x, groups, ng, devs, edits, n_dev);
}

static const char *claim_string(dra_arena *a, const dra_object *c)
{
    return dra_arena_sprintf(a, "%s/%s:%s", c->meta.namespace_ ? c->meta.namespace_ : "",
                             c->meta.name ? c->meta.name : "", c->meta.uid ? c->meta.uid : "");
}

static void fail(prep *x, const char *fmt, const char *inner)
{
    x->r->error = dra_arena_sprintf(x->a, fmt, claim_string(x->a, x->claim), inner);
    if (!x->r->error)
        x->r->error = "out of memory";
    x->r->n_devices = 0;
}

static void prepare_locked(dra_plugin *p, prep *x)
{
    char err[ERRCAP];
    dra_err e = cp_txn(p, step_start, x, err, sizeof(err));
    if (e == DRA_ECONFLICT) {
        fail(x, "error preparing devices for claim %s: %s", x->err);
        return;
    }
    if (e != DRA_OK) {
        fail(x, "error preparing devices for claim %s: %s", err);
        return;
    }
    if (x->completed)
        return;
    if (x->started)
        rollback(p, x->uid);
    e = prepare_devices(p, x);
    if (e != DRA_OK) {
        if (!x->err[0])
            snprintf(x->err, sizeof(x->err), "%s", dra_strerror(e));
        fail(x, "error preparing devices for claim %s: prepare devices failed: %s", x->err);
        /* Nothing of this attempt stays: undo, then forget the entry. */
        rollback(p, x->uid);
        (void)cp_txn(p, step_forget, (void *)x->uid, err, sizeof(err));
        return;
    }
    /* Fault injection (tests): a window in which the CDI spec exists
     * and the checkpoint still says PrepareStarted. */
    if (p->o.prepare_delay_ms > 0)
        usleep((useconds_t)p->o.prepare_delay_ms * 1000);
    e = cp_txn(p, step_complete, x, err, sizeof(err));
    if (e == DRA_OK)
        e = result_from_groups(x->a, x->groups, x->n_groups, x->r);
    if (e != DRA_OK)
        fail(x, "error preparing devices for claim %s: %s", err[0] ? err : dra_strerror(e));
}

void plugin_prepare_doc(dra_plugin *p, const dra_doc *doc, dra_arena *a,
                        dra_plugin_claim_result *r)
{
    prep *x = dra_arena_zalloc(a, sizeof(*x));
    dra_object *obj = NULL;
    memset(r, 0, sizeof(*r));
    r->uid = dra_obj_uid(doc) ? dra_obj_uid(doc) : "";
    if (!x) {
        r->error = "out of memory";
        return;
    }
    if (dra_api_decode(a, doc, &obj, NULL) == DRA_ENOMEM || !obj ||
        obj->kind != DRA_KIND_RESOURCE_CLAIM) {
        r->error = "error preparing devices: the API server's answer is not a ResourceClaim";
        return;
    }
    x->claim = obj;
    x->status = dra_doc_get(doc, "status");
    x->uid = r->uid;
    x->a = a;
    x->r = r;
    if (!obj->u.claim.status.allocation) {
        fail(x, "error preparing devices for claim %s: %s", "claim not yet allocated");
        return;
    }
    if (!plugin_cdi_name_ok(x->uid) || strlen(x->uid) > 128) {
        fail(x, "error preparing devices for claim %s: %s",
             "the claim UID cannot name a CDI device");
        return;
    }
    dra_err e = claim_lock(p, x->uid);
    if (e != DRA_OK) {
        fail(x, "error preparing devices for claim %s: %s",
             e == DRA_ETIMEOUT ? "error acquiring prep/unprep lock: timeout"
                               : dra_strerror(e));
        return;
    }
    prepare_locked(p, x);
    claim_unlock(p, x->uid);
}

/* kubeletplugin's getResourceClaims: every claim is read before any is
 * prepared; a claim that cannot be read, is not allocated or was
 * replaced fails the whole call. */
static dra_err read_claims(dra_plugin *p, const dra_plugin_claim_ref *claims, size_t n,
                           dra_arena *a, dra_doc **docs, char *err, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        const dra_plugin_claim_ref *c = &claims[i];
        dra_kstatus st;
        memset(&st, 0, sizeof(st));
        dra_err e = p->o.cluster ? dra_cluster_get(p->o.cluster, &DRA_GVR_CLAIMS, c->namespace_,
                                                   c->name, a, &docs[i], &st)
                                 : DRA_EUNAVAILABLE;
        if (e != DRA_OK) {
            snprintf(err, cap, "get resource claims: retrieve claim %s/%s: %s",
                     c->namespace_, c->name,
                     !p->o.cluster ? "no API server configured"
                     : st.message[0] ? st.message
                                     : dra_strerror(e));
            return e;
        }
        const dra_doc *alloc = dra_doc_get(dra_doc_get(docs[i], "status"), "allocation");
        if (!alloc || alloc->kind == DRA_DOC_NULL) {
            snprintf(err, cap, "get resource claims: claim %s/%s not allocated", c->namespace_,
                     c->name);
            return DRA_EINVAL;
        }
        const char *uid = dra_obj_uid(docs[i]);
        if (!uid || strcmp(uid, c->uid) != 0) {
            snprintf(err, cap, "get resource claims: claim %s/%s got replaced", c->namespace_,
                     c->name);
            return DRA_EINVAL;
        }
    }
    return DRA_OK;
}

dra_err plugin_prepare(dra_plugin *p, const dra_plugin_claim_ref *claims, size_t n,
                       dra_arena *a, dra_plugin_claim_result **out, char *err, size_t cap)
{
    dra_doc **docs = dra_arena_array(a, n ? n : 1, sizeof(dra_doc *));
    dra_plugin_claim_result *res = dra_arena_array(a, n ? n : 1, sizeof(*res));
    *out = NULL;
    if (!docs || !res)
        return DRA_ENOMEM;
    dra_err e = read_claims(p, claims, n, a, docs, err, cap);
    if (e != DRA_OK)
        return e;
    for (size_t i = 0; i < n; i++) {
        plugin_prepare_doc(p, docs[i], a, &res[i]);
        /* Answer under the UID the kubelet asked for (it is the same). */
        res[i].uid = claims[i].uid;
    }
    *out = res;
    return DRA_OK;
}

/* ---- unprepare ---------------------------------------------------------------------- */

typedef struct unprep {
    const char *uid;
    int found, state;
    plugin_cp_group *groups;
    size_t n_groups;
    dra_arena *a;
} unprep;

static dra_err step_look(dra_plugin *p, plugin_cp *cp, dra_arena *a, void *ud, int *dirty)
{
    (void)p;
    (void)a;
    (void)dirty;
    unprep *u = ud;
    plugin_cp_claim *c = plugin_cp_find(cp, u->uid);
    if (!c)
        return DRA_OK;
    u->found = 1;
    u->state = c->state;
    /* Keep what teardown needs beyond the transaction. */
    u->groups = dra_arena_array(u->a, c->n_groups ? c->n_groups : 1, sizeof(*u->groups));
    if (!u->groups)
        return DRA_ENOMEM;
    u->n_groups = c->n_groups;
    for (size_t g = 0; g < c->n_groups; g++) {
        plugin_cp_group *dst = &u->groups[g];
        const plugin_cp_group *src = &c->groups[g];
        dst->mps_id = src->mps_id ? dra_arena_strdup(u->a, src->mps_id) : NULL;
        dst->timeslice = src->timeslice;
        dst->devices = dra_arena_array(u->a, src->n_devices ? src->n_devices : 1,
                                       sizeof(*dst->devices));
        if (!dst->devices)
            return DRA_ENOMEM;
        dst->n_devices = src->n_devices;
        for (size_t i = 0; i < src->n_devices; i++) {
            dst->devices[i] = src->devices[i];
            dst->devices[i].uuid = dra_arena_strdup(u->a, src->devices[i].uuid
                                                              ? src->devices[i].uuid
                                                              : "");
        }
    }
    return DRA_OK;
}

static const char *unprepare_one(dra_plugin *p, const dra_plugin_claim_ref *c, dra_arena *a)
{
    char err[ERRCAP];
    const char *ref = dra_arena_sprintf(a, "%s/%s:%s", c->namespace_, c->name, c->uid);
    if (!c->uid || !*c->uid)
        return dra_arena_sprintf(a, "error unpreparing devices for claim %s: empty claim UID",
                                 ref);
    if (claim_lock(p, c->uid) != DRA_OK)
        return "error acquiring prep/unprep lock: timeout";
    unprep u;
    memset(&u, 0, sizeof(u));
    u.uid = c->uid;
    u.a = a;
    const char *msg = NULL;
    dra_err e = cp_txn(p, step_look, &u, err, sizeof(err));
    if (e != DRA_OK) {
        msg = dra_arena_sprintf(a, "error unpreparing devices for claim %s: %s", ref, err);
    } else if (u.found) {
        for (size_t g = 0; g < u.n_groups && !msg; g++) {
            plugin_cp_group *grp = &u.groups[g];
            char why[1024];
            if (grp->mps_id && *grp->mps_id &&
                plugin_mps_stop(p, grp->mps_id, why, sizeof(why)) != DRA_OK)
                msg = dra_arena_sprintf(a, "error unpreparing devices for claim %s: "
                                           "unprepare devices failed for claim %s: %s",
                                        ref, ref, why);
            if (!msg && grp->timeslice) {
                const char **uu = dra_arena_array(a, grp->n_devices + 1, sizeof(char *));
                size_t nu = 0;
                for (size_t i = 0; uu && i < grp->n_devices; i++)
                    if (!grp->devices[i].mig)
                        uu[nu++] = grp->devices[i].uuid;
                if (uu && plugin_ts_set(p, uu, nu, 0, why, sizeof(why)) != DRA_OK)
                    msg = dra_arena_sprintf(a, "error unpreparing devices for claim %s: "
                                               "error setting timeslice for devices: %s",
                                            ref, why);
            }
        }
        if (!msg) {
            rollback(p, c->uid); /* the CDI file; MPS leftovers of a started claim */
            e = cp_txn(p, step_forget, (void *)c->uid, err, sizeof(err));
            if (e != DRA_OK)
                msg = dra_arena_sprintf(a, "error unpreparing devices for claim %s: error "
                                           "deleting claim from checkpoint: %s",
                                        ref, err);
        }
    }
    claim_unlock(p, c->uid);
    return msg;
}

void plugin_unprepare(dra_plugin *p, const dra_plugin_claim_ref *claims, size_t n,
                      dra_arena *a, dra_plugin_claim_result **out)
{
    dra_plugin_claim_result *res = dra_arena_array(a, n ? n : 1, sizeof(*res));
    *out = res;
    for (size_t i = 0; res && i < n; i++) {
        res[i].uid = claims[i].uid;
        res[i].error = unprepare_one(p, &claims[i], a);
    }
}

/* ---- startup recovery -------------------------------------------------------------- */

static dra_err step_recover(dra_plugin *p, plugin_cp *cp, dra_arena *a, void *ud, int *dirty)
{
    (void)a;
    (void)ud;
    int other_boot = cp->boot_id && p->boot_id && strcmp(cp->boot_id, p->boot_id) != 0;
    for (size_t i = 0; i < cp->n;) {
        plugin_cp_claim *c = &cp->claims[i];
        /* Started: the kubelet never got an answer and will ask again.
         * Another boot: the containers that used these are gone. */
        if (c->state != PLUGIN_CP_COMPLETED || other_boot) {
            rollback(p, c->uid);
            for (size_t g = 0; g < c->n_groups; g++)
                if (c->groups[g].mps_id && *c->groups[g].mps_id) {
                    char why[256];
                    (void)plugin_mps_stop(p, c->groups[g].mps_id, why, sizeof(why));
                }
            plugin_cp_del(cp, c->uid);
            *dirty = 1;
            continue;
        }
        i++;
    }
    if (!cp->boot_id || other_boot)
        *dirty = 1;
    /* CDI files of ours that no completed claim owns. */
    DIR *d = opendir(p->o.cdi_root);
    if (d) {
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "%s-%s_", PLUGIN_CDI_VENDOR, PLUGIN_CDI_CLASS);
        size_t pl = strlen(prefix);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t nl = strlen(e->d_name);
            if (strncmp(e->d_name, prefix, pl) != 0 || nl < pl + 6 ||
                strcmp(e->d_name + nl - 5, ".yaml") != 0)
                continue;
            char uid[256];
            snprintf(uid, sizeof(uid), "%.*s", (int)(nl - pl - 5), e->d_name + pl);
            if (!plugin_cp_find(cp, uid)) {
                char path[4096];
                snprintf(path, sizeof(path), "%s/%s", p->o.cdi_root, e->d_name);
                unlink(path);
            }
        }
        closedir(d);
    }
    return DRA_OK;
}

dra_err plugin_recover(dra_plugin *p, dra_diag *d)
{
    char err[ERRCAP];
    dra_err e = cp_txn(p, step_recover, NULL, err, sizeof(err));
    if (e != DRA_OK)
        dra_diag_add(d, "", 0, 0, "%s", err);
    return e;
}
