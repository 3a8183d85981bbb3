/*
 * validate_slice.c: ResourceSlice spec rules (driver, pool, node
 * selection, devices with attributes, capacities and request policies,
 * counters, taints, binding conditions, shared counter sets), with the
 * limits of resource.k8s.io/v1 in Kubernetes 1.35.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "validate_int.h"

#define SLICE_MAX_DEVICES 128
#define SLICE_MAX_DEVICES_ADVANCED 64 /* with taints or consumesCounters */
#define MAX_ATTRS_AND_CAPS 32
#define ATTR_MAX_VALUE_LEN 64
#define ATTR_KEY_TRUNC (63 + 1 + 32)
#define MAX_TAINTS 16
#define MAX_COUNTER_SETS 8
#define MAX_COUNTERS_PER_SET 32
#define MAX_CONSUMPTIONS 2
#define MAX_COUNTERS_PER_CONSUMPTION 32
#define MAX_VALID_VALUES 10
#define MAX_BINDING_CONDITIONS 4

static const char *const taint_effects[] = {"NoExecute", "NoSchedule", "None"};

static void qstr(const dra_quantity *q, char *buf, size_t cap)
{
    dra_quantity_str(q, buf, cap);
}

/* ---- request policy (consumable capacity) ------------------------------ */

/* Quantity.Value(): the value rounded up to an integer. Callers have
 * checked 0 <= q <= MaxInt64. */
static int64_t q_value(const dra_quantity *q)
{
    __int128 m = q->mant;
    int32_t s = q->scale;
    while (s > 0) {
        m *= 10;
        s--;
    }
    if (s < 0) {
        __int128 div = 1;
        while (s < 0 && div < ((__int128)1 << 100)) {
            div *= 10;
            s++;
        }
        m = s < 0 ? (m > 0) : (m + div - 1) / div;
    }
    return (int64_t)m;
}

static int q_in_int64(vctx *v, const dra_quantity *q, const char *field)
{
    dra_quantity maxi = dra_quantity_from_int64(INT64_MAX, DRA_QTY_DECIMAL_SI);
    char s[64];
    if (!q)
        return 1;
    qstr(q, s, sizeof s);
    if (dra_quantity_sign(q) < 0) {
        v_field(v, field);
        v_invalid_str(v, s, "must be greater than or equal to 0");
        v_pop(v);
        return 0;
    }
    if (dra_quantity_cmp(q, &maxi) > 0) {
        v_field(v, field);
        v_invalid_str(v, s, "must not be larger than 9223372036854775807");
        v_pop(v);
        return 0;
    }
    return 1;
}

static void v_range_step(vctx *v, const dra_quantity *val,
                         const dra_quantity *min, const dra_quantity *step)
{
    int64_t sv = q_value(step), mv = q_value(min), vv = q_value(val);
    char a[64], b[64], c[64], msg[256];
    if (sv == 0 || (vv - mv) % sv == 0)
        return;
    qstr(val, a, sizeof a);
    qstr(step, b, sizeof b);
    qstr(min, c, sizeof c);
    snprintf(msg, sizeof msg,
             "value is not a multiple of a given step (%s) from (%s)", b, c);
    v_field(v, "step");
    v_invalid_str(v, a, msg);
    v_pop(v);
}

static void v_range_steps(vctx *v, const dra_quantity *def,
                          const dra_quantity *cap, const dra_capacity_range *r);

static void v_valid_range(vctx *v, const dra_quantity *def,
                          const dra_quantity *cap, const dra_capacity_range *r)
{
    char a[64], b[64], msg[256];
    if (!r->min) {
        v_field(v, "min");
        v_required(v, "required when validRange is defined");
        v_pop(v);
        return;
    }
    qstr(cap, b, sizeof b);
    if (dra_quantity_cmp(r->min, cap) > 0) {
        qstr(r->min, a, sizeof a);
        snprintf(msg, sizeof msg, "min is larger than capacity value: %s", b);
        v_field(v, "min");
        v_invalid_str(v, a, msg);
        v_pop(v);
    }
    if (dra_quantity_cmp(def, r->min) < 0) {
        char m[64];
        qstr(def, a, sizeof a);
        qstr(r->min, m, sizeof m);
        snprintf(msg, sizeof msg, "default is less than min: %s", m);
        v_field(v, "default");
        v_invalid_str(v, a, msg);
        v_pop(v);
    }
    if (r->max) {
        char mx[64];
        qstr(r->max, mx, sizeof mx);
        if (dra_quantity_cmp(r->min, r->max) > 0) {
            qstr(r->min, a, sizeof a);
            snprintf(msg, sizeof msg, "min is larger than max: %s", mx);
            v_field(v, "max");
            v_invalid_str(v, a, msg);
            v_pop(v);
        }
        if (dra_quantity_cmp(r->max, cap) > 0) {
            snprintf(msg, sizeof msg, "max is larger than capacity value: %s", b);
            v_field(v, "max");
            v_invalid_str(v, mx, msg);
            v_pop(v);
        }
        if (dra_quantity_cmp(def, r->max) > 0) {
            qstr(def, a, sizeof a);
            snprintf(msg, sizeof msg, "default is more than max: %s", mx);
            v_field(v, "default");
            v_invalid_str(v, a, msg);
            v_pop(v);
        }
    }
    v_range_steps(v, def, cap, r);
}

