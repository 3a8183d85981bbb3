/*
 * fake/inventory.c: reads the fake-GPU inventory (YAML, libyaml's document
 * API) into fk_* structs and writes one node back out. Strict: unknown
 * keys, wrong types and dangling references are errors with line:column,
 * because a typo in a test inventory should not silently become a GPU
 * without MIG. Compiled into both the fake NVML and the gpu module.
 */
#include "inventory.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../nvml_abi.h"

struct fk_block {
    fk_block *next;
    max_align_t align[]; /* payload */
};

typedef struct pctx {
    fk_inventory *inv;
    yaml_document_t *doc;
    char *err;
    size_t errlen;
    int failed;
} pctx;

static void *fk_alloc(fk_inventory *inv, size_t n)
{
    fk_block *b;
    if (n > SIZE_MAX - sizeof *b)
        return NULL;
    if (inv->mem)
        b = inv->mem->realloc(inv->mem->ud, NULL, sizeof *b + n);
    else
        b = malloc(sizeof *b + n);
    if (!b)
        return NULL;
    memset(b, 0, sizeof *b + n);
    b->next = inv->blocks;
    inv->blocks = b;
    return b->align;
}

void fk_inventory_free(fk_inventory *inv)
{
    if (!inv)
        return;
    fk_block *b = inv->blocks;
    while (b) {
        fk_block *next = b->next;
        if (inv->mem)
            inv->mem->free(inv->mem->ud, b);
        else
            free(b);
        b = next;
    }
    memset(inv, 0, sizeof *inv);
}

static int perr(pctx *p, const yaml_node_t *n, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    p->failed = 1;
    int off = 0;
    if (n)
        off = snprintf(p->err, p->errlen, "%lu:%lu: ",
                       (unsigned long)n->start_mark.line + 1,
                       (unsigned long)n->start_mark.column + 1);
    if (off < 0 || (size_t)off >= p->errlen)
        off = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + off, p->errlen - (size_t)off, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *scalar(pctx *p, yaml_node_t *n, const char *what)
{
    if (!n || n->type != YAML_SCALAR_NODE) {
        perr(p, n, "%s: expected a scalar", what);
        return NULL;
    }
    char *s = fk_alloc(p->inv, n->data.scalar.length + 1);
    if (!s) {
        perr(p, n, "out of memory");
        return NULL;
    }
    memcpy(s, n->data.scalar.value, n->data.scalar.length);
    return s;
}

static int uint_of(pctx *p, yaml_node_t *n, const char *what,
                   unsigned long long max, unsigned long long *out)
{
    const char *s = scalar(p, n, what);
    if (!s)
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *end || errno || s[0] == '-' || v > max)
        return perr(p, n, "%s: %s is not a number in 0..%llu", what, s, max);
    *out = v;
    return 0;
}

static int unsigned_of(pctx *p, yaml_node_t *n, const char *what, unsigned *out)
{
    unsigned long long v;
    if (uint_of(p, n, what, 0xFFFFFFFFull, &v))
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int bool_of(pctx *p, yaml_node_t *n, const char *what, int *out)
{
    const char *s = scalar(p, n, what);
    if (!s)
        return -1;
    if (!strcmp(s, "true"))
        *out = 1;
    else if (!strcmp(s, "false"))
        *out = 0;
    else
        return perr(p, n, "%s: expected true or false, not %s", what, s);
    return 0;
}

/* "189471Mi", "80Gi", "85899345920": bytes. */
static int bytes_of(pctx *p, yaml_node_t *n, const char *what,
                    unsigned long long *out)
{
    const char *s = scalar(p, n, what);
    if (!s)
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (!strcmp(end, "Ki"))
        shift = 10;
    else if (!strcmp(end, "Mi"))
        shift = 20;
    else if (!strcmp(end, "Gi"))
        shift = 30;
    else if (*end)
        end = NULL;
    if (!end || end == s || errno || s[0] == '-' || v > (~0ull >> shift))
        return perr(p, n, "%s: %s is not a byte count (digits, then Ki, Mi or Gi)",
                    what, s);
    *out = v << shift;
    return 0;
}

typedef struct keydef {
    const char *key;
    int required;
} keydef;

/* Checks that map |n| has only |keys| and every required one; returns
 * the value node for each key in |vals| (NULL when absent). */
static int map_keys(pctx *p, yaml_node_t *n, const char *what,
                    const keydef *keys, size_t nkeys, yaml_node_t **vals)
{
    if (!n || n->type != YAML_MAPPING_NODE)
        return perr(p, n, "%s: expected a mapping", what);
    for (size_t i = 0; i < nkeys; i++)
        vals[i] = NULL;
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
         pr < n->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
        if (!k || k->type != YAML_SCALAR_NODE)
            return perr(p, k, "%s: keys must be strings", what);
        const char *ks = (const char *)k->data.scalar.value;
        size_t i = 0;
        while (i < nkeys && strcmp(keys[i].key, ks))
            i++;
        if (i == nkeys)
            return perr(p, k, "%s: unknown key \"%s\"", what, ks);
        if (vals[i])
            return perr(p, k, "%s: duplicate key \"%s\"", what, ks);
        vals[i] = yaml_document_get_node(p->doc, pr->value);
    }
    for (size_t i = 0; i < nkeys; i++)
        if (keys[i].required && !vals[i])
            return perr(p, n, "%s: missing key \"%s\"", what, keys[i].key);
    return 0;
}

