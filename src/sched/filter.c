/*
 * filter.c: the node filters kube-scheduler runs before DynamicResources,
 * in its order (NodeUnschedulable, NodeName, TaintToleration,
 * NodeAffinity, NodeResourcesFit), with its reason texts, so the
 * FailedScheduling histogram reads like kube-scheduler's.
 */
#include <string.h>

#include "sched_int.h"

static int str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* v1helper.Toleration.ToleratesTaint */
static int tol_matches(const sc_tol *t, const char *key, const char *value, const char *effect)
{
    if (t->effect && *t->effect && !str_eq(t->effect, effect))
        return 0;
    if (t->key && *t->key && !str_eq(t->key, key))
        return 0;
    if (t->exists)
        return 1;
    return str_eq(t->value, value);
}

int sched_tolerates(const sc_tol *tols, size_t n, const char *key, const char *value,
                    const char *effect)
{
    for (size_t i = 0; i < n; i++)
        if (tol_matches(&tols[i], key, value, effect))
            return 1;
    return 0;
}

static const char *label_get(const sc_node *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (!strcmp(n->labels[i].key, key))
            return n->labels[i].value;
    return NULL;
}

static int affinity_ok(const sc_podinfo *p, const sc_node *n)
{
    for (size_t i = 0; i < p->nnode_selector; i++) {
        const char *v = label_get(n, p->node_selector[i].key);
        if (!v || strcmp(v, p->node_selector[i].value))
            return 0;
    }
    return !p->affinity ||
           dra_alloc_node_selector_match(p->affinity, n->name, n->labels, n->nlabels);
}

int sched_node_has_scalar(const sc_node *n, const char *r)
{
    for (size_t i = 0; n->has_alloc && i < n->alloc.nsc; i++)
        if (!strcmp(n->alloc.sc[i].name, r))
            return 1;
    return 0;
}

/* NodeResourcesFit's fitsRequest: pods, cpu, memory, then scalars.
 * Extended resources the node does not list but a DeviceClass backs are
 * left to DRA (extres.c). */
static sc_reason fits(sc_core *c, const sc_podinfo *p, const sc_node *n, const char **what)
{
    const sc_res *r = &p->req, *a = &n->alloc, *u = &n->used;
    if (n->has_alloc) {
        if (u->pods + 1 > a->pods) {
            *what = "pods";
            return SC_R_RESOURCES;
        }
        if (r->cpu_m > 0 && r->cpu_m > a->cpu_m - u->cpu_m) {
            *what = "cpu";
            return SC_R_RESOURCES;
        }
        if (r->mem > 0 && r->mem > a->mem - u->mem) {
            *what = "memory";
            return SC_R_RESOURCES;
        }
    }
    for (size_t i = 0; i < r->nsc; i++) {
        const char *name = r->sc[i].name;
        if (r->sc[i].v <= 0)
            continue;
        if (!sched_node_has_scalar(n, name)) {
            if (c && sched_is_dra_ext_name(name) && sched_ext_class(c, name))
                continue; /* a DeviceClass backs it: DRA allocates it */
            *what = name;
            return SC_R_RESOURCES;
        }
        if (r->sc[i].v > sched_res_scalar(a, name) - sched_res_scalar(u, name)) {
            *what = name;
            return SC_R_RESOURCES;
        }
    }
    return SC_R_OK;
}

sc_reason sched_filter(sc_core *c, const sc_podinfo *p, const sc_node *n, const char **what)
{
    const char *dummy;
    if (!what)
        what = &dummy;
    *what = NULL;
    if (n->unschedulable &&
        !sched_tolerates(p->tols, p->ntols, SC_UNSCHEDULABLE_TAINT, NULL, "NoSchedule"))
        return SC_R_UNSCHEDULABLE;
    if (p->node_name && strcmp(p->node_name, n->name))
        return SC_R_NODE_NAME;
    for (size_t i = 0; i < n->ntaints; i++) {
        const sc_taint *t = &n->taints[i];
        if (!t->effect || (strcmp(t->effect, "NoSchedule") && strcmp(t->effect, "NoExecute")))
            continue;
        if (!sched_tolerates(p->tols, p->ntols, t->key, t->value, t->effect)) {
            *what = t->key;
            return SC_R_TAINT;
        }
    }
    if (!affinity_ok(p, n))
        return SC_R_AFFINITY;
    return fits(c, p, n, what);
}

void sched_reason_text(dra_buf *b, sc_reason r, const char *what, const sc_node *n)
{
    switch (r) {
    case SC_R_OK:
        break;
    case SC_R_UNSCHEDULABLE:
        dra_buf_puts(b, "node(s) were unschedulable");
        break;
    case SC_R_NODE_NAME:
        dra_buf_puts(b, "node(s) didn't match the requested node name");
        break;
    case SC_R_TAINT: {
        const char *v = "";
        for (size_t i = 0; n && i < n->ntaints; i++)
            if (!strcmp(n->taints[i].key, what ? what : ""))
                v = n->taints[i].value ? n->taints[i].value : "";
        dra_buf_printf(b, "node(s) had untolerated taint {%s: %s}", what ? what : "", v);
        break;
    }
    case SC_R_AFFINITY:
        dra_buf_puts(b, "node(s) didn't match Pod's node affinity/selector");
        break;
    case SC_R_RESOURCES:
        if (what && !strcmp(what, "pods"))
            dra_buf_puts(b, "Too many pods");
        else
            dra_buf_printf(b, "Insufficient %s", what ? what : "resources");
        break;
    case SC_R_CLAIM_NODE:
        dra_buf_puts(b, "resourceclaim not available on the node");
        break;
    case SC_R_DRA:
        dra_buf_puts(b, "cannot allocate all claims");
        break;
    case SC_R_N:
        break;
    }
}
