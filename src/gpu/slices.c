/*
 * slices.c: an inventory becomes the ResourceSlice specs NVIDIA's driver
 * (25.12.0) publishes: device names, attributes with their types,
 * capacities, and in DynamicMIG mode the KEP 4815 partitionable layout
 * (one counter set per GPU, the full GPU and every MIG profile placement
 * consuming it), with counters in their own slice for servers >= 1.35.
 * Also go-nvlib's MIG profile names and Masterminds' version printing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

#define SLICE_MAX_DEVICES 128 /* API limit per slice */
#define SLICE_MAX_COUNTER_SETS 8

/* ---- names and versions ------------------------------------------------ */

unsigned gpu_gi_slices(unsigned index)
{
    static const unsigned s[NV_GI_PROFILE_COUNT] = {
        [NV_GI_PROFILE_1_SLICE] = 1,      [NV_GI_PROFILE_2_SLICE] = 2,
        [NV_GI_PROFILE_3_SLICE] = 3,      [NV_GI_PROFILE_4_SLICE] = 4,
        [NV_GI_PROFILE_7_SLICE] = 7,      [NV_GI_PROFILE_8_SLICE] = 8,
        [NV_GI_PROFILE_6_SLICE] = 6,      [NV_GI_PROFILE_1_SLICE_REV1] = 1,
        [NV_GI_PROFILE_2_SLICE_REV1] = 2, [NV_GI_PROFILE_1_SLICE_REV2] = 1,
        [NV_GI_PROFILE_1_SLICE_GFX] = 1,  [NV_GI_PROFILE_2_SLICE_GFX] = 2,
        [NV_GI_PROFILE_4_SLICE_GFX] = 4,  [NV_GI_PROFILE_1_SLICE_NO_ME] = 1,
        [NV_GI_PROFILE_2_SLICE_NO_ME] = 2, [NV_GI_PROFILE_1_SLICE_ALL_ME] = 1,
        [NV_GI_PROFILE_2_SLICE_ALL_ME] = 2};
    return index < NV_GI_PROFILE_COUNT ? s[index] : 0;
}

int gpu_ci_index(unsigned slices)
{
    static const unsigned s[] = {1, 2, 3, 4, 7, 8, 6}; /* by CI profile index */
    for (int i = 0; i < 7; i++)
        if (s[i] == slices)
            return i;
    return -1;
}

static const char *profile_suffix(unsigned index)
{
    switch (index) {
    case NV_GI_PROFILE_1_SLICE_REV1:
    case NV_GI_PROFILE_2_SLICE_REV1:
        return "+me";
    case NV_GI_PROFILE_1_SLICE_ALL_ME:
    case NV_GI_PROFILE_2_SLICE_ALL_ME:
        return "+me.all";
    case NV_GI_PROFILE_1_SLICE_GFX:
    case NV_GI_PROFILE_2_SLICE_GFX:
    case NV_GI_PROFILE_4_SLICE_GFX:
        return "+gfx";
    case NV_GI_PROFILE_1_SLICE_NO_ME:
    case NV_GI_PROFILE_2_SLICE_NO_ME:
        return "-me";
    default:
        return "";
    }
}

/* go-nvlib getMigMemorySizeGB: the profile's share of memory rounded up
 * to eighths, times the GPU's memory in whole GiB (rounded up), rounded.
 * Done in integers: eighths = ceil(8 * mib * 2^20 / total). */
static unsigned long long profile_gb(unsigned long long mib, unsigned long long total)
{
    const unsigned long long gib = 1ull << 30;
    if (!total)
        return 0;
    unsigned __int128 num = (unsigned __int128)mib * 8u << 20;
    unsigned long long eighths = (unsigned long long)((num + total - 1) / total);
    unsigned long long total_gb = (total + gib - 1) / gib;
    /* round(eighths / 8 * total_gb), halves away from zero like math.Round */
    return (eighths * total_gb + 4) / 8;
}

const char *gpu_profile_name(dra_arena *a, unsigned index, unsigned long long mib,
                             unsigned long long total)
{
    unsigned g = gpu_gi_slices(index);
    if (!g)
        return NULL;
    return dra_arena_sprintf(a, "%ug.%llugb%s", g, profile_gb(mib, total),
                             profile_suffix(index));
}

