/*
 * common.c: what every REST transport needs and no HTTP library
 * provides: the User-Agent, a monotonic clock, the bearer token that
 * follows its file as projected service-account tokens rotate, and
 * client-go's client-side token-bucket rate limit.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "kube_common.h"

#ifndef DRA_VERSION
#define DRA_VERSION "0.0.0"
#endif

const char *dra_kube_user_agent(void) { return "dra/" DRA_VERSION; }

double kube_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- bearer token --------------------------------------------------------- */

static int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Re-reads the file when its identity or mtime moved. A read failure
 * keeps the previous value: a rotation in progress is no reason to fail
 * requests that the old token still authorises. Under t->lock. */
static void token_refresh(kube_token *t)
{
    struct stat sb;
    int64_t mt;
    dra_arena tmp;
    char *text = NULL;
    if (stat(t->file, &sb) != 0)
        return;
    mt = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    if (t->value && sb.st_dev == t->dev && sb.st_ino == t->ino &&
        sb.st_size == t->size && mt == t->mtime_ns)
        return;
    dra_arena_init(&tmp, t->mem);
    if (kube_read_file(&tmp, t->file, 1u << 20, &text, NULL, NULL) == DRA_OK) {
        char *s = text, *e;
        while (is_space(*s))
            s++;
        e = s + strlen(s);
        while (e > s && is_space(e[-1]))
            *--e = '\0';
        dra_free(t->mem, t->value);
        t->value = dra_strdup(t->mem, s);
        t->dev = sb.st_dev;
        t->ino = sb.st_ino;
        t->size = sb.st_size;
        t->mtime_ns = mt;
    }
    dra_arena_fini(&tmp);
}

dra_err kube_token_get(kube_token *t, dra_buf *out, dra_kstatus *st)
{
    dra_err err = DRA_OK;
    pthread_mutex_lock(&t->lock);
    if (t->file) {
        token_refresh(t);
        if (!t->value) {
            snprintf(st->message, sizeof st->message,
                     "cannot read the token file %s", t->file);
            err = DRA_EIO;
        }
    }
    if (!err && t->value && t->value[0])
        dra_buf_puts(out, t->value);
    pthread_mutex_unlock(&t->lock);
    return out->oom ? DRA_ENOMEM : err;
}

dra_err kube_token_init(kube_token *t, const dra_kube_config *cfg,
                        const dra_mem *mem, dra_diag *d)
{
    const char *stat_tok = cfg->token && cfg->token[0] ? cfg->token : NULL;
    dra_kstatus st;
    dra_buf b;
    dra_err err;
    memset(t, 0, sizeof *t);
    t->mem = mem;
    pthread_mutex_init(&t->lock, NULL);
    if (!cfg->token_file || !cfg->token_file[0]) {
        if (stat_tok && !(t->value = dra_strdup(mem, stat_tok)))
            return DRA_ENOMEM;
        return DRA_OK;
    }
    if (!(t->file = dra_strdup(mem, cfg->token_file)))
        return DRA_ENOMEM;
    memset(&st, 0, sizeof st);
    dra_buf_init(&b, mem);
    err = kube_token_get(t, &b, &st);
    dra_buf_fini(&b);
    if (err == DRA_EIO && stat_tok) {
        /* client-go keeps the static token when the file fails */
        return (t->value = dra_strdup(mem, stat_tok)) ? DRA_OK : DRA_ENOMEM;
    }
    if (err)
        dra_diag_add(d, "", 0, 0, "%s", st.message);
    return err;
}

void kube_token_fini(kube_token *t)
{
    pthread_mutex_destroy(&t->lock);
    dra_free(t->mem, t->file);
    dra_free(t->mem, t->value);
    t->file = t->value = NULL;
}

/* ---- rate limit ------------------------------------------------------------- */

void kube_rate_init(kube_rate *r, double qps, int burst)
{
    pthread_mutex_init(&r->lock, NULL);
    r->qps = qps > 0 ? qps : 0;
    r->burst = burst > 0 ? burst : 1;
    r->tokens = r->burst;
    r->last_s = kube_now_s();
}

void kube_rate_fini(kube_rate *r) { pthread_mutex_destroy(&r->lock); }

void kube_rate_take(kube_rate *r)
{
    double wait = 0;
    if (r->qps <= 0)
        return;
    pthread_mutex_lock(&r->lock);
    {
        double now = kube_now_s();
        r->tokens += (now - r->last_s) * r->qps;
        if (r->tokens > r->burst)
            r->tokens = r->burst;
        r->last_s = now;
        r->tokens -= 1;
        if (r->tokens < 0)
            wait = -r->tokens / r->qps;
    }
    pthread_mutex_unlock(&r->lock);
    if (wait > 0) {
        struct timespec ts = {(time_t)wait,
                              (long)((wait - (double)(time_t)wait) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
}
