/*
 * fake/state.c: how the fake libnvidia-ml.so.1 finds what it serves. The
 * inventory: $DRA_FAKE_NVML_CONFIG, else dra-fake-nvml.yaml next to the
 * library's real file (dladdr + realpath), else the contents of
 * <dev>/nvidiactl when that is a regular file (a fake driver root puts
 * the node's inventory there, so a container that gets the node sees its
 * GPUs). Visibility: when <dev>/nvidiactl exists, only GPUs whose
 * <dev>/nvidia<minor> exists (and MIG devices whose two nvidia-caps nodes
 * exist), as in a container; <dev> is $DRA_FAKE_NVML_DEV_ROOT or /dev.
 * Events: lines appended to a control file (docs/gpu.md).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_int.h"

fk_state fk_g = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* fk_g.err through vsnprintf (long paths are cut, which is fine for a
 * message). */
static void set_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fk_g.err, sizeof fk_g.err, fmt, ap);
    va_end(ap);
}

static const char *dev_root(void)
{
    const char *d = getenv("DRA_FAKE_NVML_DEV_ROOT");
    return d && *d ? d : "/dev";
}

static int path_exists(const char *dir, const char *name)
{
    char p[PATH_MAX];
    struct stat st;
    if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, name) >= sizeof p)
        return 0;
    return stat(p, &st) == 0;
}

/* The directory of this library's real file, or "" when unknown. */
static void own_dir(char *out, size_t size)
{
    Dl_info info;
    char real[PATH_MAX];
    out[0] = 0;
    if (!dladdr((void *)own_dir, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, real))
        return;
    char *slash = strrchr(real, '/');
    if (!slash)
        return;
    *slash = 0;
    snprintf(out, size, "%s", real);
}

static nv_return load_from_ctl(const char *ctl)
{
    char err[512];
    struct stat st;
    if (stat(ctl, &st) || !S_ISREG(st.st_mode)) {
        set_err("fake NVML: no inventory (set DRA_FAKE_NVML_CONFIG, or put "
                 "dra-fake-nvml.yaml next to the library, or an inventory in %s)",
                 ctl);
        return NV_ERROR_DRIVER_NOT_LOADED;
    }
    snprintf(fk_g.source, sizeof fk_g.source, "%s", ctl);
    if (fk_inventory_load(&fk_g.inv, NULL, ctl, err, sizeof err)) {
        set_err("fake NVML: %s", err);
        return NV_ERROR_UNKNOWN;
    }
    return NV_SUCCESS;
}

static nv_return load_inventory(void)
{
    char err[512], dir[PATH_MAX], path[PATH_MAX + 32];
    _Static_assert(sizeof fk_g.source > PATH_MAX + 32 + 24, "buffer sizes");
    const char *env = getenv("DRA_FAKE_NVML_CONFIG");
    fk_g.events[0] = 0;
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        own_dir(dir, sizeof dir);
        snprintf(path, sizeof path, "%s/dra-fake-nvml.yaml", dir);
        if (!dir[0] || access(path, R_OK)) {
            snprintf(path, sizeof path, "%s/nvidiactl", dev_root());
            return load_from_ctl(path);
        }
    }
    snprintf(fk_g.source, sizeof fk_g.source, "%s", path);
    if (fk_inventory_load(&fk_g.inv, NULL, path, err, sizeof err)) {
        set_err("fake NVML: %s", err);
        return NV_ERROR_UNKNOWN;
    }
    const char *ev = getenv("DRA_FAKE_NVML_EVENTS");
    if (ev && *ev) {
        snprintf(fk_g.events, sizeof fk_g.events, "%s", ev);
    } else {
        char *slash = strrchr(path, '/');
        if (slash)
            slash[1] = 0;
        snprintf(fk_g.events, sizeof fk_g.events, "%sdra-fake-nvml.events",
                 slash ? path : "");
    }
    return NV_SUCCESS;
}

static int mig_visible(const char *dev, const fk_gpu *g, const fk_mig *m, int contained)
{
    char n1[64], n2[64];
    if (!contained)
        return 1;
    snprintf(n1, sizeof n1, "nvidia-caps/nvidia-cap%u", fk_cap_minor_gi(g->minor, m->gi));
    snprintf(n2, sizeof n2, "nvidia-caps/nvidia-cap%u", fk_cap_minor_ci(g->minor, m->gi, m->ci));
    return path_exists(dev, n1) && path_exists(dev, n2);
}