void dra_gpu_profile_dns(const char *profile, char *buf, size_t size)
{
    size_t n = 0;
    if (!size)
        return;
    for (const char *c = profile ? profile : ""; *c && n + 1 < size; c++) {
        char ch = *c;
        if (ch == '.')
            continue;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-'))
            ch = '-';
        buf[n++] = ch;
    }
    buf[n] = 0;
    size_t start = strspn(buf, "-");
    while (n > start && buf[n - 1] == '-')
        buf[--n] = 0;
    memmove(buf, buf + start, n - start + 1);
}

static int digits(const char **s, unsigned long long *v)
{
    const char *p = *s;
    if (*p < '0' || *p > '9')
        return 0;
    *v = 0;
    while (*p >= '0' && *p <= '9') {
        if (*v > 1844674407370955160ull)
            return 0;
        *v = *v * 10 + (unsigned)(*p++ - '0');
    }
    *s = p;
    return 1;
}

static int ident_tail(const char *s)
{
    /* "-a.b+c.d": dot separated [0-9A-Za-z-]+ after '-' and after '+'. */
    for (int part = 0; *s; part++) {
        if ((*s != '-' && *s != '+') || (part && *s == '-'))
            return 0;
        s++;
        do {
            size_t n = strspn(s, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-");
            if (!n)
                return 0;
            s += n;
        } while (*s == '.' && s++);
    }
    return 1;
}

dra_err dra_gpu_version(const char *in, char *buf, size_t size)
{
    unsigned long long v[3] = {0, 0, 0};
    const char *s = in;
    if (!s)
        return DRA_EPARSE;
    if (*s == 'v')
        s++;
    if (!digits(&s, &v[0]))
        return DRA_EPARSE;
    for (int i = 1; i < 3 && *s == '.'; i++) {
        s++;
        if (!digits(&s, &v[i]))
            return DRA_EPARSE;
    }
    if (!ident_tail(s))
        return DRA_EPARSE;
    int n = snprintf(buf, size, "%llu.%llu.%llu%s", v[0], v[1], v[2], s);
    return n < 0 || (size_t)n >= size ? DRA_ERANGE : DRA_OK;
}

int dra_gpu_split_counters(const char *git_version)
{
    char buf[128];
    dra_semver sv, min;
    if (dra_gpu_version(git_version, buf, sizeof buf) ||
        dra_semver_parse(buf, strlen(buf), &sv) ||
        dra_semver_parse("1.35.0", 6, &min))
        return -1;
    /* A pre-release of 1.35 (1.35.0-alpha.1) is below 1.35.0 for Masterminds too. */
    return dra_semver_cmp(&sv, &min) >= 0;
}

/* ---- device building ------------------------------------------------- */

typedef struct devb {
    dra_arena *a;
    dra_attr_entry attrs[24];
    size_t na;
    dra_capacity_entry caps[32];
    size_t nc;
    int oom;
} devb;

static void attr_str(devb *b, const char *name, const char *v)
{
    dra_attr_entry *e = &b->attrs[b->na++];
    memset(e, 0, sizeof *e);
    e->name = name;
    e->val.set = DRA_ATTR_STRING;
    e->val.s = v;
}

static void attr_ver(devb *b, const char *name, const char *v)
{
    char buf[128];
    dra_attr_entry *e = &b->attrs[b->na++];
    memset(e, 0, sizeof *e);
    e->name = name;
    e->val.set = DRA_ATTR_VERSION;
    /* NVIDIA panics on a version it cannot parse (semver.MustParse); we
     * keep the text, and validation will report it. */
    e->val.v = dra_gpu_version(v, buf, sizeof buf) ? v : dra_arena_strdup(b->a, buf);
    b->oom |= !e->val.v;
}

static void cap_int(devb *b, const char *name, long long v)
{
    dra_capacity_entry *e = &b->caps[b->nc++];
    memset(e, 0, sizeof *e);
    e->name = name;
    e->value = dra_quantity_from_int64(v, DRA_QTY_BINARY_SI);
}

/* The attributes every GPU and MIG device shares (PartDevAttributes). */
static void common_attrs(devb *b, const dra_gpu_inventory *inv, const dra_gpu_device *g)
{
    attr_str(b, "productName", g->product_name);
    attr_str(b, "brand", g->brand);
    attr_str(b, "architecture", g->architecture);
    attr_ver(b, "cudaComputeCapability", g->cuda_compute_capability);
    attr_ver(b, "driverVersion", inv->driver_version);
    attr_ver(b, "cudaDriverVersion", inv->cuda_driver_version);
    attr_str(b, "resource.kubernetes.io/pciBusID", g->pci_bus_id);
}

static dra_err finish(devb *b, dra_device *dev, const char *name)
{
    memset(dev, 0, sizeof *dev);
    dev->name = name;
    dev->attrs = dra_arena_array(b->a, b->na ? b->na : 1, sizeof *dev->attrs);
    dev->capacity = dra_arena_array(b->a, b->nc ? b->nc : 1, sizeof *dev->capacity);
    if (b->oom || !name || !dev->attrs || !dev->capacity)
        return DRA_ENOMEM;
    memcpy(dev->attrs, b->attrs, b->na * sizeof *b->attrs);
    memcpy(dev->capacity, b->caps, b->nc * sizeof *b->caps);
    dev->n_attrs = b->na;
    dev->n_capacity = b->nc;
    return DRA_OK;
}

/* GetDevice of a full GPU, default mode. */
static dra_err gpu_device(dra_arena *a, const dra_gpu_inventory *inv, const dra_gpu_device *g,
                          dra_device *dev)
{
    devb b = {.a = a};
    attr_str(&b, "type", "gpu");
    attr_str(&b, "uuid", g->uuid);
    common_attrs(&b, inv, g);
    if (g->pcie_root)
        attr_str(&b, "resource.kubernetes.io/pcieRoot", g->pcie_root);
    if (g->addressing_mode)
        attr_str(&b, "addressingMode", g->addressing_mode);
    cap_int(&b, "memory", (long long)g->memory_bytes);
    return finish(&b, dev, g->name);
}

static const char *const slice_caps[] = {"memorySlice0", "memorySlice1", "memorySlice2",
                                         "memorySlice3", "memorySlice4", "memorySlice5",
                                         "memorySlice6", "memorySlice7"};

static void profile_caps(devb *b, const dra_gpu_mig_profile *p)
{
    cap_int(b, "multiprocessors", p->multiprocessors);
    cap_int(b, "copyEngines", p->copy_engines);
    cap_int(b, "decoders", p->decoders);
    cap_int(b, "encoders", p->encoders);
    cap_int(b, "jpegEngines", p->jpeg_engines);
    cap_int(b, "ofaEngines", p->ofa_engines);
    cap_int(b, "memory", (long long)(p->memory_mib << 20));
}

/* MigDeviceInfo.GetDevice: an existing MIG device, default mode. */
static dra_err mig_device(dra_arena *a, const dra_gpu_inventory *inv, const dra_gpu_mig *m,
                          dra_device *dev)
{
    devb b = {.a = a};
    const dra_gpu_device *g = m->parent;
    attr_str(&b, "type", "mig");
    attr_str(&b, "uuid", m->uuid);
    attr_str(&b, "parentUUID", g->uuid);
    attr_str(&b, "profile", m->profile->name);
    common_attrs(&b, inv, g);
    if (g->pcie_root)
        attr_str(&b, "resource.kubernetes.io/pcieRoot", g->pcie_root);
    if (g->addressing_mode)
        attr_str(&b, "addressingMode", g->addressing_mode);
    profile_caps(&b, m->profile);
    for (unsigned i = m->placement.start; i < m->placement.start + m->placement.size && i < 8; i++)
        cap_int(&b, slice_caps[i], 1);
    return finish(&b, dev, m->name);
}

/* ---- partitionable (DynamicMIG) ---------------------------------------- */

static const char *const counter_names[7] = {"multiprocessors", "copy-engines", "decoders",
                                             "encoders", "jpeg-engines", "ofa-engines",
                                             "memory"};
static const char *const mem_slice_counters[8] = {
    "memory-slice-0", "memory-slice-1", "memory-slice-2", "memory-slice-3",
    "memory-slice-4", "memory-slice-5", "memory-slice-6", "memory-slice-7"};

static void profile_values(const dra_gpu_mig_profile *p, long long v[7])
{
    v[0] = p->multiprocessors;
    v[1] = p->copy_engines;
    v[2] = p->decoders;
    v[3] = p->encoders;
    v[4] = p->jpeg_engines;
    v[5] = p->ofa_engines;
    v[6] = (long long)(p->memory_mib << 20);
}

/* Per-capacity maxima over all profiles and placements, and the memory
 * slice count (largest placement size), as inspectMigProfilesAndPlacements. */
static unsigned gpu_maxima(const dra_gpu_device *g, long long max[7])
{
    unsigned slices = 0;
    memset(max, 0, 7 * sizeof *max);
    for (size_t i = 0; i < g->n_profiles; i++) {
        long long v[7];
        profile_values(&g->profiles[i], v);
        for (size_t k = 0; k < g->profiles[i].n_placements; k++) {
            for (int c = 0; c < 7; c++)
                max[c] = v[c] > max[c] ? v[c] : max[c];
            if (g->profiles[i].placements[k].size > slices)
                slices = g->profiles[i].placements[k].size;
        }
    }
    return slices > 8 ? 8 : slices;
}

static dra_counter *counters(dra_arena *a, const long long v[7], unsigned start, unsigned size,
                             size_t *n)
{
    dra_counter *c = dra_arena_array(a, 7 + 8, sizeof *c);
    if (!c)
        return NULL;
    for (int i = 0; i < 7; i++) {
        c[i].name = counter_names[i];
        c[i].value = dra_quantity_from_int64(v[i], DRA_QTY_BINARY_SI);
    }
    *n = 7;
    for (unsigned s = start; s < start + size && s < 8; s++) {
        c[*n].name = mem_slice_counters[s];
        c[*n].value = dra_quantity_from_int64(1, DRA_QTY_BINARY_SI);
        ++*n;
    }
    return c;
}

static dra_err consume(dra_arena *a, dra_device *dev, const char *set, const long long v[7],
                       unsigned start, unsigned size)
{
    dra_counter_consumption *cc = dra_arena_zalloc(a, sizeof *cc);
    if (!cc)
        return DRA_ENOMEM;
    cc->counter_set = set;
    cc->counters = counters(a, v, start, size, &cc->n_counters);
    dev->consumes_counters = cc;
    dev->n_consumes_counters = 1;
    return cc->counters ? DRA_OK : DRA_ENOMEM;
}

/* PartGetDevice of a full GPU: no addressingMode, capacity = maxima. */
static dra_err part_gpu(dra_arena *a, const dra_gpu_inventory *inv, const dra_gpu_device *g,
                        const char *set, const long long max[7], unsigned nslices,
                        dra_device *dev)
{
    devb b = {.a = a};
    static const char *const cap_names[7] = {"multiprocessors", "copyEngines", "decoders",
                                             "encoders", "jpegEngines", "ofaEngines", "memory"};
    attr_str(&b, "type", "gpu");
    attr_str(&b, "uuid", g->uuid);
    common_attrs(&b, inv, g);
    if (g->pcie_root)
        attr_str(&b, "resource.kubernetes.io/pcieRoot", g->pcie_root);
    for (int c = 0; c < 7; c++)
        cap_int(&b, cap_names[c], max[c]);
    dra_err err = finish(&b, dev, g->name);
    return err ? err : consume(a, dev, set, max, 0, nslices);
}

/* MigSpec.PartGetDevice: an abstract MIG device (no uuid, no pcieRoot). */
static dra_err part_mig(dra_arena *a, const dra_gpu_inventory *inv, const dra_gpu_device *g,
                        const dra_gpu_mig_profile *p, const dra_gpu_placement *pl,
                        const char *set, dra_device *dev)
{
    devb b = {.a = a};
    char dns[64];
    long long v[7];
    attr_str(&b, "type", "mig");
    attr_str(&b, "parentUUID", g->uuid);
    attr_str(&b, "profile", p->name);
    common_attrs(&b, inv, g);
    profile_caps(&b, p);
    dra_gpu_profile_dns(p->name, dns, sizeof dns);
    const char *name = dra_arena_sprintf(a, "gpu-%u-mig-%s-%u-%u", g->minor, dns,
                                         p->gi_profile_id, pl->start);
    dra_err err = finish(&b, dev, name);
    profile_values(p, v);
    return err ? err : consume(a, dev, set, v, pl->start, pl->size);
}

/* ---- slices ------------------------------------------------------------ */

typedef struct slb {
    dra_arena *a;
    const dra_gpu_slice_opts *o;
    dra_resource_slice_spec *v;
    size_t n, cap;
} slb;

static dra_resource_slice_spec *new_slice(slb *s)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        dra_resource_slice_spec *nv = dra_arena_array(s->a, cap, sizeof *nv);
        if (!nv)
            return NULL;
        if (s->n)
            memcpy(nv, s->v, s->n * sizeof *nv);
        s->v = nv;
        s->cap = cap;
    }
    dra_resource_slice_spec *sp = &s->v[s->n++];
    memset(sp, 0, sizeof *sp);
    sp->driver = DRA_GPU_DRIVER_NAME;
    sp->pool.name = s->o->node_name;
    sp->pool.generation = s->o->pool_generation;
    sp->node_name = s->o->node_name;
    return sp;
}