/* The step: positive, one step from min still within the capacity, and
 * default and max a whole number of steps above min. */
static void v_range_steps(vctx *v, const dra_quantity *def,
                          const dra_quantity *cap, const dra_capacity_range *r)
{
    char a[64], b[64], msg[256];
    if (!r->step)
        return;
    qstr(cap, b, sizeof b);
    qstr(r->step, a, sizeof a);
    if (dra_quantity_sign(r->step) <= 0) {
        v_field(v, "step");
        v_invalid_str(v, a, "must be greater than zero");
        v_pop(v);
        return;
    }
    dra_quantity added;
    if (dra_quantity_add(r->min, r->step, &added) == DRA_OK &&
        dra_quantity_cmp(&added, cap) > 0) {
        char s[64];
        qstr(&added, s, sizeof s);
        snprintf(msg, sizeof msg, "one step %s is larger than capacity value: %s",
                 s, b);
        v_field(v, "step");
        v_invalid_str(v, a, msg);
        v_pop(v);
    }
    /* The step arithmetic works on int64 values, so bounds outside
     * [0, MaxInt64] are refused before it runs. */
    int ok = q_in_int64(v, def, "default");
    ok &= q_in_int64(v, r->min, "min");
    ok &= q_in_int64(v, r->max, "max");
    ok &= q_in_int64(v, r->step, "step");
    if (!ok)
        return;
    v_range_step(v, def, r->min, r->step);
    if (r->max)
        v_range_step(v, r->max, r->min, r->step);
}

static void v_valid_values(vctx *v, const dra_quantity *def,
                           const dra_quantity *cap,
                           const dra_capacity_request_policy *p)
{
    char a[64], b[64], msg[256];
    int found = 0;
    size_t n = p->n_valid_values;
    v_field(v, "validValues");
    for (size_t i = 0; i + 1 < n; i++) {
        if (dra_quantity_cmp(&p->valid_values[i], &p->valid_values[i + 1]) > 0) {
            qstr(&p->valid_values[i + 1], a, sizeof a);
            v_index(v, i + 1);
            v_invalid_str(v, a, "values must be sorted in ascending order");
            v_pop(v);
        }
    }
    if (v_at_most(v, n, MAX_VALID_VALUES)) {
        vset seen;
        vset_init(&seen, v);
        qstr(cap, b, sizeof b);
        for (size_t i = 0; i < n; i++) {
            const dra_quantity *q = &p->valid_values[i];
            v_index(v, i);
            if (dra_quantity_cmp(q, cap) > 0) {
                qstr(q, a, sizeof a);
                snprintf(msg, sizeof msg, "option is larger than capacity value: %s", b);
                v_invalid_str(v, a, msg);
            }
            if (dra_quantity_cmp(q, def) == 0)
                found = 1;
            v_pop(v);
        }
        for (size_t i = 0; i < n; i++) {
            /* Duplicates are judged on the integer value. */
            char key[32];
            dra_quantity c = p->valid_values[i];
            int64_t iv = dra_quantity_sign(&c) >= 0 ? q_value(&c) : 0;
            snprintf(key, sizeof key, "%" PRId64, iv);
            if (vset_seen(v, &seen, key)) {
                v_index(v, i);
                v_duplicate_str(v, key);
                v_pop(v);
            }
        }
        vset_fini(&seen);
    }
    if (!found) {
        qstr(def, a, sizeof a);
        v_invalid_str(v, a, "default value is not valid according to the requestPolicy");
    }
    v_pop(v);
}

