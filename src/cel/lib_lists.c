/*
 * lib_lists.c: list functions. The Kubernetes lists library (apiserver
 * pkg/cel/library/lists.go: isSorted, sum, min, max, indexOf,
 * lastIndexOf), cel-go's ext.Lists (slice; flatten at version 1;
 * lists.range, distinct, reverse, sort and sortBy's helper at version 2) and ext.Sets (sets.contains,
 * sets.equivalent, sets.intersects). Equality and ordering are the
 * engine's (cel_value_equal / cel_value_compare).
 */
#include "lib_common.h"

#define LIST(v) ((v).u.list)

/* ---- a hash set of list elements ----------------------------------------------
 * distinct() and the sets functions would be quadratic with plain
 * equality scans; the runtime cost is only charged after a call returns,
 * so a quadratic scan over two long lists could run for minutes before
 * the cost limit notices. Elements are hashed (equal values hash alike,
 * across int/uint/double too) and, as a last guard for lists of lists or
 * maps that all hash alike, the number of equality tests is bounded. */
#define LIB_MAX_EQ_TESTS 50000000u

typedef struct hset {
    uint32_t *slots; /* element index + 1; 0 empty */
    size_t mask;
    const cel_value *v;
    uint64_t tests;
} hset;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static uint64_t elem_hash(cel_value v)
{
    if (v.kind == CEL_K_DURATION)
        return mix64((uint64_t)v.u.i ^ 0xd1ULL);
    if (v.kind == CEL_K_TIMESTAMP)
        return mix64((uint64_t)v.u.i * 1000000007ULL + v.n);
    return cel_value_hash(v);
}

static int hset_init(cel_ctx *ctx, hset *h, const cel_value *v, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    h->slots = cel_alloc(ctx, cap * sizeof *h->slots);
    if (!h->slots || n >= UINT32_MAX)
        return -1;
    memset(h->slots, 0, cap * sizeof *h->slots);
    h->mask = cap - 1;
    h->v = v;
    h->tests = 0;
    return 0;
}

/* 1 found, 0 absent (*slot: where to insert), -1 too many tests. */
static int hset_find(hset *h, cel_value x, size_t *slot)
{
    size_t i = (size_t)elem_hash(x) & h->mask;
    for (; h->slots[i]; i = (i + 1) & h->mask) {
        if (++h->tests > LIB_MAX_EQ_TESTS)
            return -1;
        if (cel_value_equal(h->v[h->slots[i] - 1], x) == 1)
            return 1;
    }
    *slot = i;
    return 0;
}

/* Builds a set over |l|. */
static int hset_build(cel_ctx *ctx, hset *h, const cel_list *l)
{
    if (hset_init(ctx, h, l->v, l->n) != 0)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        size_t slot;
        int r = hset_find(h, l->v[i], &slot);
        if (r < 0)
            return -2;
        if (r == 0)
            h->slots[slot] = (uint32_t)(i + 1);
    }
    return 0;
}

static cel_value hset_fail(cel_ctx *ctx, int r)
{
    if (r == -1)
        return cel_error_value(&cel_e_nomem);
    return cel_err(ctx, "too many element comparisons (more than %u)",
                   LIB_MAX_EQ_TESTS);
}

/* ---- Kubernetes lists ------------------------------------------------------- */

static uint64_t cost_traverse(const cel_value *a, size_t n, cel_value r)
{
    (void)n, (void)r;
    return a[0].kind == CEL_K_LIST ? LIST(a[0])->n : 1;
}

static cel_value l_is_sorted(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *l = LIST(a[0]);
    (void)ctx, (void)n;
    for (size_t i = 1; i < l->n; i++) {
        int c;
        if (cel_value_compare(l->v[i - 1], l->v[i], &c) != 0)
            return cel_error_value(&cel_e_no_overload);
        if (c == 1)
            return cel_bool(0);
    }
    return cel_bool(1);
}

/* min (want 1: replace when current > next) and max (want -1). */
static cel_value l_extreme(cel_ctx *ctx, const cel_value *a, int want,
                           const char *name)
{
    const cel_list *l = LIST(a[0]);
    cel_value r;
    if (l->n == 0)
        return cel_err(ctx, "%s called on empty list", name);
    r = l->v[0];
    for (size_t i = 1; i < l->n; i++) {
        int c;
        if (cel_value_compare(r, l->v[i], &c) != 0)
            return cel_error_value(&cel_e_no_overload);
        if (c == want)
            r = l->v[i];
    }
    return r;
}