static int dev_cmp(const void *x, const void *y)
{
    return strcmp(((const dra_device *)x)->name, ((const dra_device *)y)->name);
}

/* Puts |devs| into slices of at most SLICE_MAX_DEVICES. */
static dra_err emit_devices(slb *s, dra_device *devs, size_t n)
{
    for (size_t off = 0; off < n || (off == 0 && n == 0); off += SLICE_MAX_DEVICES) {
        dra_resource_slice_spec *sp = new_slice(s);
        if (!sp)
            return DRA_ENOMEM;
        sp->devices = devs + off;
        sp->n_devices = n - off < SLICE_MAX_DEVICES ? n - off : SLICE_MAX_DEVICES;
        if (n == 0)
            break;
    }
    return DRA_OK;
}

static size_t *gpu_order(dra_arena *a, const dra_gpu_inventory *inv)
{
    size_t *ord = dra_arena_array(a, inv->n_gpus ? inv->n_gpus : 1, sizeof *ord);
    if (!ord)
        return NULL;
    for (size_t i = 0; i < inv->n_gpus; i++) {
        size_t j = i;
        for (; j > 0 && inv->gpus[ord[j - 1]].minor > inv->gpus[i].minor; j--)
            ord[j] = ord[j - 1];
        ord[j] = i;
    }
    return ord;
}

