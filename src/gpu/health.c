/*
 * health.c: device health from NVML events, NVIDIA's device_health.go as
 * a poll API: one event set with XID critical and ECC events for every
 * GPU, XIDs mapped to the affected device by (GPU UUID, GI, CI), the
 * default ignore list plus --additional-xids-to-ignore, GPU_IS_LOST
 * resolved to the GPUs that are lost. Unlike 25.12 (no recovery until a
 * restart) a device that was lost, or failed NVML after an XID, is probed
 * and reported RECOVERED once it answers again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

#define MAX_XIDS 64

typedef struct hgpu {
    const dra_gpu_device *gpu;
    nv_device h;
    int unmonitored_pending; /* report UNMONITORED once */
    int failing;             /* probe until it answers */
} hgpu;

struct dra_gpu_health {
    dra_gpu *g;
    const dra_gpu_inventory *inv;
    nv_event_set set;
    hgpu *gpus;
    size_t n;
    uint64_t xids[MAX_XIDS];
    size_t n_xids;
};

static const uint64_t default_xids[] = {13, 31, 43, 45, 68, 109};

int dra_gpu_xid_ignored_by_default(uint64_t xid)
{
    for (size_t i = 0; i < sizeof default_xids / sizeof *default_xids; i++)
        if (default_xids[i] == xid)
            return 1;
    return 0;
}

/* getAdditionalXids: comma separated, trimmed, malformed entries skipped. */
static void parse_xids(dra_gpu_health *h, const char *s)
{
    while (s && *s && h->n_xids < MAX_XIDS) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        char buf[32];
        if (len < sizeof buf) {
            memcpy(buf, s, len);
            buf[len] = 0;
            char *p = buf + strspn(buf, " \t"), *q;
            size_t l = strlen(p);
            while (l && (p[l - 1] == ' ' || p[l - 1] == '\t'))
                p[--l] = 0;
            unsigned long long v = l && *p != '-' ? strtoull(p, &q, 10) : 0;
            if (l && *p != '-' && !*q)
                h->xids[h->n_xids++] = v;
        }
        s = end ? end + 1 : NULL;
    }
}

static int xid_ignored(const dra_gpu_health *h, uint64_t xid)
{
    if (dra_gpu_xid_ignored_by_default(xid))
        return 1;
    for (size_t i = 0; i < h->n_xids; i++)
        if (h->xids[i] == xid)
            return 1;
    return 0;
}

static void register_gpu(dra_gpu_health *h, hgpu *hg)
{
    const gpu_nvml *nv = &h->g->nv;
    unsigned long long supported = 0;
    const unsigned long long mask = NV_EVENT_XID_CRITICAL | NV_EVENT_DOUBLE_BIT_ECC |
                                    NV_EVENT_SINGLE_BIT_ECC;
    if (nv->nvmlDeviceGetHandleByUUID(hg->gpu->uuid, &hg->h) != NV_SUCCESS ||
        nv->nvmlDeviceGetSupportedEventTypes(hg->h, &supported) != NV_SUCCESS ||
        nv->nvmlDeviceRegisterEvents(hg->h, mask & supported, h->set) != NV_SUCCESS) {
        hg->h = NULL;
        hg->unmonitored_pending = 1;
    }
}

dra_err dra_gpu_health_new(dra_gpu *g, const dra_gpu_inventory *inv, const char *additional_xids,
                           dra_gpu_health **out, dra_diag *d)
{
    char buf[512];
    if (!g || !inv || !out)
        return DRA_EINVAL;
    *out = NULL;
    dra_gpu_health *h = dra_calloc(g->mem, 1, sizeof *h);
    if (!h)
        return DRA_ENOMEM;
    h->g = g;
    h->inv = inv;
    h->gpus = dra_calloc(g->mem, inv->n_gpus ? inv->n_gpus : 1, sizeof *h->gpus);
    if (!h->gpus) {
        dra_free(g->mem, h);
        return DRA_ENOMEM;
    }
    parse_xids(h, additional_xids);
    nv_return rc = g->nv.nvmlInit_v2();
    if (rc == NV_SUCCESS && (rc = g->nv.nvmlEventSetCreate(&h->set)) != NV_SUCCESS)
        g->nv.nvmlShutdown();
    if (rc != NV_SUCCESS) {
        dra_diag_add(d, "", 0, 0, "cannot start NVML device health monitoring: %s",
                     gpu_nv_error(g, rc, buf, sizeof buf));
        dra_free(g->mem, h->gpus);
        dra_free(g->mem, h);
        return DRA_EUNAVAILABLE;
    }
    for (size_t i = 0; i < inv->n_gpus; i++) {
        h->gpus[i].gpu = &inv->gpus[i];
        register_gpu(h, &h->gpus[i]);
    }
    h->n = inv->n_gpus;
    *out = h;
    return DRA_OK;
}

void dra_gpu_health_free(dra_gpu_health *h)
{
    if (!h)
        return;
    h->g->nv.nvmlEventSetFree(h->set);
    h->g->nv.nvmlShutdown();
    dra_free(h->g->mem, h->gpus);
    dra_free(h->g->mem, h);
}

/* NV_SUCCESS when the GPU answers NVML, else the error it answers with. */
static nv_return probe(const dra_gpu_health *h, const hgpu *hg)
{
    nv_device dev;
    nv_memory mem;
    nv_return rc = h->g->nv.nvmlDeviceGetHandleByUUID(hg->gpu->uuid, &dev);
    return rc == NV_SUCCESS ? h->g->nv.nvmlDeviceGetMemoryInfo(dev, &mem) : rc;
}