static size_t seq_len(yaml_node_t *n)
{
    return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static yaml_node_t *seq_at(pctx *p, yaml_node_t *n, size_t i)
{
    return yaml_document_get_node(p->doc, n->data.sequence.items.start[i]);
}

static int need_seq(pctx *p, yaml_node_t *n, const char *what)
{
    if (!n || n->type != YAML_SEQUENCE_NODE)
        return perr(p, n, "%s: expected a list", what);
    return 0;
}

/* ---- MIG profiles ---------------------------------------------------- */

enum { PK_NAME, PK_INDEX, PK_ID, PK_SLICES, PK_INST, PK_SM, PK_CE, PK_DEC,
       PK_ENC, PK_JPEG, PK_OFA, PK_MEM, PK_PSIZE, PK_PLACE, PK_N };
static const keydef profile_keys[PK_N] = {
    {"name", 1}, {"index", 1}, {"id", 1}, {"slices", 1}, {"instances", 1},
    {"multiprocessors", 1}, {"copyEngines", 1}, {"decoders", 1},
    {"encoders", 1}, {"jpegEngines", 1}, {"ofaEngines", 1},
    {"memoryMiB", 1}, {"placementSize", 1}, {"placements", 1}};

static int parse_profile(pctx *p, yaml_node_t *n, fk_profile *pf)
{
    yaml_node_t *v[PK_N];
    if (map_keys(p, n, "MIG profile", profile_keys, PK_N, v))
        return -1;
    unsigned *u[] = {NULL, &pf->index, &pf->id, &pf->slices, &pf->instances,
                     &pf->multiprocessors, &pf->copy_engines, &pf->decoders,
                     &pf->encoders, &pf->jpeg_engines, &pf->ofa_engines};
    if (!(pf->name = scalar(p, v[PK_NAME], "name")))
        return -1;
    for (int i = PK_INDEX; i <= PK_OFA; i++)
        if (unsigned_of(p, v[i], profile_keys[i].key, u[i]))
            return -1;
    if (pf->index >= NV_GI_PROFILE_COUNT)
        return perr(p, v[PK_INDEX], "index: %u is not an NVML GPU instance profile (0..%d)",
                    pf->index, NV_GI_PROFILE_COUNT - 1);
    if (uint_of(p, v[PK_MEM], "memoryMiB", ~0ull >> 20, &pf->memory_mib) ||
        unsigned_of(p, v[PK_PSIZE], "placementSize", &pf->placement_size) ||
        need_seq(p, v[PK_PLACE], "placements"))
        return -1;
    if (pf->placement_size < 1 || pf->placement_size > 8)
        return perr(p, v[PK_PSIZE], "placementSize: must be 1..8");
    pf->n_starts = seq_len(v[PK_PLACE]);
    pf->starts = fk_alloc(p->inv, (pf->n_starts + 1) * sizeof *pf->starts);
    if (!pf->starts)
        return perr(p, n, "out of memory");
    for (size_t i = 0; i < pf->n_starts; i++) {
        yaml_node_t *it = seq_at(p, v[PK_PLACE], i);
        if (unsigned_of(p, it, "placements[]", &pf->starts[i]))
            return -1;
        if (pf->starts[i] + pf->placement_size > 8)
            return perr(p, it, "placement %u+%u goes beyond 8 memory slices",
                        pf->starts[i], pf->placement_size);
    }
    return 0;
}

static int parse_sets(pctx *p, yaml_node_t *n)
{
    fk_inventory *inv = p->inv;
    if (!n || n->type != YAML_MAPPING_NODE)
        return perr(p, n, "migProfiles: expected a mapping of set name to profiles");
    size_t cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    inv->sets = fk_alloc(inv, (cnt + 1) * sizeof *inv->sets);
    if (!inv->sets)
        return perr(p, n, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        yaml_node_pair_t *pr = n->data.mapping.pairs.start + i;
        fk_profile_set *s = &inv->sets[i];
        yaml_node_t *list = yaml_document_get_node(p->doc, pr->value);
        if (!(s->name = scalar(p, yaml_document_get_node(p->doc, pr->key), "set name")) ||
            need_seq(p, list, s->name))
            return -1;
        s->n = seq_len(list);
        s->v = fk_alloc(inv, (s->n + 1) * sizeof *s->v);
        if (!s->v)
            return perr(p, n, "out of memory");
        for (size_t j = 0; j < s->n; j++)
            if (parse_profile(p, seq_at(p, list, j), &s->v[j]))
                return -1;
        inv->n_sets = i + 1;
    }
    return 0;
}

/* ---- GPUs ------------------------------------------------------------- */

static const char *const arch_words[] = {
    [NV_ARCH_KEPLER] = "Kepler", [NV_ARCH_MAXWELL] = "Maxwell",
    [NV_ARCH_PASCAL] = "Pascal", [NV_ARCH_VOLTA] = "Volta",
    [NV_ARCH_TURING] = "Turing", [NV_ARCH_AMPERE] = "Ampere",
    [NV_ARCH_ADA] = "Ada Lovelace", [NV_ARCH_HOPPER] = "Hopper",
    [NV_ARCH_BLACKWELL] = "Blackwell"};

static const char *const brand_words[] = {
    "Unknown", "Quadro", "Tesla", "NVS", "Grid", "GeForce", "Titan",
    "NvidiaVApps", "NvidiaVPC", "NvidiaVCS", "NvidiaVWS", "NvidiaCloudGaming",
    "QuadroRTX", "NvidiaRTX", "Nvidia", "GeForceRTX", "TitanRTX"};

static int word_index(const char *const *words, size_t n, const char *w)
{
    for (size_t i = 0; i < n; i++)
        if (words[i] && !strcmp(words[i], w))
            return (int)i;
    return -1;
}

static const fk_profile_set *find_set(const fk_inventory *inv, const char *name)
{
    for (size_t i = 0; i < inv->n_sets; i++)
        if (!strcmp(inv->sets[i].name, name))
            return &inv->sets[i];
    return NULL;
}

enum { MK_PROFILE, MK_START, MK_UUID, MK_GI, MK_CI, MK_N };
static const keydef mig_keys[MK_N] = {
    {"profile", 1}, {"start", 1}, {"uuid", 1}, {"gi", 0}, {"ci", 0}};

static int parse_mig(pctx *p, yaml_node_t *n, const fk_profile_set *set, fk_mig *m)
{
    yaml_node_t *v[MK_N];
    if (map_keys(p, n, "MIG device", mig_keys, MK_N, v))
        return -1;
    const char *pname = scalar(p, v[MK_PROFILE], "profile");
    if (!pname || unsigned_of(p, v[MK_START], "start", &m->start) ||
        !(m->uuid = scalar(p, v[MK_UUID], "uuid")))
        return -1;
    for (size_t i = 0; i < set->n; i++)
        if (!strcmp(set->v[i].name, pname))
            m->profile = &set->v[i];
    if (!m->profile)
        return perr(p, v[MK_PROFILE], "profile: no profile \"%s\" in set %s",
                    pname, set->name);
    int ok = 0;
    for (size_t i = 0; i < m->profile->n_starts; i++)
        ok |= m->profile->starts[i] == m->start;
    if (!ok)
        return perr(p, v[MK_START], "start: %u is not a placement of %s",
                    m->start, pname);
    m->gi = fk_default_gi(m->start, m->profile->placement_size);
    m->ci = 0;
    if (v[MK_GI] && unsigned_of(p, v[MK_GI], "gi", &m->gi))
        return -1;
    if (v[MK_CI] && unsigned_of(p, v[MK_CI], "ci", &m->ci))
        return -1;
    if (m->gi > 14 || m->ci > 7)
        return perr(p, n, "gi must be 0..14 and ci 0..7");
    return 0;
}

static int check_overlap(pctx *p, yaml_node_t *n, const fk_gpu *g)
{
    for (size_t i = 0; i < g->n_migs; i++) {
        const fk_mig *a = &g->migs[i];
        for (size_t j = 0; j < i; j++) {
            const fk_mig *b = &g->migs[j];
            unsigned ae = a->start + a->profile->placement_size;
            unsigned be = b->start + b->profile->placement_size;
            if (a->gi == b->gi || (a->start < be && b->start < ae))
                return perr(p, n, "MIG devices %s and %s overlap", b->uuid, a->uuid);
        }
    }
    return 0;
}

enum { GK_PROFILES, GK_ENABLED, GK_MAX, GK_DEVICES, GK_N };
static const keydef gmig_keys[GK_N] = {
    {"profiles", 1}, {"enabled", 0}, {"maxDevices", 0}, {"devices", 0}};

static int parse_gpu_mig(pctx *p, yaml_node_t *n, fk_gpu *g)
{
    yaml_node_t *v[GK_N];
    if (map_keys(p, n, "mig", gmig_keys, GK_N, v))
        return -1;
    const char *sname = scalar(p, v[GK_PROFILES], "profiles");
    if (!sname)
        return -1;
    if (!(g->profiles = find_set(p->inv, sname)))
        return perr(p, v[GK_PROFILES], "profiles: no set \"%s\" under migProfiles", sname);
    g->mig_capable = 1;
    g->max_mig_devices = 7;
    if ((v[GK_ENABLED] && bool_of(p, v[GK_ENABLED], "enabled", &g->mig_enabled)) ||
        (v[GK_MAX] && unsigned_of(p, v[GK_MAX], "maxDevices", &g->max_mig_devices)))
        return -1;
    if (!v[GK_DEVICES])
        return 0;
    if (need_seq(p, v[GK_DEVICES], "devices"))
        return -1;
    if (!g->mig_enabled && seq_len(v[GK_DEVICES]))
        return perr(p, v[GK_DEVICES], "devices: MIG devices need enabled: true");
    g->n_migs = seq_len(v[GK_DEVICES]);
    if (g->n_migs > g->max_mig_devices)
        return perr(p, v[GK_DEVICES], "devices: more than maxDevices (%u)",
                    g->max_mig_devices);
    g->migs = fk_alloc(p->inv, (g->n_migs + 1) * sizeof *g->migs);
    if (!g->migs)
        return perr(p, n, "out of memory");
    for (size_t i = 0; i < g->n_migs; i++)
        if (parse_mig(p, seq_at(p, v[GK_DEVICES], i), g->profiles, &g->migs[i]))
            return -1;
    return check_overlap(p, v[GK_DEVICES], g);
}

/* "0000:3b:00.0" or "00000000:3B:00.0" -> NVML's "00000000:3B:00.0". */
static int bus_id_of(pctx *p, yaml_node_t *n, const char **out)
{
    const char *s = scalar(p, n, "pciBusId");
    unsigned dom, bus, dev, fn;
    char tail;
    if (!s)
        return -1;
    if (sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 ||
        bus > 0xff || dev > 0x1f || fn > 7)
        return perr(p, n, "pciBusId: %s is not domain:bus:device.function", s);
    char *b = fk_alloc(p->inv, NV_PCI_BUS_ID);
    if (!b)
        return perr(p, n, "out of memory");
    snprintf(b, NV_PCI_BUS_ID, "%08X:%02X:%02X.%X", dom, bus, dev, fn);
    *out = b;
    return 0;
}

enum { UK_MINOR, UK_UUID, UK_NAME, UK_BRAND, UK_ARCH, UK_CC, UK_MEM, UK_BUS,
       UK_ROOT, UK_DEVID, UK_ADDR, UK_MIG, UK_N };
static const keydef gpu_keys[UK_N] = {
    {"minor", 1}, {"uuid", 1}, {"name", 1}, {"brand", 1}, {"architecture", 1},
    {"computeCapability", 1}, {"memory", 1}, {"pciBusId", 1},
    {"pcieRoot", 0}, {"pciDeviceId", 0}, {"addressingMode", 0}, {"mig", 0}};

static int parse_gpu_words(pctx *p, yaml_node_t **v, fk_gpu *g)
{
    int w = word_index(brand_words, sizeof brand_words / sizeof *brand_words, g->brand);
    if (w < 0)
        return perr(p, v[UK_BRAND], "brand: unknown brand \"%s\" (go-nvlib words: Nvidia, Tesla, ...)",
                    g->brand);
    g->brand_value = (unsigned)w;
    w = word_index(arch_words, sizeof arch_words / sizeof *arch_words, g->architecture);
    if (w < 0)
        return perr(p, v[UK_ARCH], "architecture: unknown \"%s\"", g->architecture);
    g->arch_value = (unsigned)w;
    const char *cc = scalar(p, v[UK_CC], "computeCapability");
    char tail;
    if (!cc || sscanf(cc, "%d.%d%c", &g->cc_major, &g->cc_minor, &tail) != 2 ||
        g->cc_major < 0 || g->cc_minor < 0)
        return perr(p, v[UK_CC], "computeCapability: expected major.minor");
    g->addressing_mode = -1;
    if (v[UK_ADDR]) {
        static const char *const modes[] = {"None", "HMM", "ATS"};
        const char *m = scalar(p, v[UK_ADDR], "addressingMode");
        if (!m)
            return -1;
        g->addressing_mode = word_index(modes, 3, m);
        if (g->addressing_mode < 0)
            return perr(p, v[UK_ADDR], "addressingMode: expected None, HMM or ATS");
    }
    return 0;
}

static int parse_gpu(pctx *p, yaml_node_t *n, fk_gpu *g)
{
    yaml_node_t *v[UK_N];
    if (map_keys(p, n, "gpu", gpu_keys, UK_N, v))
        return -1;
    if (unsigned_of(p, v[UK_MINOR], "minor", &g->minor) ||
        !(g->uuid = scalar(p, v[UK_UUID], "uuid")) ||
        !(g->name = scalar(p, v[UK_NAME], "name")) ||
        !(g->brand = scalar(p, v[UK_BRAND], "brand")) ||
        !(g->architecture = scalar(p, v[UK_ARCH], "architecture")) ||
        bytes_of(p, v[UK_MEM], "memory", &g->memory_bytes) ||
        bus_id_of(p, v[UK_BUS], &g->pci_bus_id) || parse_gpu_words(p, v, g))
        return -1;
    if (strlen(g->uuid) >= NV_UUID_BUFFER || strlen(g->name) >= NV_NAME_BUFFER)
        return perr(p, n, "uuid and name must be shorter than %d bytes", NV_NAME_BUFFER);
    if (v[UK_ROOT] && !(g->pcie_root = scalar(p, v[UK_ROOT], "pcieRoot")))
        return -1;
    g->pci_device_id = 0x10de; /* vendor NVIDIA in the low half */
    if (v[UK_DEVID] && unsigned_of(p, v[UK_DEVID], "pciDeviceId", &g->pci_device_id))
        return -1;
    return v[UK_MIG] ? parse_gpu_mig(p, v[UK_MIG], g) : 0;
}

/* ---- nodes ------------------------------------------------------------ */

static int parse_fails(pctx *p, yaml_node_t *n, fk_node *node)
{
    if (!n || n->type != YAML_MAPPING_NODE)
        return perr(p, n, "fail: expected a mapping of NVML function to return code");
    node->n_fails = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    node->fails = fk_alloc(p->inv, (node->n_fails + 1) * sizeof *node->fails);
    if (!node->fails)
        return perr(p, n, "out of memory");
    for (size_t i = 0; i < node->n_fails; i++) {
        yaml_node_pair_t *pr = n->data.mapping.pairs.start + i;
        yaml_node_t *vn = yaml_document_get_node(p->doc, pr->value);
        const char *code;
        if (!(node->fails[i].func = scalar(p, yaml_document_get_node(p->doc, pr->key), "fail")) ||
            !(code = scalar(p, vn, "fail code")))
            return -1;
        if ((node->fails[i].code = fk_return_code(code)) < 0)
            return perr(p, vn, "fail: unknown NVML return code %s", code);
    }
    return 0;
}

enum { NK_NAME, NK_DRIVER, NK_CUDA, NK_GPUS, NK_FAIL, NK_N };
static const keydef node_keys[NK_N] = {
    {"name", 1}, {"driverVersion", 1}, {"cudaDriverVersion", 1}, {"gpus", 1},
    {"fail", 0}};

static int parse_node(pctx *p, yaml_node_t *n, fk_node *node)
{
    yaml_node_t *v[NK_N];
    unsigned cuda;
    if (map_keys(p, n, "node", node_keys, NK_N, v) ||
        !(node->name = scalar(p, v[NK_NAME], "name")) ||
        !(node->driver_version = scalar(p, v[NK_DRIVER], "driverVersion")) ||
        unsigned_of(p, v[NK_CUDA], "cudaDriverVersion", &cuda) ||
        need_seq(p, v[NK_GPUS], "gpus"))
        return -1;
    if (strlen(node->driver_version) >= NV_DRIVER_VERSION_BUFFER)
        return perr(p, v[NK_DRIVER], "driverVersion: too long");
    node->cuda_version = (int)(cuda & 0x7fffffff);
    node->n_gpus = seq_len(v[NK_GPUS]);
    node->gpus = fk_alloc(p->inv, (node->n_gpus + 1) * sizeof *node->gpus);
    if (!node->gpus)
        return perr(p, n, "out of memory");
    for (size_t i = 0; i < node->n_gpus; i++) {
        if (parse_gpu(p, seq_at(p, v[NK_GPUS], i), &node->gpus[i]))
            return -1;
        for (size_t j = 0; j < i; j++)
            if (node->gpus[j].minor == node->gpus[i].minor ||
                !strcmp(node->gpus[j].uuid, node->gpus[i].uuid))
                return perr(p, seq_at(p, v[NK_GPUS], i),
                            "gpu: minor %u or uuid %s repeats an earlier GPU",
                            node->gpus[i].minor, node->gpus[i].uuid);
    }
    return v[NK_FAIL] ? parse_fails(p, v[NK_FAIL], node) : 0;
}

static int parse_root(pctx *p, yaml_node_t *root)
{
    static const keydef keys[] = {{"migProfiles", 0}, {"nodes", 1}};
    yaml_node_t *v[2];
    if (map_keys(p, root, "inventory", keys, 2, v))
        return -1;
    if (v[0] && parse_sets(p, v[0]))
        return -1;
    if (need_seq(p, v[1], "nodes"))
        return -1;
    fk_inventory *inv = p->inv;
    inv->n_nodes = seq_len(v[1]);
    inv->nodes = fk_alloc(inv, (inv->n_nodes + 1) * sizeof *inv->nodes);
    if (!inv->nodes)
        return perr(p, root, "out of memory");
    for (size_t i = 0; i < inv->n_nodes; i++) {
        if (parse_node(p, seq_at(p, v[1], i), &inv->nodes[i]))
            return -1;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(inv->nodes[j].name, inv->nodes[i].name))
                return perr(p, seq_at(p, v[1], i), "node %s appears twice",
                            inv->nodes[i].name);
    }
    return 0;
}

