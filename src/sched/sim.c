/*
 * sim.c: the scheduler offline. Objects go into the same cache the live
 * scheduler keeps; a pod is scheduled by the same cycle, its template
 * claims made in memory the way the claim controller would make them
 * (names get a reproducible suffix instead of the apiserver's random
 * one), and a successful placement is assumed, so the next pod sees its
 * devices in use. Nothing is written anywhere: dractl's live explain and
 * simulate run on this.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sched_int.h"

struct dra_sched_sim {
    sc_core core;
    int64_t now_ms;
    uint64_t seq;
};

dra_err dra_sched_score_parse(const char *s, dra_sched_score *out)
{
    if (s && !strcasecmp(s, "MostAllocated")) {
        *out = DRA_SCHED_MOST_ALLOCATED;
        return DRA_OK;
    }
    if (s && !strcasecmp(s, "LeastAllocated")) {
        *out = DRA_SCHED_LEAST_ALLOCATED;
        return DRA_OK;
    }
    return DRA_EINVAL;
}

dra_err dra_sched_sim_new(const dra_sched_opts *o, dra_sched_sim **out)
{
    dra_sched_opts oo;
    dra_sched_sim *s;
    dra_err err;
    memset(&oo, 0, sizeof oo);
    if (o)
        oo = *o;
    oo.scheduler = 1;
    oo.claim_controller = 0;
    *out = NULL;
    if (!(s = dra_calloc(oo.mem, 1, sizeof *s)))
        return DRA_ENOMEM;
    if ((err = sched_core_init(&s->core, &oo)) != DRA_OK) {
        sched_core_fini(&s->core);
        dra_free(oo.mem, s);
        return err;
    }
    s->core.implicit_nodes = 1;
    *out = s;
    return DRA_OK;
}

void dra_sched_sim_free(dra_sched_sim *s)
{
    const dra_mem *mem;
    if (!s)
        return;
    mem = s->core.mem;
    sched_core_fini(&s->core);
    dra_free(mem, s);
}

dra_err dra_sched_sim_add(dra_sched_sim *s, const dra_doc *obj, dra_diag *d)
{
    const dra_doc *av = dra_doc_get(obj, "apiVersion"), *k = dra_doc_get(obj, "kind");
    dra_kind kind;
    if (!av || !k || av->kind != DRA_DOC_STRING || k->kind != DRA_DOC_STRING)
        return DRA_OK;
    kind = dra_api_kind_lookup(av->u.str.s, k->u.str.s);
    if (kind == DRA_KIND_UNKNOWN)
        return DRA_OK;
    return sched_apply(&s->core, kind, DRA_WATCH_ADDED, obj, s->now_ms, d);
}

/* ---- the claim controller, in memory ---------------------------------------------- */

static const char suffix_alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

/* A claim for template entry |pc| of |p|, added to the cache, and its
 * name recorded in the pod's status. */
