/*
 * plugin/health.c: device health (feature gate NVMLDeviceHealthCheck).
 * A thread waits on module gpu's NVML events and turns them into device
 * taints with NVIDIA's keys (main branch): gpu.nvidia.com/xid (value =
 * the XID; NoSchedule, or None for the XIDs NVIDIA ignores),
 * gpu.nvidia.com/gpu-lost (NoSchedule), gpu.nvidia.com/unmonitored
 * (None). A NoSchedule taint makes prepare refuse the device. Unlike
 * NVIDIA's plugin, a device that answers NVML again loses its taints
 * (recovery) without a restart. Every change republishes the slice.
 */
#include <stdio.h>
#include <string.h>

#include "plugin_int.h"

#define WAIT_MS 500

/* Adds or updates the taint |key| on |d| (under p->mu). 1 if changed. */
static int taint(plugin_devstate *d, const char *key, const char *value, const char *effect)
{
    for (int i = 0; i < d->n_taints; i++) {
        plugin_taint *t = &d->taints[i];
        if (strcmp(t->key, key) != 0)
            continue;
        if (strcmp(t->value, value) == 0 && strcmp(t->effect, effect) == 0)
            return 0;
        snprintf(t->value, sizeof(t->value), "%s", value);
        t->effect = effect;
        plugin_rfc3339(t->time_added, sizeof(t->time_added));
        return 1;
    }
    if (d->n_taints >= 3)
        return 0;
    plugin_taint *t = &d->taints[d->n_taints++];
    snprintf(t->key, sizeof(t->key), "%s", key);
    snprintf(t->value, sizeof(t->value), "%s", value);
    t->effect = effect;
    plugin_rfc3339(t->time_added, sizeof(t->time_added));
    return 1;
}

/* Does event |ev| concern device |d|? A named GPU covers its MIG devices
 * too (a GPU in MIG mode is not announced itself); NULL covers all. */
static int concerns(const plugin_devstate *d, const dra_gpu_health_event *ev)
{
    if (!ev->device)
        return 1;
    if (strcmp(d->name, ev->device) == 0)
        return 1;
    return d->mig && strcmp(d->gpu->name, ev->device) == 0;
}

int plugin_health_apply(dra_plugin *p, const dra_gpu_health_event *ev)
{
    int changed = 0;
    char xid[32];
    snprintf(xid, sizeof(xid), "%llu", (unsigned long long)ev->xid);
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->n_devs; i++) {
        plugin_devstate *d = &p->devs[i];
        if (!concerns(d, ev))
            continue;
        switch (ev->kind) {
        case DRA_GPU_HEALTH_XID:
            changed |= taint(d, DRA_PLUGIN_DRIVER "/xid", xid,
                             ev->ignored ? "None" : "NoSchedule");
            break;
        case DRA_GPU_HEALTH_LOST:
            changed |= taint(d, DRA_PLUGIN_DRIVER "/gpu-lost", "", "NoSchedule");
            break;
        case DRA_GPU_HEALTH_UNMONITORED:
            changed |= taint(d, DRA_PLUGIN_DRIVER "/unmonitored", "", "None");
            break;
        case DRA_GPU_HEALTH_RECOVERED:
            changed |= d->n_taints > 0;
            d->n_taints = 0;
            break;
        default:
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return changed;
}

static void *health_main(void *arg)
{
    dra_plugin *p = arg;
    dra_diag d;
    dra_diag_init(&d, p->mem);
    dra_gpu_health *h = NULL;
    dra_err e = dra_gpu_health_new(p->gpu, p->inv, p->o.additional_xids_to_ignore, &h, &d);
    if (e != DRA_OK) {
        /* Monitoring is impossible: every device is unmonitored. */
        dra_gpu_health_event ev;
        memset(&ev, 0, sizeof(ev));
        ev.kind = DRA_GPU_HEALTH_UNMONITORED;
        if (plugin_health_apply(p, &ev))
            plugin_publish_request(p);
        plugin_log(p, "device health monitoring off: %s",
                dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
        dra_diag_fini(&d);
        return NULL;
    }
    while (!atomic_load(&p->stopping)) {
        dra_gpu_health_event ev;
        dra_diag_clear(&d);
        e = dra_gpu_health_wait(h, WAIT_MS, &ev, &d);
        if (e != DRA_OK || ev.kind == DRA_GPU_HEALTH_NONE)
            continue;
        plugin_log(p, "health event on %s: %s",
                ev.device ? ev.device : "all devices", ev.message);
        if (plugin_health_apply(p, &ev))
            plugin_publish_request(p);
    }
    dra_gpu_health_free(h);
    dra_diag_fini(&d);
    return NULL;
}

dra_err plugin_health_start(dra_plugin *p, dra_diag *d)
{
    if (!p->gpu) /* a hand-built inventory has no NVML to watch */
        return DRA_OK;
    if (pthread_create(&p->health_thread, NULL, health_main, p) != 0) {
        dra_diag_add(d, "", 0, 0, "cannot start the device health thread");
        return DRA_EIO;
    }
    p->health_started = 1;
    return DRA_OK;
}

void plugin_health_stop(dra_plugin *p)
{
    if (p->health_started) {
        pthread_join(p->health_thread, NULL);
        p->health_started = 0;
    }
}
