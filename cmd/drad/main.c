/*
 * main.c: drad, the single-machine Kubernetes-compatible control plane.
 * `drad [--data-dir DIR] [--listen HOST:PORT] [--listen-h2 HOST:PORT]`
 * (plus the node flags of nodes.h) creates (or reuses) its data
 * directory: the SQLite store, the CA and certificates, the token and a
 * kubeconfig; serves HTTPS (HTTP/1.1, and HTTP/2 on a second port, named
 * by DIR/kubeconfig-h2, since libmicrohttpd speaks only HTTP/1.1);
 * prints one line naming the kubeconfig once ready; and stops cleanly on
 * SIGTERM or SIGINT.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drad.h"

typedef struct opts {
    char data_dir[3072];
    char host[256];
    int port;
    char h2host[256]; /* "" : the host of --listen */
    int h2port;
    drad_node_flags nodes;
} opts;

static void usage(FILE *f)
{
    fputs("usage: drad [--data-dir DIR] [--listen HOST:PORT] [--listen-h2 HOST:PORT]\n"
          "  --data-dir DIR     state, credentials and kubeconfig "
          "(default ~/.local/share/dra)\n"
          "  --listen HOST:PORT address to serve HTTPS on (default "
          "127.0.0.1:6443; port 0 picks a free one)\n"
          "  --listen-h2 HOST:PORT  address to serve HTTP/2 over TLS on, the server\n"
          "                     of DIR/kubeconfig-h2 (default: the host of --listen,\n"
          "                     a free port)\n",
          f);
    drad_node_flags_usage(f);
}

static int parse_listen(const char *s, char *host, size_t hcap, int *portp)
{
    const char *colon = strrchr(s, ':');
    char *end;
    long port;
    size_t hl;
    if (!colon)
        return -1;
    hl = (size_t)(colon - s);
    if (hl >= hcap)
        return -1;
    /* [::1]:port for IPv6. */
    if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
        memcpy(host, s + 1, hl - 2);
        host[hl - 2] = '\0';
    } else {
        memcpy(host, s, hl);
        host[hl] = '\0';
    }
    port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535 || end == colon + 1)
        return -1;
    *portp = (int)port;
    return 0;
}

/* --listen / --listen-h2, as "FLAG VALUE" or "FLAG=VALUE": the number of
 * arguments taken, 0 when |argv[i]| is not |flag|, -1 on a bad value. */
static int listen_flag(const char *flag, int argc, char **argv, int i, char *host,
                       size_t hcap, int *port)
{
    size_t fl = strlen(flag);
    const char *v;
    int took;
    if (!strcmp(argv[i], flag) && i + 1 < argc)
        v = argv[i + 1], took = 2;
    else if (!strncmp(argv[i], flag, fl) && argv[i][fl] == '=')
        v = argv[i] + fl + 1, took = 1;
    else
        return 0;
    if (parse_listen(v, host, hcap, port))
        return fprintf(stderr, "drad: %s wants HOST:PORT, not %s\n", flag, v), -1;
    return took;
}

static int parse_args(int argc, char **argv, opts *o)
{
    const char *home = getenv("HOME"), *xdg = getenv("XDG_DATA_HOME");
    int k;
    memset(&o->nodes, 0, sizeof o->nodes);
    snprintf(o->host, sizeof o->host, "127.0.0.1");
    o->port = 6443;
    o->h2host[0] = '\0';
    o->h2port = 0;
    if (xdg && *xdg)
        snprintf(o->data_dir, sizeof o->data_dir, "%s/dra", xdg);
    else
        snprintf(o->data_dir, sizeof o->data_dir, "%s/.local/share/dra",
                 home && *home ? home : ".");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--data-dir") && v) {
            snprintf(o->data_dir, sizeof o->data_dir, "%s", v);
            i++;
        } else if (!strncmp(a, "--data-dir=", 11)) {
            snprintf(o->data_dir, sizeof o->data_dir, "%s", a + 11);
        } else if ((k = listen_flag("--listen", argc, argv, i, o->host, sizeof o->host,
                                    &o->port)) != 0 ||
                   (k = listen_flag("--listen-h2", argc, argv, i, o->h2host,
                                    sizeof o->h2host, &o->h2port)) != 0) {
            if (k < 0)
                return -1;
            i += k - 1;
        } else if ((k = drad_node_flag(&o->nodes, argc, argv, i)) != 0) {
            if (k < 0)
                return -1;
            i += k - 1;
        } else {
            fprintf(stderr, "drad: unknown argument %s\n", a);
            usage(stderr);
            return -1;
        }
    }
    return 0;
}

/* mkdir -p with mode 0700 for what is created. */
static int make_dirs(const char *path)
{
    char p[3072];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) && errno != EEXIST)
            return -1;
        *s = '/';
    }
    if (mkdir(p, 0700) && errno != EEXIST)
        return -1;
    return 0;
}