static dra_err sim_generate(dra_sched_sim *s, sc_pod *pod, const sc_pclaim *pc, const char **why,
                            dra_arena *a)
{
    sc_podinfo *p = pod->info;
    sc_obj *t = sched_template_get(&s->core, p->ns, pc->template_name);
    dra_arena ar;
    dra_doc *doc, *md;
    const char *gen, *name;
    char sfx[6], buf[700];
    uint64_t h;
    sc_pstatus *st;
    dra_err err;
    if (!t) {
        *why = dra_arena_sprintf(a, "resource claim template \"%s\": "
                                 "resourceclaimtemplate.resource.k8s.io \"%s\" not found",
                                 pc->template_name, pc->template_name);
        return DRA_ENOTFOUND;
    }
    dra_arena_init(&ar, s->core.mem);
    snprintf(buf, sizeof buf, "%s/%s/%s", p->ns, p->name, pc->name);
    h = dra_hash(buf, strlen(buf));
    for (int i = 0; i < 5; i++, h /= sizeof suffix_alphabet - 1)
        sfx[i] = suffix_alphabet[h % (sizeof suffix_alphabet - 1)];
    sfx[5] = '\0';
    err = DRA_ENOMEM;
    if (!(doc = sched_claim_from_template(&ar, p, pc, t->obj, 0)) ||
        !(md = (dra_doc *)dra_doc_get(doc, "metadata")) ||
        !(gen = sched_generate_name(&ar, p->name, pc->name)) ||
        !(name = dra_arena_sprintf(&ar, "%s%s", gen, sfx)) ||
        dra_doc_map_set(&ar, md, "name", dra_doc_new_string(&ar, name, strlen(name))) ||
        dra_doc_map_set(&ar, md, "uid", dra_doc_new_string(&ar, buf, strlen(buf))))
        goto out;
    if ((err = sched_apply(&s->core, DRA_KIND_RESOURCE_CLAIM, DRA_WATCH_ADDED, doc, s->now_ms,
                           NULL)) != DRA_OK)
        goto out;
    err = DRA_ENOMEM;
    if (!(st = dra_arena_array(&p->ar, p->nstatuses + 1, sizeof *st)))
        goto out;
    if (p->nstatuses)
        memcpy(st, p->statuses, p->nstatuses * sizeof *st);
    st[p->nstatuses].name = pc->name;
    if (!(st[p->nstatuses].claim = dra_arena_strdup(&p->ar, name)))
        goto out;
    p->statuses = st;
    p->nstatuses++;
    err = DRA_OK;
out:
    dra_arena_fini(&ar);
    return err;
}

/* ---- reporting ---------------------------------------------------------------------------- */

static const char *devices_text(dra_arena *a, const dra_allocation_result *res)
{
    dra_buf b;
    const char *r;
    if (!res)
        return NULL;
    dra_buf_init(&b, a->mem);
    for (size_t i = 0; i < res->n_results; i++)
        dra_buf_printf(&b, "%s%s/%s/%s", i ? ", " : "", res->results[i].driver,
                       res->results[i].pool, res->results[i].device);
    r = dra_arena_strdup(a, b.p ? b.p : "");
    dra_buf_fini(&b);
    return r;
}

static dra_err add_outcome(dra_arena *a, dra_sched_decision *out, const char *pc, const char *claim,
                           const char *state, const char *devices)
{
    dra_sched_claim_outcome *v = dra_arena_array(a, out->nclaims + 1, sizeof *v);
    if (!v)
        return DRA_ENOMEM;
    if (out->nclaims)
        memcpy(v, out->claims, out->nclaims * sizeof *v);
    v[out->nclaims].pod_claim = dra_arena_strdup(a, pc);
    v[out->nclaims].claim = claim ? dra_arena_strdup(a, claim) : NULL;
    v[out->nclaims].state = state;
    v[out->nclaims].devices = devices;
    out->claims = v;
    out->nclaims++;
    return DRA_OK;
}

static const dra_allocation_result *claim_alloc(const sc_claim *cl)
{
    const dra_allocation_result *r = cl->obj->u.claim.status.allocation;
    return r ? r : cl->assumed;
}

/* A pod with a node already (bound, or placed by an earlier call). */
static dra_err report_bound(dra_sched_sim *s, sc_pod *pod, dra_arena *a, dra_sched_decision *out)
{
    const sc_podinfo *p = pod->info;
    out->scheduled = 1;
    out->bound = p->node_name != NULL;
    out->node = dra_arena_strdup(a, p->node_name ? p->node_name : pod->assumed_node);
    for (size_t i = 0; i < p->nclaims; i++) {
        const char *name;
        sc_claim *cl;
        if (sched_pod_claim_name(p, &p->claims[i], &name) != DRA_OK || !name)
            continue;
        cl = sched_claim_get(&s->core, p->ns, name);
        if (add_outcome(a, out, p->claims[i].name, cl ? cl->key : name,
                        !cl ? "missing" : claim_alloc(cl) ? "allocated" : "pending",
                        cl ? devices_text(a, claim_alloc(cl)) : NULL))
            return DRA_ENOMEM;
    }
    if (pod->ext_res && add_outcome(a, out, SC_SPECIAL_CLAIM, "(generated)", "allocated now",
                                    devices_text(a, pod->ext_res)))
        return DRA_ENOMEM;
    return out->node ? DRA_OK : DRA_ENOMEM;
}