static dra_err static_layout(slb *s, const dra_gpu_inventory *inv, const size_t *ord)
{
    size_t total = 0, n = 0;
    for (size_t i = 0; i < inv->n_gpus; i++)
        total += inv->gpus[i].mig_enabled ? inv->gpus[i].n_migs : 1;
    dra_device *devs = dra_arena_array(s->a, total ? total : 1, sizeof *devs);
    if (!devs)
        return DRA_ENOMEM;
    for (size_t i = 0; i < inv->n_gpus; i++) {
        const dra_gpu_device *g = &inv->gpus[ord[i]];
        dra_err err = DRA_OK;
        if (!g->mig_enabled)
            err = gpu_device(s->a, inv, g, &devs[n++]);
        for (size_t j = 0; !err && g->mig_enabled && j < g->n_migs; j++)
            err = mig_device(s->a, inv, &g->migs[j], &devs[n++]);
        if (err)
            return err;
    }
    return emit_devices(s, devs, n);
}

/* One GPU's partitionable devices, sorted by name; its counter set in
 * *cs (n_counters 0 when the GPU has no MIG profiles: then the GPU is
 * announced as in default mode, consuming nothing). */
static dra_err gpu_partitions(slb *s, const dra_gpu_inventory *inv, const dra_gpu_device *g,
                              dra_device **out, size_t *n, dra_counter_set *cs)
{
    size_t total = 1;
    long long max[7];
    for (size_t i = 0; i < g->n_profiles; i++)
        total += g->profiles[i].n_placements;
    dra_device *devs = dra_arena_array(s->a, total, sizeof *devs);
    if (!devs)
        return DRA_ENOMEM;
    memset(cs, 0, sizeof *cs);
    *out = devs;
    *n = 1;
    if (!g->n_profiles)
        return gpu_device(s->a, inv, g, &devs[0]);
    unsigned nslices = gpu_maxima(g, max);
    cs->name = dra_arena_sprintf(s->a, "%s-counter-set", g->name);
    if (!cs->name)
        return DRA_ENOMEM;
    cs->counters = counters(s->a, max, 0, nslices, &cs->n_counters);
    dra_err err = cs->counters ? part_gpu(s->a, inv, g, cs->name, max, nslices, &devs[0])
                               : DRA_ENOMEM;
    for (size_t i = 0; !err && i < g->n_profiles; i++)
        for (size_t k = 0; !err && k < g->profiles[i].n_placements; k++)
            err = part_mig(s->a, inv, g, &g->profiles[i], &g->profiles[i].placements[k],
                           cs->name, &devs[(*n)++]);
    qsort(devs, *n, sizeof *devs, dev_cmp);
    return err;
}

