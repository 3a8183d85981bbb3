/* String-keyed hash map: a dense entry array in insertion order plus an
 * open-addressed slot table of indexes into it (the layout CPython's dict
 * uses), so iteration is deterministic and lookups touch little memory. */
#include <string.h>

#include "dra/base.h"

uint64_t dra_hash(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

void dra_map_init(dra_map *m, const dra_mem *mem)
{
    memset(m, 0, sizeof *m);
    m->mem = mem;
}

void dra_map_fini(dra_map *m)
{
    dra_free(m->mem, m->entries);
    dra_free(m->mem, m->slots);
    m->entries = NULL;
    m->slots = NULL;
    m->n = m->cap = m->live = m->nslots = 0;
}

static size_t probe(const dra_map *m, const char *key, size_t keylen,
                    uint64_t h, int *found)
{
    size_t mask = m->nslots - 1, i = (size_t)h & mask;
    *found = 0;
    for (;;) {
        uint32_t s = m->slots[i];
        if (s == 0)
            return i;
        const dra_map_entry *e = &m->entries[s - 1];
        if (e->key && e->hash == h && e->keylen == keylen &&
            memcmp(e->key, key, keylen) == 0) {
            *found = 1;
            return i;
        }
        i = (i + 1) & mask;
    }
}

/* Rebuild slots (and compact entries) with room for |need| live keys. */
static dra_err rehash(dra_map *m, size_t need)
{
    size_t nslots = 16, j = 0;
    uint32_t *slots;
    while (nslots < need * 2 + 2) {
        if (nslots > (SIZE_MAX / sizeof *slots) / 2 || nslots >= (1u << 31))
            return DRA_ENOMEM;
        nslots *= 2;
    }
    slots = dra_calloc(m->mem, nslots, sizeof *slots);
    if (!slots)
        return DRA_ENOMEM;
    for (size_t i = 0; i < m->n; i++)
        if (m->entries[i].key)
            m->entries[j++] = m->entries[i];
    m->n = j;
    dra_free(m->mem, m->slots);
    m->slots = slots;
    m->nslots = nslots;
    /* The keys are distinct: each takes the first free slot of its chain
     * without a comparison (no visit to the entries' keys). */
    for (size_t i = 0; i < m->n; i++) {
        size_t mask = nslots - 1, s = (size_t)m->entries[i].hash & mask;
        while (slots[s])
            s = (s + 1) & mask;
        slots[s] = (uint32_t)(i + 1);
    }
    return DRA_OK;
}

/* The map's own hash: 8 bytes a step, then mixed so that the low bits
 * the slot mask keeps depend on every byte. Keys here are paths and
 * "namespace/name" strings of tens of bytes, where FNV-1a's byte-wise
 * multiply chain was a tenth of a store's load time. dra_hash stays
 * FNV-1a: fake inventories and caches outside maps derive values from it. */
static uint64_t map_hash(const char *key, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (len * 0xff51afd7ed558ccdull);
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, key, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
        key += 8;
        len -= 8;
    }
    if (len) {
        uint64_t w = 0;
        memcpy(&w, key, len);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    }
    h ^= h >> 33;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 29;
    return h;
}

dra_map_entry *dra_map_find(const dra_map *m, const char *key, size_t keylen)
{
    int found;
    size_t s;
    if (!m->nslots)
        return NULL;
    s = probe(m, key, keylen, map_hash(key, keylen), &found);
    return found ? &m->entries[m->slots[s] - 1] : NULL;
}

void *dra_map_get(const dra_map *m, const char *key, size_t keylen)
{
    dra_map_entry *e = dra_map_find(m, key, keylen);
    return e ? e->val : NULL;
}

dra_err dra_map_put(dra_map *m, const char *key, size_t keylen, void *val)
{
    uint64_t h = map_hash(key, keylen);
    int found = 0;
    size_t s = 0;
    void *ents = m->entries;
    dra_map_entry *e;
    if (m->nslots) {
        s = probe(m, key, keylen, h, &found);
        if (found) {
            m->entries[m->slots[s] - 1].val = val;
            return DRA_OK;
        }
    }
    /* Keep the slot table at most half full, counting tombstoned
     * entries, since they still occupy slots until the next rehash. */
    if ((m->n + 1) * 2 > m->nslots) {
        if (rehash(m, m->live + 1) != DRA_OK)
            return DRA_ENOMEM;
        s = probe(m, key, keylen, h, &found);
    }
    if (dra_grow(m->mem, &ents, &m->cap, m->n + 1, sizeof *m->entries))
        return DRA_ENOMEM;
    m->entries = ents;
    e = &m->entries[m->n];
    e->key = key;
    e->keylen = keylen;
    e->val = val;
    e->hash = h;
    m->slots[s] = (uint32_t)(++m->n);
    m->live++;
    return DRA_OK;
}

int dra_map_del(dra_map *m, const char *key, size_t keylen)
{
    dra_map_entry *e = dra_map_find(m, key, keylen);
    if (!e)
        return 0;
    /* The entry stays as a tombstone so that probe chains through its
     * slot remain intact; rehash drops it. */
    e->key = NULL;
    e->val = NULL;
    m->live--;
    return 1;
}