static cel_value l_min(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return l_extreme(ctx, a, 1, "min");
}

static cel_value l_max(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return l_extreme(ctx, a, -1, "max");
}

static cel_value l_sum_int(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *l = LIST(a[0]);
    int64_t s = 0;
    (void)ctx, (void)n;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].kind != CEL_K_INT)
            return cel_error_value(&cel_e_no_overload);
        if (__builtin_add_overflow(s, l->v[i].u.i, &s))
            return cel_error_value(&cel_e_overflow);
    }
    return cel_int(s);
}

static cel_value l_sum_uint(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *l = LIST(a[0]);
    uint64_t s = 0;
    (void)ctx, (void)n;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].kind != CEL_K_UINT)
            return cel_error_value(&cel_e_no_overload);
        if (__builtin_add_overflow(s, l->v[i].u.u, &s))
            return cel_error_value(&cel_e_overflow);
    }
    return cel_uint(s);
}

static cel_value l_sum_double(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *l = LIST(a[0]);
    double s = 0;
    (void)ctx, (void)n;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].kind != CEL_K_DOUBLE)
            return cel_error_value(&cel_e_no_overload);
        s += l->v[i].u.d;
    }
    return cel_double(s);
}

static cel_value l_sum_duration(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *l = LIST(a[0]);
    int64_t s = 0;
    (void)n;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].kind != CEL_K_DURATION)
            return cel_error_value(&cel_e_no_overload);
        if (__builtin_add_overflow(s, l->v[i].u.i, &s))
            return cel_err(ctx, "duration overflow");
    }
    return cel_duration(s);
}

static cel_value l_index_of(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *l = LIST(a[0]);
    (void)ctx, (void)n;
    for (size_t i = 0; i < l->n; i++)
        if (cel_value_equal(l->v[i], a[1]) == 1)
            return cel_int((int64_t)i);
    return cel_int(-1);
}

static cel_value l_last_index_of(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *l = LIST(a[0]);
    (void)ctx, (void)n;
    for (size_t i = l->n; i-- > 0;)
        if (cel_value_equal(l->v[i], a[1]) == 1)
            return cel_int((int64_t)i);
    return cel_int(-1);
}

#define CMP_OVS(T)                                                              \
    {.id = "list_" T "_is_sorted_bool", .name = "isSorted", .flags = CEL_OV_MEMBER, \
     .result = "bool", .args = {"list(" T ")"}, .fn = l_is_sorted,              \
     .cost = cost_traverse},                                                     \
    {.id = "list_" T "_max_" T, .name = "max", .flags = CEL_OV_MEMBER,           \
     .result = T, .args = {"list(" T ")"}, .fn = l_max, .cost = cost_traverse},  \
    {.id = "list_" T "_min_" T, .name = "min", .flags = CEL_OV_MEMBER,           \
     .result = T, .args = {"list(" T ")"}, .fn = l_min, .cost = cost_traverse}
#define SUM_OV(T, F)                                                            \
    {.id = "list_" T "_sum_" T, .name = "sum", .flags = CEL_OV_MEMBER,           \
     .result = T, .args = {"list(" T ")"}, .fn = F, .cost = cost_traverse}

static const cel_overload k8s_lists_ovs[] = {
    CMP_OVS("int"), CMP_OVS("uint"), CMP_OVS("double"), CMP_OVS("bool"),
    CMP_OVS("duration"), CMP_OVS("timestamp"), CMP_OVS("string"),
    CMP_OVS("bytes"),
    SUM_OV("int", l_sum_int), SUM_OV("uint", l_sum_uint),
    SUM_OV("double", l_sum_double), SUM_OV("duration", l_sum_duration),
    {.id = "list_a_index_of_int", .name = "indexOf", .flags = CEL_OV_MEMBER,
     .result = "int", .args = {"list(A)", "A"}, .fn = l_index_of,
     .cost = cost_traverse},
    {.id = "list_a_last_index_of_int", .name = "lastIndexOf",
     .flags = CEL_OV_MEMBER, .result = "int", .args = {"list(A)", "A"},
     .fn = l_last_index_of, .cost = cost_traverse},
};

const cel_lib cel_lib_k8s_lists = {
    "kubernetes.lists", k8s_lists_ovs,
    sizeof k8s_lists_ovs / sizeof k8s_lists_ovs[0], NULL, 0, lib_k8s_enabled};