static void event_for(dra_gpu_health_event *ev, dra_gpu_health_kind kind, const hgpu *hg)
{
    memset(ev, 0, sizeof *ev);
    ev->kind = kind;
    ev->gi = ev->ci = NV_INSTANCE_NONE;
    if (hg) {
        ev->device = hg->gpu->name;
        ev->gpu_uuid = hg->gpu->uuid;
    }
}

/* Reports pending UNMONITORED GPUs and recoveries first. */
static int pending(dra_gpu_health *h, dra_gpu_health_event *ev)
{
    for (size_t i = 0; i < h->n; i++) {
        hgpu *hg = &h->gpus[i];
        if (hg->unmonitored_pending) {
            hg->unmonitored_pending = 0;
            event_for(ev, DRA_GPU_HEALTH_UNMONITORED, hg);
            snprintf(ev->message, sizeof ev->message,
                     "cannot register NVML events for %s (%s)", hg->gpu->name, hg->gpu->uuid);
            return 1;
        }
        if (hg->failing && probe(h, hg) == NV_SUCCESS) {
            hg->failing = 0;
            event_for(ev, DRA_GPU_HEALTH_RECOVERED, hg);
            snprintf(ev->message, sizeof ev->message, "%s (%s) answers NVML again",
                     hg->gpu->name, hg->gpu->uuid);
            return 1;
        }
    }
    return 0;
}

/* GPU_IS_LOST from the wait: report each GPU that is lost, one per call;
 * every device when none can be told apart. */
static void lost(dra_gpu_health *h, dra_gpu_health_event *ev)
{
    char buf[256];
    for (size_t i = 0; i < h->n; i++) {
        hgpu *hg = &h->gpus[i];
        nv_return rc = probe(h, hg);
        if (rc != NV_SUCCESS && !hg->failing) {
            hg->failing = 1;
            event_for(ev, DRA_GPU_HEALTH_LOST, hg);
            snprintf(ev->message, sizeof ev->message, "GPU %s (%s) is lost: %s", hg->gpu->name,
                     hg->gpu->uuid, gpu_nv_error(h->g, rc, buf, sizeof buf));
            return;
        }
    }
    event_for(ev, DRA_GPU_HEALTH_LOST, NULL);
    snprintf(ev->message, sizeof ev->message, "NVML reports a lost GPU; marking every device");
}

/* deviceByPlacement.get, widened: GI/CI "none" on a GPU in MIG mode means
 * all its MIG devices (reported with device = the GPU's name). */
static const char *device_of(const hgpu *hg, unsigned gi, unsigned ci)
{
    const dra_gpu_device *g = hg->gpu;
    if (gi == NV_INSTANCE_NONE)
        return g->name;
    for (size_t i = 0; i < g->n_migs; i++)
        if (g->migs[i].gi_id == gi && (ci == NV_INSTANCE_NONE || g->migs[i].ci_id == ci))
            return g->migs[i].name;
    return NULL;
}

static int xid_event(dra_gpu_health *h, const nv_event_data *e, dra_gpu_health_event *ev)
{
    char uuid[NV_UUID_BUFFER];
    hgpu *hg = NULL;
    if (h->g->nv.nvmlDeviceGetUUID(e->device, uuid, sizeof uuid) == NV_SUCCESS)
        for (size_t i = 0; i < h->n && !hg; i++)
            if (!strcmp(h->gpus[i].gpu->uuid, uuid))
                hg = &h->gpus[i];
    if (!hg) {
        /* Upstream: a UUID lookup failure marks every device. */
        event_for(ev, DRA_GPU_HEALTH_LOST, NULL);
        snprintf(ev->message, sizeof ev->message,
                 "XID %llu on a GPU whose UUID cannot be read; marking every device",
                 e->event_data);
        return 1;
    }
    const char *dev = device_of(hg, e->gpu_instance_id, e->compute_instance_id);
    if (!dev)
        return 0; /* an instance we do not announce */
    event_for(ev, DRA_GPU_HEALTH_XID, hg);
    ev->device = dev;
    ev->xid = e->event_data;
    ev->ignored = xid_ignored(h, e->event_data);
    ev->gi = e->gpu_instance_id;
    ev->ci = e->compute_instance_id;
    snprintf(ev->message, sizeof ev->message, "XID %llu on %s (%s)%s", e->event_data, dev,
             hg->gpu->uuid, ev->ignored ? " (ignored XID)" : "");
    /* A device that stops answering after the XID is probed for recovery. */
    if (probe(h, hg) != NV_SUCCESS)
        hg->failing = 1;
    return 1;
}

dra_err dra_gpu_health_wait(dra_gpu_health *h, int timeout_ms, dra_gpu_health_event *ev,
                            dra_diag *d)
{
    if (!h || !ev)
        return DRA_EINVAL;
    if (pending(h, ev))
        return DRA_OK;
    for (;;) {
        nv_event_data e;
        memset(&e, 0, sizeof e);
        nv_return rc = h->g->nv.nvmlEventSetWait_v2(h->set, &e,
                                                     timeout_ms > 0 ? (unsigned)timeout_ms : 0);
        if (rc == NV_ERROR_TIMEOUT) {
            event_for(ev, DRA_GPU_HEALTH_NONE, NULL);
            return DRA_OK;
        }
        if (rc == NV_ERROR_GPU_IS_LOST) {
            lost(h, ev);
            return DRA_OK;
        }
        if (rc != NV_SUCCESS) {
            char buf[256];
            dra_diag_add(d, "", 0, 0, "waiting for NVML events: %s",
                         gpu_nv_error(h->g, rc, buf, sizeof buf));
            return DRA_EIO;
        }
        if (e.event_type == NV_EVENT_XID_CRITICAL && xid_event(h, &e, ev))
            return DRA_OK;
        /* Not an event we act on: keep waiting with what is left of the
         * timeout, approximately (an immediate re-check). */
        timeout_ms = 0;
    }
}