static nv_return build_visible(void)
{
    const char *dev = dev_root();
    int contained = path_exists(dev, "nvidiactl");
    const fk_node *node = fk_g.node;
    fk_g.gpus = calloc(node->n_gpus + 1, sizeof *fk_g.gpus);
    if (!fk_g.gpus)
        return NV_ERROR_MEMORY;
    for (size_t i = 0; i < node->n_gpus; i++) {
        const fk_gpu *g = &node->gpus[i];
        char name[32];
        snprintf(name, sizeof name, "nvidia%u", g->minor);
        if (contained && !path_exists(dev, name))
            continue;
        if (fk_g.n_gpus >= 64) {
            set_err("fake NVML: more than 64 GPUs");
            return NV_ERROR_UNKNOWN;
        }
        fgpu *f = &fk_g.gpus[fk_g.n_gpus];
        f->g = g;
        f->index = (unsigned)fk_g.n_gpus++;
        f->h.gpu = f;
        f->migs = calloc(g->n_migs + 1, sizeof *f->migs);
        if (!f->migs)
            return NV_ERROR_MEMORY;
        for (size_t j = 0; j < g->n_migs; j++) {
            if (!g->mig_enabled || !mig_visible(dev, g, &g->migs[j], contained))
                continue;
            fmig *m = &f->migs[f->n_migs++];
            m->m = &g->migs[j];
            m->h.is_mig = 1;
            m->h.gpu = f;
            m->h.mig = m;
            m->gi.mig = m;
            m->ci.mig = m;
        }
    }
    return NV_SUCCESS;
}

nv_return fk_state_load(void)
{
    fk_g.err[0] = 0;
    nv_return rc = load_inventory();
    if (rc != NV_SUCCESS)
        return rc;
    const char *want = getenv("DRA_FAKE_NVML_NODE");
    fk_g.node = fk_inventory_node(&fk_g.inv, want && *want ? want : NULL);
    if (!fk_g.node) {
        set_err("fake NVML: %s has no node %s",
                 fk_g.source, want && *want ? want : "at all");
        fk_state_free();
        return NV_ERROR_UNKNOWN;
    }
    fk_g.ev_size = -1;
    memset(fk_g.cond, 0, sizeof fk_g.cond);
    rc = build_visible();
    if (rc != NV_SUCCESS) {
        if (!fk_g.err[0])
            set_err("fake NVML: out of memory");
        fk_state_free();
    }
    return rc;
}

void fk_state_free(void)
{
    for (size_t i = 0; fk_g.gpus && i < fk_g.n_gpus; i++)
        free(fk_g.gpus[i].migs);
    free(fk_g.gpus);
    fk_g.gpus = NULL;
    fk_g.n_gpus = 0;
    fk_g.node = NULL;
    fk_inventory_free(&fk_g.inv);
}

/* "func:CODE,func:CODE" in $DRA_FAKE_NVML_FAIL. */
static nv_return env_fail(const char *func)
{
    const char *s = getenv("DRA_FAKE_NVML_FAIL");
    size_t flen = strlen(func);
    while (s && *s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len > flen + 1 && !strncmp(s, func, flen) && s[flen] == ':') {
            char code[64];
            snprintf(code, sizeof code, "%.*s", (int)(len - flen - 1), s + flen + 1);
            int c = fk_return_code(code);
            return c < 0 ? NV_ERROR_UNKNOWN : c;
        }
        s = end ? end + 1 : NULL;
    }
    return NV_SUCCESS;
}

nv_return fk_failpoint(const char *func)
{
    nv_return rc = env_fail(func);
    if (rc != NV_SUCCESS || !fk_g.node)
        return rc;
    for (size_t i = 0; i < fk_g.node->n_fails; i++)
        if (!strcmp(fk_g.node->fails[i].func, func))
            return fk_g.node->fails[i].code;
    return NV_SUCCESS;
}

fgpu *fk_gpu_by_ref(const char *ref)
{
    const char *num = ref;
    if (!strncmp(ref, "gpu-", 4))
        num = ref + 4;
    char *end;
    unsigned long minor = strtoul(num, &end, 10);
    int is_minor = *num >= '0' && *num <= '9' && !*end;
    for (size_t i = 0; i < fk_g.n_gpus; i++) {
        const fk_gpu *g = fk_g.gpus[i].g;
        if ((is_minor && g->minor == minor) || !strcmp(g->uuid, ref))
            return &fk_g.gpus[i];
    }
    return NULL;
}