static void more_files(void)
{
    struct rlimit rl;
    /* Every watcher holds a connection: take what the hard limit allows. */
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

typedef struct state {
    int lock_fd;
    dra_store *store;
    dra_apiserver_creds creds;
    dra_apiserver *srv;
    dra_apiserver_http *http;
    dra_apiserver_h2 *h2;
    drad_controllers *ctl;
} state;

static void shutdown_all(state *st)
{
    drad_controllers_stop(st->ctl);
    dra_apiserver_http_stop(st->http);
    dra_apiserver_h2_stop(st->h2);
    dra_apiserver_free(st->srv);
    dra_store_close(st->store);
    dra_apiserver_creds_fini(&st->creds);
    if (st->lock_fd >= 0)
        close(st->lock_fd);
}

static int fail(state *st, const char *what, dra_err e, dra_diag *d)
{
    const char *m = dra_diag_first(d);
    fprintf(stderr, "drad: %s: %s\n", what, m ? m : dra_strerror(e));
    shutdown_all(st);
    dra_diag_fini(d);
    return 1;
}

/* The URL clients reach |host|:|port| at: a wildcard address is reached
 * through loopback. */
static void url_of(const char *h, int port, char *url, size_t ucap)
{
    if (!strcmp(h, "0.0.0.0") || !*h)
        h = "127.0.0.1";
    else if (!strcmp(h, "::"))
        h = "::1";
    snprintf(url, ucap, strchr(h, ':') ? "https://[%s]:%d" : "https://%s:%d", h, port);
}

/* HTTP/2 on its own port, and the kubeconfig that names it (the one
 * drad's GPU plugins get: their REST client speaks only HTTP/2). */
static int start_h2(const opts *o, state *st, char *kc2, size_t kcap, dra_diag *d)
{
    dra_apiserver_http_opts ho;
    char url[400];
    dra_err e;
    memset(&ho, 0, sizeof ho);
    ho.host = o->h2host[0] ? o->h2host : o->host;
    ho.port = o->h2port;
    ho.creds = &st->creds;
    if ((e = dra_apiserver_h2_start(st->srv, &ho, &st->h2, d)))
        return fail(st, "serving HTTP/2", e, d);
    url_of(ho.host, dra_apiserver_h2_port(st->h2), url, sizeof url);
    snprintf(kc2, kcap, "%s/kubeconfig-h2", o->data_dir);
    if ((e = drad_write_kubeconfig(kc2, url, &st->creds, d)))
        return fail(st, "writing the kubeconfig", e, d);
    return 0;
}

static int start(const opts *o, state *st, char *url, size_t ucap, char *kc,
                 char *kc2, size_t kcap, dra_diag *d)
{
    char path[3200];
    dra_apiserver_opts ao;
    dra_apiserver_http_opts ho;
    dra_err e;
    snprintf(path, sizeof path, "%s/lock", o->data_dir);
    st->lock_fd = open(path, O_RDWR | O_CREAT, 0600);
    if (st->lock_fd < 0 || flock(st->lock_fd, LOCK_EX | LOCK_NB)) {
        fprintf(stderr, "drad: %s is in use by another drad\n", o->data_dir);
        return 1;
    }
    snprintf(path, sizeof path, "%s/state.db", o->data_dir);
    if ((e = dra_store_open(path, NULL, NULL, &st->store, d)))
        return fail(st, "opening the store", e, d);
    if ((e = dra_apiserver_creds_load(o->data_dir, NULL, &st->creds, d)))
        return fail(st, "credentials", e, d);
    memset(&ao, 0, sizeof ao);
    ao.store = st->store;
    /* Bound pods end through their node's agent, as with a kubelet. */
    ao.graceful_pods = drad_node_flags_any(&o->nodes);
    if ((e = dra_apiserver_new(&ao, NULL, &st->srv, d)))
        return fail(st, "starting the API server", e, d);
    memset(&ho, 0, sizeof ho);
    ho.host = o->host;
    ho.port = o->port;
    ho.creds = &st->creds;
    if ((e = dra_apiserver_http_start(st->srv, &ho, &st->http, d)))
        return fail(st, "serving HTTPS", e, d);
    url_of(o->host, dra_apiserver_http_port(st->http), url, ucap);
    snprintf(kc, kcap, "%s/kubeconfig", o->data_dir);
    if ((e = drad_write_kubeconfig(kc, url, &st->creds, d)))
        return fail(st, "writing the kubeconfig", e, d);
    return start_h2(o, st, kc2, kcap, d);
}

int main(int argc, char **argv)
{
    opts o;
    state st;
    dra_diag d;
    sigset_t set;
    char url[400], kc[3200], kc2[3200];
    drad_ctx ctx;
    int sig = 0;
    dra_err e;
    memset(&st, 0, sizeof st);
    st.lock_fd = -1;
    if (parse_args(argc, argv, &o))
        return 2;
    /* Keys, token, database: readable by this user only. */
    umask(077);
    /* Many threads wait on commits; glibc's default of one malloc arena
     * per thread would keep each one's freed memory resident. */
    mallopt(M_ARENA_MAX, 2);
    if (make_dirs(o.data_dir)) {
        fprintf(stderr, "drad: cannot create %s: %s\n", o.data_dir, strerror(errno));
        return 1;
    }
    more_files();
    /* Signals are taken by sigwait below; every thread started from here
     * on inherits the mask. */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    dra_diag_init(&d, NULL);
    if (start(&o, &st, url, sizeof url, kc, kc2, sizeof kc, &d)) {
        dra_diag_fini(&d);
        return 1;
    }
    memset(&ctx, 0, sizeof ctx);
    ctx.data_dir = o.data_dir;
    ctx.store = st.store;
    ctx.srv = st.srv;
    ctx.server_url = url;
    ctx.kubeconfig = kc;
    ctx.kubeconfig_h2 = kc2;
    ctx.node_flags = &o.nodes;
    if ((e = drad_controllers_start(&ctx, &st.ctl, &d)))
        return fail(&st, "starting controllers", e, &d);
    printf("drad: serving %s; kubeconfig: %s\n", url, kc);
    fflush(stdout);
    while (sigwait(&set, &sig) == EINTR)
        ;
    fprintf(stderr, "drad: %s, stopping\n", sig == SIGINT ? "interrupted" : "terminated");
    shutdown_all(&st);
    dra_diag_fini(&d);
    return 0;
}