static void v_request_policy(vctx *v, const dra_quantity *cap,
                             const dra_capacity_request_policy *p)
{
    v_field(v, "requestPolicy");
    if (p->n_valid_values > 0 && p->valid_range) {
        v_forbidden(v, "exactly one policy can be specified, cannot specify "
                       "\"validValues\" and \"validRange\" at the same time");
    } else if (p->n_valid_values > 0) {
        if (!p->default_) {
            v_field(v, "default");
            v_required(v, "required when validValues is defined");
            v_pop(v);
        } else {
            v_valid_values(v, p->default_, cap, p);
        }
    } else if (p->valid_range) {
        if (!p->default_) {
            v_field(v, "default");
            v_required(v, "required when validRange is defined");
            v_pop(v);
        } else {
            v_field(v, "validRange");
            v_valid_range(v, p->default_, cap, p->valid_range);
            v_pop(v);
        }
    }
    v_pop(v);
}

/* ---- attributes, capacity, counters, taints ------------------------------ */

/* The internal resource.DeviceAttribute as JSON: Go field names, nil
 * pointers as null. */
static void json_attr(dra_buf *b, const dra_attr *a)
{
    dra_buf_puts(b, "{\"IntValue\":");
    if (a->set & DRA_ATTR_INT)
        dra_buf_printf(b, "%" PRId64, a->i);
    else
        dra_buf_puts(b, "null");
    dra_buf_puts(b, ",\"BoolValue\":");
    dra_buf_puts(b, (a->set & DRA_ATTR_BOOL) ? (a->b ? "true" : "false") : "null");
    dra_buf_puts(b, ",\"StringValue\":");
    if (a->set & DRA_ATTR_STRING)
        v_json_quote(b, a->s ? a->s : "", a->s ? strlen(a->s) : 0);
    else
        dra_buf_puts(b, "null");
    dra_buf_puts(b, ",\"VersionValue\":");
    if (a->set & DRA_ATTR_VERSION)
        v_json_quote(b, a->v ? a->v : "", a->v ? strlen(a->v) : 0);
    else
        dra_buf_puts(b, "null");
    dra_buf_putc(b, '}');
}

static void v_attr(vctx *v, const dra_attr *a)
{
    int nset = 0;
    for (unsigned bit = 1; bit <= DRA_ATTR_VERSION; bit <<= 1)
        nset += (a->set & bit) != 0;
    if (a->set & DRA_ATTR_STRING) {
        const char *s = a->s ? a->s : "";
        if (strlen(s) > ATTR_MAX_VALUE_LEN) {
            v_field(v, "string");
            v_too_long(v, ATTR_MAX_VALUE_LEN);
            v_pop(v);
        }
    }
    if (a->set & DRA_ATTR_VERSION) {
        const char *s = a->v ? a->v : "";
        v_field(v, "version");
        if (!chk_semver(s))
            v_invalid_str(v, s, "must be a string compatible with semver.org spec 2.0.0");
        if (strlen(s) > ATTR_MAX_VALUE_LEN)
            v_too_long(v, ATTR_MAX_VALUE_LEN);
        v_pop(v);
    }
    if (nset == 0) {
        v_invalid_str(v, "", "exactly one value must be specified");
    } else if (nset > 1) {
        dra_buf b;
        dra_buf_init(&b, v->d ? v->d->mem : NULL);
        json_attr(&b, a);
        v_invalid_raw(v, b.p ? b.p : "", "exactly one value must be specified");
        dra_buf_fini(&b);
    }
}

static void v_counters(vctx *v, const dra_counter *c, size_t n, size_t max)
{
    v_field(v, "counters");
    if (n == 0) {
        v_required(v, NULL);
    } else if (v_at_most(v, n, max)) {
        /* Keys are reported at the map, values at [key]. */
        for (size_t i = 0; i < n; i++)
            v_dns_label(v, c[i].name ? c[i].name : "");
    }
    v_pop(v);
}

static void v_counter_name(vctx *v, const char *field, const char *s)
{
    v_field(v, field);
    if (!s || !*s)
        v_required(v, NULL);
    else
        v_dns_label(v, s);
    v_pop(v);
}

