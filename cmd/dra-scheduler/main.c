/*
 * dra-scheduler: src/sched as a secondary scheduler for a real cluster
 * (or drad). It places the pods whose spec.schedulerName is its name
 * (dra-scheduler by default) with DRA allocation and explanations; with
 * --claim-controller it also makes and releases their ResourceClaims
 * (kube-controller-manager does that in a real cluster). Talks to the
 * API server through the kubeconfig, or the in-cluster service account.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dra/kube.h"
#include "dra/sched.h"

#ifndef DRA_VERSION
#define DRA_VERSION "0.1.0"
#endif

typedef struct opts {
    const char *kubeconfig, *context, *name, *score;
    int claim_controller, verbosity, bind_workers, no_events;
} opts;

static void usage(FILE *f)
{
    fputs("usage: dra-scheduler [--kubeconfig FILE] [--context NAME]\n"
          "                     [--scheduler-name NAME] [--score=LeastAllocated|MostAllocated]\n"
          "                     [--claim-controller] [--bind-workers N] [--v N]\n"
          "\n"
          "Schedules the pods whose spec.schedulerName is NAME (default dra-scheduler),\n"
          "allocating their ResourceClaims' devices (DRA structured parameters) and\n"
          "explaining in a FailedScheduling event why a pod does not fit.\n"
          "\n"
          "  --kubeconfig FILE        cluster to use; without it the in-cluster service\n"
          "                           account when running in a pod, else kubectl's\n"
          "                           default ($KUBECONFIG, ~/.kube/config)\n"
          "  --context NAME           kubeconfig context (default: current-context)\n"
          "  --scheduler-name NAME    pods to take (default dra-scheduler)\n"
          "  --score=S                LeastAllocated (spread, the default) or MostAllocated (pack)\n"
          "  --claim-controller       also run the resourceclaim controller (claims from\n"
          "                           templates, release); leave off where\n"
          "                           kube-controller-manager runs it\n"
          "  --bind-workers N         parallel reserve+bind writers (default 4)\n"
          "  --no-scheduled-events    do not record a Scheduled event per bound pod\n"
          "  --v N                    log level: 0 errors, 1 decisions (default), 2 debug\n",
          f);
}

/* --flag VALUE or --flag=VALUE. */
static const char *value(int argc, char **argv, int *i, const char *flag)
{
    size_t n = strlen(flag);
    if (!strncmp(argv[*i], flag, n) && argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (!strcmp(argv[*i], flag) && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->name = DRA_SCHED_STANDALONE_NAME;
    o->verbosity = 1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(argv[i], "--version")) {
            printf("dra-scheduler %s\n", DRA_VERSION);
            exit(0);
        } else if ((v = value(argc, argv, &i, "--kubeconfig"))) {
            o->kubeconfig = v;
        } else if ((v = value(argc, argv, &i, "--context"))) {
            o->context = v;
        } else if ((v = value(argc, argv, &i, "--scheduler-name"))) {
            o->name = v;
        } else if ((v = value(argc, argv, &i, "--score"))) {
            o->score = v;
        } else if ((v = value(argc, argv, &i, "--bind-workers"))) {
            o->bind_workers = atoi(v);
        } else if ((v = value(argc, argv, &i, "--v"))) {
            o->verbosity = atoi(v);
        } else if (!strcmp(argv[i], "--claim-controller")) {
            o->claim_controller = 1;
        } else if (!strcmp(argv[i], "--no-scheduled-events")) {
            o->no_events = 1;
        } else {
            fprintf(stderr, "dra-scheduler: unknown or incomplete option %s\n", argv[i]);
            usage(stderr);
            return -1;
        }
    }
    if (!*o->name) {
        fputs("dra-scheduler: --scheduler-name must not be empty\n", stderr);
        return -1;
    }
    return 0;
}

/* klog's header: level letter, mmdd hh:mm:ss.micro. */
static void log_line(void *ud, int level, const char *msg)
{
    const opts *o = ud;
    struct timespec ts;
    struct tm tm;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    if (level > o->verbosity)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    pthread_mutex_lock(&mu);
    fprintf(stderr, "%c%02d%02d %02d:%02d:%02d.%06ld dra-scheduler] %s\n",
            level == DRA_SCHED_LOG_ERROR ? 'E' : 'I', tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
            tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000, msg);
    pthread_mutex_unlock(&mu);
}

static dra_err load_config(const opts *o, dra_kube_config *cfg, dra_diag *d)
{
    dra_err e;
    if (o->kubeconfig || o->context)
        return dra_kube_config_load(cfg, o->kubeconfig, o->context, NULL, d);
    e = dra_kube_config_in_cluster(cfg, NULL, NULL, d);
    if (e != DRA_ENOTFOUND)
        return e;
    dra_kube_config_fini(cfg);
    dra_diag_clear(d);
    return dra_kube_config_load(cfg, NULL, NULL, NULL, d);
}

int main(int argc, char **argv)
{
    opts o;
    dra_kube_config cfg;
    dra_cluster *c = NULL;
    dra_sched *s = NULL;
    dra_sched_opts so;
    dra_diag d;
    sigset_t set;
    int sig = 0, rc = 1;
    dra_err e;
    if (parse(argc, argv, &o))
        return 2;
    memset(&so, 0, sizeof so);
    if (o.score && dra_sched_score_parse(o.score, &so.score)) {
        fprintf(stderr, "dra-scheduler: --score must be LeastAllocated or MostAllocated, not %s\n",
                o.score);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    dra_diag_init(&d, NULL);
    dra_kube_config_init(&cfg, NULL);
    if ((e = load_config(&o, &cfg, &d)) != DRA_OK) {
        fprintf(stderr, "dra-scheduler: %s\n", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
        goto out;
    }
    if ((e = dra_kube_cluster_new(&cfg, NULL, &c, &d)) != DRA_OK) {
        fprintf(stderr, "dra-scheduler: %s\n", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
        goto out;
    }
    so.scheduler_name = o.name;
    so.scheduler = 1;
    so.claim_controller = o.claim_controller;
    so.bind_workers = o.bind_workers;
    so.no_scheduled_events = o.no_events;
    so.log = log_line;
    so.log_ud = &o;
    if ((e = dra_sched_start(c, &so, &s)) != DRA_OK) {
        fprintf(stderr, "dra-scheduler: starting: %s\n", dra_strerror(e));
        goto out;
    }
    fprintf(stderr, "dra-scheduler: scheduling pods with schedulerName %s on %s%s\n", o.name,
            cfg.server, o.claim_controller ? ", with the claim controller" : "");
    while (sigwait(&set, &sig) == EINTR)
        ;
    fprintf(stderr, "dra-scheduler: %s, stopping\n", sig == SIGINT ? "interrupted" : "terminated");
    rc = 0;
out:
    dra_sched_stop(s);
    dra_cluster_free(c);
    dra_kube_config_fini(&cfg);
    dra_diag_fini(&d);
    return rc;
}