static dra_err dynamic_layout(slb *s, const dra_gpu_inventory *inv, const size_t *ord)
{
    dra_counter_set *sets = dra_arena_array(s->a, inv->n_gpus ? inv->n_gpus : 1, sizeof *sets);
    size_t n_sets = 0;
    if (!sets)
        return DRA_ENOMEM;
    size_t first = s->n;
    if (s->o->split_counters) /* the counters slice goes first */
        for (size_t i = 0; i < (inv->n_gpus + SLICE_MAX_COUNTER_SETS - 1) / SLICE_MAX_COUNTER_SETS; i++)
            if (!new_slice(s))
                return DRA_ENOMEM;
    for (size_t i = 0; i < inv->n_gpus; i++) {
        dra_device *devs;
        size_t n;
        dra_counter_set cs;
        dra_err err = gpu_partitions(s, inv, &inv->gpus[ord[i]], &devs, &n, &cs);
        if (err)
            return err;
        size_t at = s->n;
        if ((err = emit_devices(s, devs, n)))
            return err;
        if (!cs.n_counters)
            continue;
        sets[n_sets++] = cs;
        if (!s->o->split_counters) {
            s->v[at].shared_counters = &sets[n_sets - 1];
            s->v[at].n_shared_counters = 1;
        }
    }
    if (!s->o->split_counters)
        return DRA_OK;
    /* Counter sets, at most 8 per slice, in the slices reserved first; a
     * reserved slice left without counters is dropped. */
    size_t reserved = (inv->n_gpus + SLICE_MAX_COUNTER_SETS - 1) / SLICE_MAX_COUNTER_SETS;
    size_t used = (n_sets + SLICE_MAX_COUNTER_SETS - 1) / SLICE_MAX_COUNTER_SETS;
    for (size_t i = 0; i < used; i++) {
        s->v[first + i].shared_counters = sets + i * SLICE_MAX_COUNTER_SETS;
        size_t left = n_sets - i * SLICE_MAX_COUNTER_SETS;
        s->v[first + i].n_shared_counters = left < SLICE_MAX_COUNTER_SETS ? left : SLICE_MAX_COUNTER_SETS;
    }
    if (used < reserved) {
        memmove(s->v + first + used, s->v + first + reserved,
                (s->n - first - reserved) * sizeof *s->v);
        s->n -= reserved - used;
    }
    return DRA_OK;
}

dra_err dra_gpu_slices(const dra_gpu_inventory *inv, const dra_gpu_slice_opts *o, dra_arena *a,
                       dra_resource_slice_spec **out, size_t *n, dra_diag *d)
{
    if (!inv || !o || !a || !out || !n || !o->node_name || !*o->node_name) {
        dra_diag_add(d, "", 0, 0, "dra_gpu_slices: inventory, options and node name are required");
        return DRA_EINVAL;
    }
    *out = NULL;
    *n = 0;
    slb s = {a, o, NULL, 0, 0};
    size_t *ord = gpu_order(a, inv);
    if (!ord)
        return DRA_ENOMEM;
    dra_err err = o->dynamic_mig ? dynamic_layout(&s, inv, ord) : static_layout(&s, inv, ord);
    if (err)
        return err;
    for (size_t i = 0; i < s.n; i++)
        s.v[i].pool.resource_slice_count = (int64_t)s.n;
    *out = s.v;
    *n = s.n;
    return DRA_OK;
}