/* One control line: "xid <dev> <xid> [gi N] [ci N] [reset]", "lost <dev>",
 * "clear <dev>". Returns the verb (0 for a line to skip). */
typedef struct ctl_line {
    char verb;  /* 'x', 'l', 'c' */
    fgpu *gpu;
    unsigned long long xid;
    unsigned gi, ci;
    int reset;
} ctl_line;

static char parse_line(char *line, ctl_line *c)
{
    char *save = NULL, *w = strtok_r(line, " \t\r\n", &save);
    memset(c, 0, sizeof *c);
    c->gi = c->ci = NV_INSTANCE_NONE;
    if (!w || w[0] == '#')
        return 0;
    char verb = !strcmp(w, "xid") ? 'x' : !strcmp(w, "lost") ? 'l' : !strcmp(w, "clear") ? 'c' : 0;
    char *dev = strtok_r(NULL, " \t\r\n", &save);
    if (!verb || !dev || !(c->gpu = fk_gpu_by_ref(dev)))
        return 0;
    if (verb == 'x') {
        char *x = strtok_r(NULL, " \t\r\n", &save);
        if (!x)
            return 0;
        c->xid = strtoull(x, NULL, 10);
        while ((w = strtok_r(NULL, " \t\r\n", &save))) {
            char *v = NULL;
            if (!strcmp(w, "reset"))
                c->reset = 1;
            else if (!strcmp(w, "gi") && (v = strtok_r(NULL, " \t\r\n", &save)))
                c->gi = (unsigned)strtoul(v, NULL, 10);
            else if (!strcmp(w, "ci") && (v = strtok_r(NULL, " \t\r\n", &save)))
                c->ci = (unsigned)strtoul(v, NULL, 10);
        }
    }
    return c->verb = verb;
}

static void apply_condition(const ctl_line *c)
{
    unsigned i = c->gpu->index;
    if (c->verb == 'l')
        fk_g.cond[i] = FK_COND_LOST;
    else if (c->verb == 'c')
        fk_g.cond[i] = FK_COND_OK;
    else if (c->reset && fk_g.cond[i] != FK_COND_LOST)
        fk_g.cond[i] = FK_COND_RESET;
}

int fk_condition(const fgpu *g)
{
    struct stat st;
    if (!fk_g.events[0] || stat(fk_g.events, &st)) {
        memset(fk_g.cond, 0, sizeof fk_g.cond);
        fk_g.ev_size = -1;
        return FK_COND_OK;
    }
    long long mt = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    if (st.st_size != fk_g.ev_size || mt != fk_g.ev_mtime_ns) {
        FILE *f = fopen(fk_g.events, "r");
        char line[512];
        memset(fk_g.cond, 0, sizeof fk_g.cond);
        while (f && fgets(line, sizeof line, f)) {
            ctl_line c;
            if (strchr(line, '\n') && parse_line(line, &c))
                apply_condition(&c);
        }
        if (f)
            fclose(f);
        fk_g.ev_size = st.st_size;
        fk_g.ev_mtime_ns = mt;
    }
    return fk_g.cond[g->index];
}

nv_return fk_events_next(struct nv_event_set_st *set, nv_event_data *ev)
{
    FILE *f = fk_g.events[0] ? fopen(fk_g.events, "r") : NULL;
    char line[512];
    nv_return rc = NV_ERROR_TIMEOUT;
    if (!f)
        return rc;
    if (fseek(f, set->offset, SEEK_SET) == 0) {
        while (rc == NV_ERROR_TIMEOUT && fgets(line, sizeof line, f)) {
            if (!strchr(line, '\n'))
                break; /* a line still being written */
            set->offset = ftell(f);
            ctl_line c;
            char verb = parse_line(line, &c);
            if (verb == 'l' && set->mask[c.gpu->index]) {
                rc = NV_ERROR_GPU_IS_LOST;
            } else if (verb == 'x' && (set->mask[c.gpu->index] & NV_EVENT_XID_CRITICAL)) {
                memset(ev, 0, sizeof *ev);
                ev->device = &c.gpu->h;
                ev->event_type = NV_EVENT_XID_CRITICAL;
                ev->event_data = c.xid;
                ev->gpu_instance_id = c.gi;
                ev->compute_instance_id = c.ci;
                rc = NV_SUCCESS;
            }
        }
    }
    fclose(f);
    return rc;
}