/* ---- ext.Lists -------------------------------------------------------------- */

static cel_value l_slice(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *l = LIST(a[0]);
    int64_t s = a[1].u.i, e = a[2].u.i;
    cel_value r, *items;
    (void)n;
    if (s < 0 || e < 0)
        return cel_err(ctx, "cannot slice(%lld, %lld), negative indexes not supported",
                       (long long)s, (long long)e);
    if (s > e)
        return cel_err(ctx, "cannot slice(%lld, %lld), start index must be less than "
                            "or equal to end index", (long long)s, (long long)e);
    if ((uint64_t)e > l->n)
        return cel_err(ctx, "cannot slice(%lld, %lld), list is length %zu",
                       (long long)s, (long long)e, l->n);
    r = cel_list_new(ctx, (size_t)(e - s), &items);
    if (r.kind != CEL_K_LIST)
        return r;
    if (e > s)
        memcpy(items, l->v + s, (size_t)(e - s) * sizeof *items);
    return r;
}

/* Counts (pass 1, out NULL) or copies the flattened items. Recursion is
 * bounded by |depth| and by how deeply the value itself nests. */
static size_t flatten_into(const cel_list *l, int64_t depth, cel_value *out)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].kind == CEL_K_LIST && depth > 0) {
            k += flatten_into(LIST(l->v[i]), depth - 1, out ? out + k : NULL);
        } else {
            if (out)
                out[k] = l->v[i];
            k++;
        }
    }
    return k;
}

static cel_value l_flatten(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t depth = n > 1 ? a[1].u.i : 1;
    cel_value r, *items;
    size_t cnt;
    if (depth < 0)
        return cel_err(ctx, "level must be non-negative");
    cnt = flatten_into(LIST(a[0]), depth, NULL);
    r = cel_list_new(ctx, cnt, &items);
    if (r.kind != CEL_K_LIST)
        return r;
    flatten_into(LIST(a[0]), depth, items);
    return r;
}

static cel_value l_range(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t cnt = a[0].u.i;
    cel_value r, *items;
    (void)n;
    if (cnt < 0)
        cnt = 0;
    if (cnt > (1 << 24))
        return cel_err(ctx, "lists.range(%lld): size too large", (long long)cnt);
    r = cel_list_new(ctx, (size_t)cnt, &items);
    if (r.kind != CEL_K_LIST)
        return r;
    for (int64_t i = 0; i < cnt; i++)
        items[i] = cel_int(i);
    return r;
}

static cel_value l_reverse(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *l = LIST(a[0]);
    cel_value r, *items;
    (void)n;
    r = cel_list_new(ctx, l->n, &items);
    if (r.kind != CEL_K_LIST)
        return r;
    for (size_t i = 0; i < l->n; i++)
        items[i] = l->v[l->n - 1 - i];
    return r;
}

static cel_value l_distinct(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *l = LIST(a[0]);
    cel_value r, *items;
    hset h;
    size_t k = 0;
    (void)n;
    r = cel_list_new(ctx, l->n, &items);
    if (r.kind != CEL_K_LIST)
        return r;
    if (hset_init(ctx, &h, items, l->n) != 0)
        return hset_fail(ctx, -1);
    for (size_t i = 0; i < l->n; i++) {
        size_t slot;
        int f = hset_find(&h, l->v[i], &slot);
        if (f < 0)
            return hset_fail(ctx, -2);
        if (f == 0) {
            items[k] = l->v[i];
            h.slots[slot] = (uint32_t)(++k);
        }
    }
    ((cel_list *)r.u.list)->n = k;
    return r;
}

/* Stable merge sort of indices by keys; returns 0 or -1 (incomparable). */
static int sort_idx(const cel_value *keys, size_t *idx, size_t *tmp, size_t n)
{
    size_t mid = n / 2, i = 0, j, k = 0;
    if (n < 2)
        return 0;
    if (sort_idx(keys, idx, tmp, mid) || sort_idx(keys, idx + mid, tmp, n - mid))
        return -1;
    j = mid;
    while (i < mid && j < n) {
        int c;
        if (cel_value_compare(keys[idx[j]], keys[idx[i]], &c) != 0)
            return -1;
        tmp[k++] = c < 0 ? idx[j++] : idx[i++];
    }
    while (i < mid)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
    return 0;
}

