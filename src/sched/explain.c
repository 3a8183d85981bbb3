/*
 * explain.c: the FailedScheduling message. kube-scheduler's FitError
 * ("0/3 nodes are available: 1 cannot allocate all claims, 2 node(s) had
 * untolerated taint {a: b}.") followed by the allocator's explanation of
 * each claim and request, shortened to one line, so `kubectl describe
 * pod` says which request failed and why instead of only "cannot
 * allocate all claims".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"

/* Longest message written into an event or condition. */
#define SC_MESSAGE_MAX 1024

void sched_hist_init(sc_hist *h, const dra_mem *mem)
{
    dra_map_init(&h->m, mem);
    dra_arena_init(&h->ar, mem);
}

void sched_hist_fini(sc_hist *h)
{
    dra_map_fini(&h->m);
    dra_arena_fini(&h->ar);
}

dra_err sched_hist_add_n(sc_hist *h, const char *text, size_t n)
{
    size_t len = strlen(text);
    dra_map_entry *e = dra_map_find(&h->m, text, len);
    char *k;
    if (e) {
        e->val = (void *)((uintptr_t)e->val + n);
        return DRA_OK;
    }
    if (!(k = dra_arena_strndup(&h->ar, text, len)))
        return DRA_ENOMEM;
    return dra_map_put(&h->m, k, len, (void *)(uintptr_t)n);
}

dra_err sched_hist_add(sc_hist *h, const char *text)
{
    return sched_hist_add_n(h, text, 1);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* One line per explanation line, joined: "; " between items, a space
 * after a line that introduces the next ("claim x:"). Stops before
 * |max| bytes with " ...". */
static void join_lines(dra_buf *b, const char *expl, size_t max)
{
    const char *p = expl;
    int first = 1, intro = 0;
    while (p && *p) {
        const char *nl = strchr(p, '\n'), *s = p;
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        while (len && (*s == ' ' || *s == '\t'))
            s++, len--;
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\r'))
            len--;
        if (len) {
            const char *sep = first ? "" : intro ? " " : "; ";
            if (b->len + strlen(sep) + len + 4 > max) {
                dra_buf_puts(b, " ...");
                return;
            }
            dra_buf_puts(b, sep);
            dra_buf_append(b, s, len);
            intro = s[len - 1] == ':';
            first = 0;
        }
        p = nl ? nl + 1 : NULL;
    }
}

const char *sched_shorten(dra_arena *ar, const char *expl, size_t max)
{
    dra_buf b;
    const char *r;
    dra_buf_init(&b, ar->mem);
    join_lines(&b, expl, max);
    r = dra_arena_strdup(ar, b.p ? b.p : "");
    dra_buf_fini(&b);
    return r;
}

const char *sched_fit_message(dra_arena *ar, size_t nnodes, const char *prefilter, sc_hist *h,
                              const char *expl)
{
    dra_buf b;
    const char **v = NULL;
    size_t n = 0;
    const char *r;
    dra_buf_init(&b, ar->mem);
    if (!nnodes && !prefilter) {
        dra_buf_puts(&b, "no nodes available to schedule pods");
    } else {
        dra_buf_printf(&b, "0/%zu nodes are available:", nnodes);
        if (prefilter) {
            dra_buf_printf(&b, " %s.", prefilter);
        } else if (h && h->m.live) {
            v = dra_calloc(ar->mem, h->m.live, sizeof *v);
            for (size_t i = 0; v && i < h->m.n; i++)
                if (h->m.entries[i].key)
                    v[n++] = dra_arena_sprintf(ar, "%zu %s", (size_t)(uintptr_t)h->m.entries[i].val,
                                               h->m.entries[i].key);
            if (v) {
                qsort(v, n, sizeof *v, cmp_str);
                for (size_t i = 0; i < n; i++)
                    dra_buf_printf(&b, "%s%s", i ? ", " : " ", v[i] ? v[i] : "");
            }
            dra_buf_putc(&b, '.');
            dra_free(ar->mem, v);
        }
    }
    if (expl && *expl) {
        dra_buf_putc(&b, ' ');
        join_lines(&b, expl, SC_MESSAGE_MAX);
    }
    r = dra_arena_strdup(ar, b.p ? b.p : "");
    dra_buf_fini(&b);
    return r;
}