/* What the bind writes would do: each claim gets its allocation and the
 * pod in reservedFor, in the cache, and the assumption goes. */
static int reserve_all(dra_sched_sim *s, sc_pod *pod, const sc_cycle *cy)
{
    for (size_t i = 0; i < cy->nclaims; i++) {
        const sc_cclaim *cc = &cy->claims[i];
        dra_arena ar;
        dra_doc *doc;
        dra_err err;
        if (!cc->cl || !cc->reserve)
            continue;
        dra_arena_init(&ar, s->core.mem);
        doc = sched_claim_reserve_doc(&ar, cc->cl, cc->allocate >= 0 ? cc->cl->assumed : NULL,
                                      pod->info, 0);
        err = doc ? sched_apply(&s->core, DRA_KIND_RESOURCE_CLAIM, DRA_WATCH_MODIFIED, doc,
                                s->now_ms, NULL) : DRA_ENOMEM;
        dra_arena_fini(&ar);
        if (err == DRA_ENOMEM)
            return 0;
        if (cc->cl->assumed)
            sched_claim_assume(&s->core, cc->cl, NULL, NULL, NULL);
    }
    return 1;
}

static dra_err report_cycle(dra_sched_sim *s, sc_pod *pod, sc_cycle *cy, dra_arena *a,
                            dra_sched_decision *out)
{
    out->message = cy->message ? dra_arena_strdup(a, cy->message) : NULL;
    out->explanation = cy->explanation ? dra_arena_strdup(a, cy->explanation) : NULL;
    if (cy->rc != SC_RC_OK) {
        for (size_t i = 0; i < cy->nclaims; i++) {
            const sc_cclaim *cc = &cy->claims[i];
            if (add_outcome(a, out, cc->pod_claim, cc->cl ? cc->cl->key : "(generated)",
                            cc->alloc ? "already allocated" : "pending",
                            devices_text(a, cc->alloc)))
                return DRA_ENOMEM;
        }
        return DRA_OK;
    }
    if (sched_cycle_assume(&s->core, pod, cy) != DRA_OK || !reserve_all(s, pod, cy))
        return DRA_ENOMEM;
    out->scheduled = 1;
    out->node = dra_arena_strdup(a, cy->node->name);
    for (size_t i = 0; i < cy->nclaims; i++) {
        const sc_cclaim *cc = &cy->claims[i];
        const dra_allocation_result *res =
            cc->cl ? claim_alloc(cc->cl) : (i == (size_t)cy->ext ? pod->ext_res : NULL);
        if (add_outcome(a, out, cc->pod_claim, cc->cl ? cc->cl->key : "(generated)",
                        cc->alloc ? "already allocated" : res ? "allocated now" : "not needed",
                        devices_text(a, res)))
            return DRA_ENOMEM;
    }
    return out->node ? DRA_OK : DRA_ENOMEM;
}

dra_err dra_sched_sim_schedule(dra_sched_sim *s, const char *ns, const char *name, dra_arena *a,
                               dra_sched_decision *out)
{
    char key[600];
    sc_pod *pod;
    sc_cycle cy;
    dra_err err;
    memset(out, 0, sizeof *out);
    snprintf(key, sizeof key, "%s/%s", ns ? ns : "default", name);
    if (!(pod = sched_pod_get(&s->core, key)))
        return DRA_ENOTFOUND;
    if (pod->info->node_name || pod->assumed_node)
        return report_bound(s, pod, a, out);
    for (size_t i = 0; i < pod->info->nclaims; i++) {
        const sc_pclaim *pc = &pod->info->claims[i];
        const char *cn, *why = NULL;
        if (!pc->template_name || sched_pod_claim_name(pod->info, pc, &cn) != DRA_ENOTFOUND)
            continue;
        if ((err = sim_generate(s, pod, pc, &why, a)) == DRA_ENOTFOUND) {
            out->message = dra_arena_sprintf(a, "PodResourceClaim %s: %s", pc->name, why);
            return DRA_OK;
        }
        if (err != DRA_OK)
            return err;
    }
    sched_cycle_init(&cy, s->core.mem);
    err = sched_cycle_run(&s->core, pod, &cy, 1);
    if (err == DRA_OK)
        err = report_cycle(s, pod, &cy, a, out);
    sched_cycle_fini(&cy);
    return err;
}