static cel_value sort_by_keys(cel_ctx *ctx, const cel_list *l, const cel_list *keys)
{
    cel_value r, *items;
    size_t *idx, *tmp;
    if (l->n != keys->n)
        return cel_err(ctx, "@sortByAssociatedKeys() expected a list of the same size "
                            "as the associated keys list, but got %zu and %zu "
                            "elements respectively.", l->n, keys->n);
    if (keys->n > 0) {
        int c;
        if (cel_value_compare(keys->v[0], keys->v[0], &c) != 0)
            return cel_err(ctx, "list elements must be comparable");
    }
    for (size_t i = 0; i < keys->n; i++)
        if (keys->v[i].kind != keys->v[0].kind)
            return cel_err(ctx, "list elements must have the same type");
    r = cel_list_new(ctx, l->n, &items);
    if (r.kind != CEL_K_LIST)
        return r;
    idx = cel_alloc(ctx, (l->n + 1) * sizeof *idx);
    tmp = cel_alloc(ctx, (l->n + 1) * sizeof *tmp);
    if (!idx || !tmp)
        return cel_error_value(&cel_e_nomem);
    for (size_t i = 0; i < l->n; i++)
        idx[i] = i;
    if (sort_idx(keys->v, idx, tmp, l->n) != 0)
        return cel_err(ctx, "list elements must be comparable");
    for (size_t i = 0; i < l->n; i++)
        items[i] = l->v[idx[i]];
    return r;
}

static cel_value l_sort(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return sort_by_keys(ctx, LIST(a[0]), LIST(a[0]));
}

static cel_value l_sort_by_keys(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return sort_by_keys(ctx, LIST(a[0]), LIST(a[1]));
}

/* cel-go's trackers: creating a list costs 10, the call 1, plus the
 * elements produced. */
static uint64_t cost_result_list(const cel_value *a, size_t n, cel_value r)
{
    (void)a, (void)n;
    return 11 + (r.kind == CEL_K_LIST ? LIST(r)->n : 0);
}

/* Quadratic like cel-go's tracker (element size 1 for scalars). */
static uint64_t cost_distinct(const cel_value *a, size_t n, cel_value r)
{
    uint64_t len = a[0].kind == CEL_K_LIST ? LIST(a[0])->n : 0;
    (void)n, (void)r;
    return 11 + cel_tenth(len * len);
}

static uint64_t cost_sort(const cel_value *a, size_t n, cel_value r)
{
    uint64_t len = a[0].kind == CEL_K_LIST ? LIST(a[0])->n : 1, lg = 1;
    (void)n, (void)r;
    while ((1ULL << lg) < len)
        lg++;
    return 11 + cel_tenth(len * lg);
}

static const cel_overload ext_lists_v0_ovs[] = {
    {.id = "list_slice", .name = "slice", .flags = CEL_OV_MEMBER,
     .result = "list(T)", .args = {"list(T)", "int", "int"}, .fn = l_slice,
     .cost = cost_result_list},
};
static const cel_overload ext_lists_v1_ovs[] = {
    {.id = "list_flatten", .name = "flatten", .flags = CEL_OV_MEMBER,
     .result = "list(T)", .args = {"list(list(T))"}, .fn = l_flatten,
     .cost = cost_result_list},
    {.id = "list_flatten_int", .name = "flatten", .flags = CEL_OV_MEMBER,
     .result = "list(dyn)", .args = {"list(dyn)", "int"}, .fn = l_flatten,
     .cost = cost_result_list},
};
#define SORT_OVS(T)                                                             \
    {.id = "list_" T "_sort", .name = "sort", .flags = CEL_OV_MEMBER,            \
     .result = "list(" T ")", .args = {"list(" T ")"}, .fn = l_sort,             \
     .cost = cost_sort},                                                         \
    {.id = "list_" T "_sortByAssociatedKeys", .name = "@sortByAssociatedKeys",   \
     .flags = CEL_OV_MEMBER, .result = "list(T)",                                \
     .args = {"list(T)", "list(" T ")"}, .fn = l_sort_by_keys, .cost = cost_sort}