int fk_inventory_parse(fk_inventory *inv, const dra_mem *mem, const char *text,
                       size_t len, char *err, size_t errlen)
{
    memset(inv, 0, sizeof *inv);
    inv->mem = mem;
    pctx p = {inv, NULL, err, errlen, 0};
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, errlen, "%lu:%lu: %s", (unsigned long)parser.problem_mark.line + 1,
                 (unsigned long)parser.problem_mark.column + 1,
                 parser.problem ? parser.problem : "bad YAML");
        yaml_parser_delete(&parser);
        return -3;
    }
    p.doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    int rc = root ? parse_root(&p, root) : perr(&p, NULL, "empty inventory");
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc)
        fk_inventory_free(inv);
    return rc;
}

int fk_inventory_load(fk_inventory *inv, const dra_mem *mem, const char *path,
                      char *err, size_t errlen)
{
    memset(inv, 0, sizeof *inv);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -2;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = NULL;
    for (;;) {
        char *nb = mem ? mem->realloc(mem->ud, buf, cap) : realloc(buf, cap);
        if (!nb)
            break;
        buf = nb;
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap || cap >= (64u << 20))
            break;
        cap *= 2;
    }
    int bad = !buf || ferror(f) || len == cap;
    fclose(f);
    char msg[512];
    int rc = -1;
    if (bad)
        snprintf(msg, sizeof msg, "cannot read (or larger than 64 MiB)");
    else
        rc = fk_inventory_parse(inv, mem, buf, len, msg, sizeof msg);
    if (rc)
        snprintf(err, errlen, "%s:%s", path, msg);
    if (mem)
        mem->free(mem->ud, buf);
    else
        free(buf);
    return rc;
}