static void v_consumes_counters(vctx *v, const dra_device *d)
{
    size_t n = d->n_consumes_counters;
    v_field(v, "consumesCounters");
    if (!v_at_most(v, n, MAX_CONSUMPTIONS)) {
        v_pop(v);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const dra_counter_consumption *c = &d->consumes_counters[i];
        v_index(v, i);
        v_counter_name(v, "counterSet", c->counter_set);
        v_counters(v, c->counters, c->n_counters, MAX_COUNTERS_PER_CONSUMPTION);
        v_pop(v);
    }
    v_unique_keys(v, d->consumes_counters, n, sizeof d->consumes_counters[0],
                  offsetof(dra_counter_consumption, counter_set));
    v_pop(v);
}

static void v_taint(vctx *v, const dra_device_taint *t)
{
    const char *eff = t->effect ? t->effect : "";
    v_field(v, "key");
    v_label_name(v, t->key ? t->key : "");
    v_pop(v);
    if (t->value && *t->value) {
        v_field(v, "value");
        v_label_value(v, t->value);
        v_pop(v);
    }
    v_field(v, "effect");
    if (!*eff)
        v_required(v, NULL);
    else if (strcmp(eff, "NoSchedule") && strcmp(eff, "NoExecute") &&
             strcmp(eff, "None"))
        v_not_supported(v, eff, taint_effects, 3);
    v_pop(v);
}

static void v_condition_list(vctx *v, const char *field, const dra_strlist *l)
{
    v_field(v, field);
    if (v_at_most(v, l->n, MAX_BINDING_CONDITIONS)) {
        for (size_t i = 0; i < l->n; i++) {
            v_index(v, i);
            v_label_name(v, l->v[i] ? l->v[i] : "");
            v_pop(v);
        }
    }
    v_pop(v);
}

void v_binding_params(vctx *v, const dra_strlist *bc, const dra_strlist *bfc)
{
    vset seen, seen_f;
    v_condition_list(v, "bindingConditions", bc);
    v_condition_list(v, "bindingFailureConditions", bfc);
    vset_init(&seen, v);
    vset_init(&seen_f, v);
    for (size_t i = 0; i < bc->n; i++) {
        const char *c = bc->v[i] ? bc->v[i] : "";
        if (vset_seen(v, &seen, c)) {
            v_field(v, "bindingConditions");
            v_index(v, i);
            v_duplicate_str(v, c);
            v_pop(v);
            v_pop(v);
        }
    }
    for (size_t i = 0; i < bfc->n; i++) {
        const char *c = bfc->v[i] ? bfc->v[i] : "";
        v_field(v, "bindingFailureConditions");
        v_index(v, i);
        if (vset_seen(v, &seen_f, c))
            v_duplicate_str(v, c);
        if (vset_has(&seen, c))
            v_invalid_str(v, c, "bindingFailureConditions must not overlap "
                                "with bindingConditions");
        v_pop(v);
        v_pop(v);
    }
    vset_fini(&seen);
    vset_fini(&seen_f);
    if (bc->n == 0 && bfc->n > 0) {
        v_field(v, "bindingConditions");
        v_invalid_raw(v, bc->set ? "[]" : "null",
                      "bindingConditions are required to use bindingFailureConditions");
        v_pop(v);
    }
    if (bfc->n == 0 && bc->n > 0) {
        v_field(v, "bindingFailureConditions");
        v_invalid_raw(v, bfc->set ? "[]" : "null",
                      "bindingFailureConditions are required to use bindingConditions");
        v_pop(v);
    }
}

/* ---- node selection -------------------------------------------------------- */

static void v_node_name(vctx *v, const char *s)
{
    v_dns_subdomain(v, s);
}

static void v_device_node_selection(vctx *v, const dra_device *d, int per_device)
{
    static const char one_of[] =
        "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required "
        "when `perDeviceNodeSelection` is set to true in the ResourceSlice spec";
    char set[96] = "";
    int n = 0;
    if (!per_device) {
        if (d->node_name || d->node_selector || DRA_TRI_IS_SET(d->all_nodes))
            v_invalid_raw(v, "null", "`nodeName`, `nodeSelector` and `allNodes` "
                                     "can only be set if `perDeviceNodeSelection` "
                                     "is set to true in the ResourceSlice spec");
        return;
    }
#define ADD(name) do { strcat(set, n ? ", " name : name); n++; } while (0)
    if (d->node_name) {
        v_field(v, "nodeName");
        if (*d->node_name) {
            ADD("`nodeName`");
            v_node_name(v, d->node_name);
        } else {
            v_invalid_str(v, "", "must not be empty");
        }
        v_pop(v);
    }
    if (d->node_selector) {
        ADD("`nodeSelector`");
        v_field(v, "nodeSelector");
        v_node_selector(v, d->node_selector);
        v_pop(v);
    }
    if (DRA_TRI_IS_SET(d->all_nodes)) {
        if (DRA_TRI_IS_TRUE(d->all_nodes)) {
            ADD("`allNodes`");
        } else {
            v_field(v, "allNodes");
            v_invalid_raw(v, "false", "must be either unset or set to true");
            v_pop(v);
        }
    }
#undef ADD
    if (n == 0) {
        v_required(v, one_of);
    } else if (n > 1) {
        char val[128];
        snprintf(val, sizeof val, "{%s}", set);
        v_invalid_str(v, val, one_of);
    }
}