/* ---- a claim on its own -------------------------------------------------------------------- */

static dra_err explain_pending(dra_sched_sim *s, sc_claim *cl, dra_arena *a, dra_sched_decision *out)
{
    const dra_alloc_claim *m;
    dra_alloc_outcome o;
    dra_diag d;
    dra_err err;
    dra_diag_init(&d, s->core.mem);
    if (s->core.dirty && (err = sched_rebuild(&s->core)) != DRA_OK)
        goto done;
    if (!(m = sched_claim_model(&s->core, cl, &d))) {
        out->message = dra_arena_sprintf(a, "claim %s: %s", cl->key,
                                         dra_diag_first(&d) ? dra_diag_first(&d) : "invalid");
        err = DRA_OK;
        goto done;
    }
    dra_alloc_outcome_init(&o, s->core.mem);
    err = dra_allocator_schedule(s->core.inv.a, &m, 1, &o, &d);
    if (err == DRA_EUNSAT) /* the scheduler's allocator does not explain by itself */
        err = dra_allocator_explain(s->core.inv.a, &m, 1, &o, &d);
    if (err == DRA_OK) {
        out->scheduled = 1;
        out->node = dra_arena_strdup(a, o.node);
        out->message = dra_arena_sprintf(a, "claim %s is pending; it can be allocated on node %s",
                                         cl->key, o.node);
    } else {
        const char *expl = o.explanation ? o.explanation : dra_diag_first(&d);
        out->explanation = expl ? dra_arena_strdup(a, expl) : NULL;
        out->message = dra_arena_sprintf(a, "claim %s is pending and cannot be allocated on any "
                                         "node (%zu node%s)", cl->key, s->core.nnodes,
                                         s->core.nnodes == 1 ? "" : "s");
    }
    dra_alloc_outcome_fini(&o);
    err = err == DRA_ENOMEM ? err : DRA_OK;
done:
    dra_diag_fini(&d);
    return err;
}

dra_err dra_sched_sim_explain_claim(dra_sched_sim *s, const char *ns, const char *name,
                                    dra_arena *a, dra_sched_decision *out)
{
    sc_claim *cl = sched_claim_get(&s->core, ns ? ns : "default", name);
    const dra_allocation_result *res;
    const dra_claim_status *st;
    dra_buf b;
    memset(out, 0, sizeof *out);
    if (!cl)
        return DRA_ENOTFOUND;
    res = claim_alloc(cl);
    if (!res)
        return explain_pending(s, cl, a, out);
    st = &cl->obj->u.claim.status;
    dra_buf_init(&b, a->mem);
    dra_buf_printf(&b, "claim %s is allocated", cl->key);
    if (res->node_selector && res->node_selector->n_terms == 1 &&
        res->node_selector->terms[0].n_match_fields == 1 &&
        res->node_selector->terms[0].match_fields[0].values.n == 1)
        dra_buf_printf(&b, " on node %s", res->node_selector->terms[0].match_fields[0].values.v[0]);
    dra_buf_printf(&b, " (%s)", st->n_reserved_for ? "reserved" : "not reserved");
    for (size_t i = 0; i < st->n_reserved_for; i++)
        dra_buf_printf(&b, "%s%s %s", i ? ", " : ": for ",
                       st->reserved_for[i].resource ? st->reserved_for[i].resource : "?",
                       st->reserved_for[i].name ? st->reserved_for[i].name : "?");
    out->scheduled = 1;
    out->message = dra_arena_strdup(a, b.p ? b.p : "");
    dra_buf_fini(&b);
    return add_outcome(a, out, "", cl->key, "allocated", devices_text(a, res));
}