const fk_node *fk_inventory_node(const fk_inventory *inv, const char *name)
{
    for (size_t i = 0; i < inv->n_nodes; i++)
        if (!name || !strcmp(inv->nodes[i].name, name))
            return &inv->nodes[i];
    return NULL;
}

unsigned fk_default_gi(unsigned start, unsigned size)
{
    if (size >= 8)
        return 0;
    if (size >= 4)
        return 1 + start / 4;
    if (size >= 2)
        return 3 + start / 2;
    return 7 + start;
}

unsigned fk_cap_minor_gi(unsigned gpu, unsigned gi)
{
    return 3 + gpu * 135 + gi * 9;
}

unsigned fk_cap_minor_ci(unsigned gpu, unsigned gi, unsigned ci)
{
    return fk_cap_minor_gi(gpu, gi) + 1 + ci;
}

static const struct {
    const char *name;
    int code;
} return_names[] = {
    {"SUCCESS", NV_SUCCESS}, {"UNINITIALIZED", NV_ERROR_UNINITIALIZED},
    {"INVALID_ARGUMENT", NV_ERROR_INVALID_ARGUMENT},
    {"NOT_SUPPORTED", NV_ERROR_NOT_SUPPORTED}, {"NO_PERMISSION", NV_ERROR_NO_PERMISSION},
    {"NOT_FOUND", NV_ERROR_NOT_FOUND}, {"DRIVER_NOT_LOADED", NV_ERROR_DRIVER_NOT_LOADED},
    {"TIMEOUT", NV_ERROR_TIMEOUT}, {"GPU_IS_LOST", NV_ERROR_GPU_IS_LOST},
    {"RESET_REQUIRED", NV_ERROR_RESET_REQUIRED},
    {"LIB_RM_VERSION_MISMATCH", NV_ERROR_LIB_RM_VERSION_MISMATCH},
    {"IN_USE", NV_ERROR_IN_USE}, {"MEMORY", NV_ERROR_MEMORY},
    {"NO_DATA", NV_ERROR_NO_DATA}, {"UNKNOWN", NV_ERROR_UNKNOWN}};