static const cel_overload ext_lists_v2_ovs[] = {
    {.id = "lists_range", .name = "lists.range", .result = "list(int)",
     .args = {"int"}, .fn = l_range, .cost = cost_result_list},
    {.id = "list_distinct", .name = "distinct", .flags = CEL_OV_MEMBER,
     .result = "list(T)", .args = {"list(T)"}, .fn = l_distinct,
     .cost = cost_distinct},
    {.id = "list_reverse", .name = "reverse", .flags = CEL_OV_MEMBER,
     .result = "list(T)", .args = {"list(T)"}, .fn = l_reverse,
     .cost = cost_result_list},
    SORT_OVS("int"), SORT_OVS("uint"), SORT_OVS("double"), SORT_OVS("bool"),
    SORT_OVS("duration"), SORT_OVS("timestamp"), SORT_OVS("string"),
    SORT_OVS("bytes"),
};

static int lists_v1(const cel_env_info *info)
{
    return lib_lists_version(info) >= 1;
}

static int lists_v2(const cel_env_info *info)
{
    return lib_lists_version(info) >= 2;
}

const cel_lib cel_lib_ext_lists = {
    "cel.lib.ext.lists", ext_lists_v0_ovs,
    sizeof ext_lists_v0_ovs / sizeof ext_lists_v0_ovs[0], NULL, 0, NULL};
const cel_lib cel_lib_ext_lists_v1 = {
    "cel.lib.ext.lists.v1", ext_lists_v1_ovs,
    sizeof ext_lists_v1_ovs / sizeof ext_lists_v1_ovs[0], NULL, 0, lists_v1};
const cel_lib cel_lib_ext_lists_v2 = {
    "cel.lib.ext.lists.v2", ext_lists_v2_ovs,
    sizeof ext_lists_v2_ovs / sizeof ext_lists_v2_ovs[0], NULL, 0, lists_v2};
/* ---- ext.Sets --------------------------------------------------------------- */

/* 1 when every element of |sub| is in |l|, 0 when not, <0 on failure. */
static int contains_all(cel_ctx *ctx, const cel_list *l, const cel_list *sub)
{
    hset h;
    int r = hset_build(ctx, &h, l);
    if (r < 0)
        return r;
    for (size_t i = 0; i < sub->n; i++) {
        size_t slot;
        int f = hset_find(&h, sub->v[i], &slot);
        if (f <= 0)
            return f < 0 ? -2 : 0;
    }
    return 1;
}

static cel_value s_contains(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int r = contains_all(ctx, LIST(a[0]), LIST(a[1]));
    (void)n;
    return r < 0 ? hset_fail(ctx, r) : cel_bool(r);
}

static cel_value s_equivalent(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int r = contains_all(ctx, LIST(a[0]), LIST(a[1]));
    (void)n;
    if (r == 1)
        r = contains_all(ctx, LIST(a[1]), LIST(a[0]));
    return r < 0 ? hset_fail(ctx, r) : cel_bool(r);
}

static cel_value s_intersects(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const cel_list *x = LIST(a[0]);
    hset h;
    int r = hset_build(ctx, &h, LIST(a[1]));
    (void)n;
    if (r < 0)
        return hset_fail(ctx, r);
    for (size_t i = 0; i < x->n; i++) {
        size_t slot;
        int f = hset_find(&h, x->v[i], &slot);
        if (f != 0)
            return f < 0 ? hset_fail(ctx, -2) : cel_bool(1);
    }
    return cel_bool(0);
}

static uint64_t cost_product(const cel_value *a, size_t n, cel_value r)
{
    uint64_t x = a[0].kind == CEL_K_LIST ? LIST(a[0])->n : 1;
    uint64_t y = n > 1 && a[1].kind == CEL_K_LIST ? LIST(a[1])->n : 1;
    (void)r;
    return (x ? x : 1) * (y ? y : 1);
}

static const cel_overload sets_ovs[] = {
    {.id = "list_sets_contains_list", .name = "sets.contains", .result = "bool",
     .args = {"list(T)", "list(T)"}, .fn = s_contains, .cost = cost_product},
    {.id = "list_sets_equivalent_list", .name = "sets.equivalent",
     .result = "bool", .args = {"list(T)", "list(T)"}, .fn = s_equivalent,
     .cost = cost_product},
    {.id = "list_sets_intersects_list", .name = "sets.intersects",
     .result = "bool", .args = {"list(T)", "list(T)"}, .fn = s_intersects,
     .cost = cost_product},
};

const cel_lib cel_lib_ext_sets = {
    "cel.lib.ext.sets", sets_ovs, sizeof sets_ovs / sizeof sets_ovs[0], NULL, 0,
    NULL};