/* ---- devices --------------------------------------------------------------- */

static void v_device(vctx *v, const dra_device *d, int per_device)
{
    int multi = DRA_TRI_IS_TRUE(d->allow_multiple_allocations);
    size_t total = d->n_attrs + d->n_capacity;
    v_field(v, "name");
    v_dns_label(v, d->name ? d->name : "");
    v_pop(v);
    if (total > MAX_ATTRS_AND_CAPS) {
        char msg[96];
        snprintf(msg, sizeof msg, "the total number of attributes and "
                 "capacities must not exceed %d", MAX_ATTRS_AND_CAPS);
        v_invalid_int(v, (int64_t)total, msg);
    }
    v_field(v, "attributes");
    for (size_t i = 0; i < d->n_attrs; i++) {
        const char *k = d->attrs[i].name ? d->attrs[i].name : "";
        v_qualified_attr_name(v, k);
        v_key(v, k, ATTR_KEY_TRUNC);
        v_attr(v, &d->attrs[i].val);
        v_pop(v);
    }
    v_pop(v);
    v_field(v, "capacity");
    for (size_t i = 0; i < d->n_capacity; i++) {
        const dra_capacity_entry *c = &d->capacity[i];
        const char *k = c->name ? c->name : "";
        v_qualified_attr_name(v, k);
        v_key(v, k, ATTR_KEY_TRUNC);
        if (c->request_policy) {
            if (multi) {
                v_request_policy(v, &c->value, c->request_policy);
            } else {
                v_field(v, "requestPolicy");
                v_forbidden(v, "allowMultipleAllocations must be true");
                v_pop(v);
            }
        }
        v_pop(v);
    }
    v_pop(v);
    v_field(v, "taints");
    if (v_at_most(v, d->n_taints, MAX_TAINTS)) {
        for (size_t i = 0; i < d->n_taints; i++) {
            v_index(v, i);
            v_taint(v, &d->taints[i]);
            v_pop(v);
        }
    }
    v_pop(v);
    v_consumes_counters(v, d);
    v_device_node_selection(v, d, per_device);
    v_binding_params(v, &d->binding_conditions, &d->binding_failure_conditions);
}

static void v_counter_set(vctx *v, const dra_counter_set *cs)
{
    v_counter_name(v, "name", cs->name);
    v_counters(v, cs->counters, cs->n_counters, MAX_COUNTERS_PER_SET);
}

static void v_devices(vctx *v, const dra_resource_slice_spec *s)
{
    size_t max = SLICE_MAX_DEVICES;
    for (size_t i = 0; i < s->n_devices; i++)
        if (s->devices[i].n_taints || s->devices[i].n_consumes_counters)
            max = SLICE_MAX_DEVICES_ADVANCED;
    v_field(v, "devices");
    if (!v_at_most(v, s->n_devices, max)) {
        v_pop(v);
        return;
    }
    for (size_t i = 0; i < s->n_devices; i++) {
        v_index(v, i);
        v_device(v, &s->devices[i], DRA_TRI_IS_TRUE(s->per_device_node_selection));
        v_pop(v);
    }
    v_unique_keys(v, s->devices, s->n_devices, sizeof s->devices[0],
                  offsetof(dra_device, name));
    v_pop(v);
}

static void v_shared_counters(vctx *v, const dra_resource_slice_spec *s)
{
    v_field(v, "sharedCounters");
    if (v_at_most(v, s->n_shared_counters, MAX_COUNTER_SETS)) {
        for (size_t i = 0; i < s->n_shared_counters; i++) {
            v_index(v, i);
            v_counter_set(v, &s->shared_counters[i]);
            v_pop(v);
        }
        v_unique_keys(v, s->shared_counters, s->n_shared_counters,
                      sizeof s->shared_counters[0], offsetof(dra_counter_set, name));
    }
    v_pop(v);
}