int fk_return_code(const char *name)
{
    for (size_t i = 0; i < sizeof return_names / sizeof *return_names; i++)
        if (!strcmp(return_names[i].name, name))
            return return_names[i].code;
    return -1;
}

/* ---- writing one node back -------------------------------------------- */

static int uses_set(const fk_node *node, const fk_profile_set *s)
{
    for (size_t i = 0; i < node->n_gpus; i++)
        if (node->gpus[i].profiles == s)
            return 1;
    return 0;
}

/* A YAML double-quoted scalar: names and UUIDs come back byte for byte. */
static void put_q(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void write_profile(FILE *f, const fk_profile *pf)
{
    fprintf(f, "  - {name: ");
    put_q(f, pf->name);
    fprintf(f, ", index: %u, id: %u, slices: %u, instances: %u, "
               "multiprocessors: %u, copyEngines: %u, decoders: %u, encoders: %u, "
               "jpegEngines: %u, ofaEngines: %u, memoryMiB: %llu, placementSize: %u, "
               "placements: [",
            pf->index, pf->id, pf->slices, pf->instances,
            pf->multiprocessors, pf->copy_engines, pf->decoders, pf->encoders,
            pf->jpeg_engines, pf->ofa_engines, pf->memory_mib, pf->placement_size);
    for (size_t i = 0; i < pf->n_starts; i++)
        fprintf(f, "%s%u", i ? ", " : "", pf->starts[i]);
    fprintf(f, "]}\n");
}

static void field_q(FILE *f, const char *indent_key, const char *v)
{
    fputs(indent_key, f);
    put_q(f, v);
    fputc('\n', f);
}

static void write_gpu(FILE *f, const fk_gpu *g)
{
    fprintf(f, "  - minor: %u\n", g->minor);
    field_q(f, "    uuid: ", g->uuid);
    field_q(f, "    name: ", g->name);
    field_q(f, "    brand: ", g->brand);
    field_q(f, "    architecture: ", g->architecture);
    fprintf(f, "    computeCapability: \"%d.%d\"\n    memory: \"%llu\"\n"
               "    pciBusId: \"%s\"\n    pciDeviceId: 0x%08X\n",
            g->cc_major, g->cc_minor, g->memory_bytes, g->pci_bus_id, g->pci_device_id);
    if (g->pcie_root)
        field_q(f, "    pcieRoot: ", g->pcie_root);
    if (g->addressing_mode >= 0)
        fprintf(f, "    addressingMode: %s\n",
                g->addressing_mode == NV_ADDRESSING_ATS   ? "ATS"
                : g->addressing_mode == NV_ADDRESSING_HMM ? "HMM"
                                                          : "None");
    if (!g->mig_capable)
        return;
    fprintf(f, "    mig:\n");
    field_q(f, "      profiles: ", g->profiles->name);
    fprintf(f, "      enabled: %s\n      maxDevices: %u\n", g->mig_enabled ? "true" : "false",
            g->max_mig_devices);
    if (g->n_migs)
        fprintf(f, "      devices:\n");
    for (size_t i = 0; i < g->n_migs; i++) {
        fprintf(f, "      - {profile: ");
        put_q(f, g->migs[i].profile->name);
        fprintf(f, ", start: %u, uuid: ", g->migs[i].start);
        put_q(f, g->migs[i].uuid);
        fprintf(f, ", gi: %u, ci: %u}\n", g->migs[i].gi, g->migs[i].ci);
    }
}

int fk_inventory_write_node(const fk_inventory *inv, const fk_node *node, FILE *f)
{
    fprintf(f, "# Fake GPUs of one node (written by dra-fake-driver-root).\n");
    int any = 0;
    for (size_t i = 0; i < inv->n_sets; i++) {
        if (!uses_set(node, &inv->sets[i]))
            continue;
        if (!any++)
            fprintf(f, "migProfiles:\n");
        fprintf(f, "  ");
        put_q(f, inv->sets[i].name);
        fprintf(f, ":\n");
        for (size_t j = 0; j < inv->sets[i].n; j++)
            write_profile(f, &inv->sets[i].v[j]);
    }
    fprintf(f, "nodes:\n");
    field_q(f, "- name: ", node->name);
    field_q(f, "  driverVersion: ", node->driver_version);
    fprintf(f, "  cudaDriverVersion: %d\n", node->cuda_version);
    if (node->n_fails) {
        fprintf(f, "  fail:\n");
        for (size_t i = 0; i < node->n_fails; i++)
            for (size_t j = 0; j < sizeof return_names / sizeof *return_names; j++)
                if (return_names[j].code == node->fails[i].code) {
                    fprintf(f, "    ");
                    put_q(f, node->fails[i].func);
                    fprintf(f, ": %s\n", return_names[j].name);
                    break;
                }
    }
    fprintf(f, "  gpus:\n");
    for (size_t i = 0; i < node->n_gpus; i++)
        write_gpu(f, &node->gpus[i]);
    return ferror(f) ? -1 : 0;
}