static void v_slice_node_selection(vctx *v, const dra_resource_slice_spec *s)
{
    static const char one_of[] = "exactly one of `nodeName`, `nodeSelector`, "
        "`allNodes`, `perDeviceNodeSelection` is required";
    char set[128] = "", val[160];
    int n = 0;
#define ADD(name) do { strcat(set, n ? ", " name : name); n++; } while (0)
    if (s->node_name) {
        v_field(v, "nodeName");
        if (*s->node_name) {
            ADD("`nodeName`");
            v_node_name(v, s->node_name);
        } else {
            v_invalid_str(v, "", "must be either unset or set to a non-empty string");
        }
        v_pop(v);
    }
    if (s->node_selector) {
        ADD("`nodeSelector`");
        v_field(v, "nodeSelector");
        v_node_selector(v, s->node_selector);
        if (s->node_selector->n_terms != 1) {
            /* One term keeps merging selectors of several slices simple. */
            dra_buf b;
            dra_buf_init(&b, v->d ? v->d->mem : NULL);
            json_node_selector_terms(&b, s->node_selector);
            v_field(v, "nodeSelectorTerms");
            v_invalid_raw(v, b.p ? b.p : "", "must have exactly one node selector term");
            v_pop(v);
            dra_buf_fini(&b);
        }
        v_pop(v);
    }
    if (DRA_TRI_IS_SET(s->all_nodes)) {
        if (DRA_TRI_IS_TRUE(s->all_nodes)) {
            ADD("`allNodes`");
        } else {
            v_field(v, "allNodes");
            v_invalid_raw(v, "false", "must be either unset or set to true");
            v_pop(v);
        }
    }
    if (DRA_TRI_IS_SET(s->per_device_node_selection)) {
        if (DRA_TRI_IS_TRUE(s->per_device_node_selection)) {
            ADD("`perDeviceNodeSelection`");
        } else {
            v_field(v, "perDeviceNodeSelection");
            v_invalid_raw(v, "false", "must be either unset or set to true");
            v_pop(v);
        }
    }
#undef ADD
    if (n == 0) {
        v_required(v, one_of);
    } else if (n > 1) {
        snprintf(val, sizeof val, "{%s}", set);
        v_invalid_str(v, val, "exactly one of `nodeName`, `nodeSelector`, "
                      "`allNodes`, `perDeviceNodeSelection` is required, but "
                      "multiple fields are set");
    }
}

static void immutable_opt_str(vctx *v, const char *field, const char *nv,
                              const char *ov)
{
    if ((!nv && !ov) || (nv && ov && strcmp(nv, ov) == 0))
        return;
    v_field(v, field);
    if (nv)
        v_invalid_json_str(v, nv, "field is immutable");
    else
        v_invalid_raw(v, "null", "field is immutable");
    v_pop(v);
}

void v_slice_spec(vctx *v, const dra_resource_slice_spec *s,
                  const dra_resource_slice_spec *old)
{
    v_field(v, "spec");
    v_field(v, "driver");
    v_driver_name(v, s->driver ? s->driver : "");
    v_pop(v);
    v_field(v, "pool");
    v_field(v, "name");
    v_pool_name(v, s->pool.name ? s->pool.name : "");
    v_pop(v);
    if (s->pool.resource_slice_count <= 0) {
        v_field(v, "resourceSliceCount");
        v_invalid_int(v, s->pool.resource_slice_count, "must be greater than zero");
        v_pop(v);
    }
    if (s->pool.generation < 0) {
        v_field(v, "generation");
        v_invalid_int(v, s->pool.generation, "must be greater than or equal to zero");
        v_pop(v);
    }
    v_pop(v);
    if (old) {
        v_field(v, "pool");
        immutable_opt_str(v, "name", s->pool.name ? s->pool.name : "",
                          old->pool.name ? old->pool.name : "");
        v_pop(v);
        immutable_opt_str(v, "driver", s->driver ? s->driver : "",
                          old->driver ? old->driver : "");
        immutable_opt_str(v, "nodeName", s->node_name, old->node_name);
    }
    v_slice_node_selection(v, s);
    if (s->n_shared_counters > 0 && s->n_devices > 0)
        v_invalid_str(v, "", "only one of `sharedCounters` or `devices` is allowed");
    v_devices(v, s);
    v_shared_counters(v, s);
    v_pop(v);
}
