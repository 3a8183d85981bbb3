/*
 * children.c: the processes drad runs beside itself (one dra-gpu-plugin
 * per simulated node), each watched by a supervisor thread that starts
 * it, restarts it with back-off when it dies, and on stop sends SIGTERM,
 * then SIGKILL after a grace period, and reaps it. A child dies with
 * drad (PR_SET_PDEATHSIG), so a drad killed with -9 leaves none behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "children.h"

#define BACKOFF_FIRST_MS 500
#define BACKOFF_MAX_MS 10000
/* A child that ran this long before it died starts over at the first
 * back-off step. */
#define BACKOFF_RESET_MS 30000

struct drad_child {
    char *name, *log_path, *pid_path;
    char **argv;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pid_t pid;          /* running and not reaped; 0 otherwise (under mu) */
    int stop;           /* under mu */
    unsigned restarts;  /* under mu */
    int th_started;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(const drad_child *c, const char *fmt, ...) DRA_PRINTF(2, 3);
static void say(const drad_child *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "drad: %s: %s\n", c->name, msg);
}

/* In the child, between fork and exec: only async-signal-safe calls.
 * The child leaves drad's process group (a terminal's ^C is drad's to
 * handle), gets the default signal mask and dispositions drad changed,
 * and dies when drad's supervising thread does. */
static void child_exec(const drad_child *c, pid_t parent, int logfd, int nul)
{
    struct sigaction sa;
    sigset_t none;
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(127);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &sa, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    dup2(nul, 0);
    dup2(logfd, 1);
    dup2(logfd, 2);
    close_range(3, ~0u, 0);
    execv(c->argv[0], c->argv);
    _exit(127);
}

static void write_pid(const drad_child *c, pid_t pid)
{
    char tmp[4200], text[32];
    int fd, n;
    if (!c->pid_path)
        return;
    snprintf(tmp, sizeof tmp, "%s.tmp", c->pid_path);
    n = snprintf(text, sizeof text, "%d\n", (int)pid);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return;
    if (write(fd, text, (size_t)n) != n || close(fd) != 0 || rename(tmp, c->pid_path) != 0)
        unlink(tmp);
}

/* Starts the child (under c->mu). 0, or -1 with errno. */
static int spawn(drad_child *c)
{
    int logfd = open(c->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t parent = getpid(), pid;
    int saved;
    if (logfd < 0 || nul < 0) {
        saved = errno;
        if (logfd >= 0)
            close(logfd);
        if (nul >= 0)
            close(nul);
        errno = saved;
        return -1;
    }
    pid = fork();
    if (pid == 0)
        child_exec(c, parent, logfd, nul);
    saved = errno;
    close(logfd);
    close(nul);
    if (pid < 0) {
        errno = saved;
        return -1;
    }
    c->pid = pid;
    write_pid(c, pid);
    return 0;
}

/* Waits for the child to end without reaping it, so that c->pid stays
 * valid for stop's kill until it is cleared under the lock; then reaps
 * it. Returns the wait status. */
static int wait_child(drad_child *c, pid_t pid)
{
    siginfo_t si;
    int st = 0;
    memset(&si, 0, sizeof si);
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0 && errno == EINTR)
        ;
    pthread_mutex_lock(&c->mu);
    c->pid = 0;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return st;
}

static void describe(char *buf, size_t size, int st)
{
    if (WIFEXITED(st))
        snprintf(buf, size, "exit status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(buf, size, "signal %d", WTERMSIG(st));
    else
        snprintf(buf, size, "status %d", st);
}

/* Sleeps |ms| unless stop comes first (under c->mu). */
static void backoff_wait(drad_child *c, int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    dra_timespec_add_ms(&ts, ms);
    while (!c->stop && pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
        ;
}

static void *supervise(void *arg)
{
    drad_child *c = arg;
    int64_t backoff = 0;
    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        int64_t started = mono_ms();
        pid_t pid;
        char how[64];
        int st;
        if (spawn(c) != 0) {
            say(c, "cannot start %s: %s", c->argv[0], strerror(errno));
            pid = 0;
            st = 0;
        } else {
            pid = c->pid;
            pthread_mutex_unlock(&c->mu);
            st = wait_child(c, pid);
            pthread_mutex_lock(&c->mu);
        }
        if (c->stop)
            break;
        if (mono_ms() - started > BACKOFF_RESET_MS)
            backoff = 0;
        backoff = backoff ? (backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2) : BACKOFF_FIRST_MS;
        c->restarts++;
        describe(how, sizeof how, st);
        if (pid)
            say(c, "pid %d ended (%s); restarting in %lld ms (log: %s)", (int)pid, how, (long long)backoff,
                c->log_path);
        backoff_wait(c, backoff);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

static char *dup_str(const char *s)
{
    return s ? dra_strdup(NULL, s) : NULL;
}

static void child_free(drad_child *c)
{
    if (!c)
        return;
    for (size_t i = 0; c->argv && c->argv[i]; i++)
        dra_free(NULL, c->argv[i]);
    dra_free(NULL, c->argv);
    dra_free(NULL, c->name);
    dra_free(NULL, c->log_path);
    dra_free(NULL, c->pid_path);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    dra_free(NULL, c);
}

dra_err drad_child_start(const drad_child_opts *o, drad_child **out, dra_diag *d)
{
    drad_child *c = dra_calloc(NULL, 1, sizeof *c);
    size_t n = 0;
    pthread_condattr_t ca;
    *out = NULL;
    if (!c)
        return DRA_ENOMEM;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    while (o->argv[n])
        n++;
    c->argv = dra_calloc(NULL, n + 1, sizeof *c->argv);
    for (size_t i = 0; c->argv && i < n; i++)
        if (!(c->argv[i] = dup_str(o->argv[i])))
            break;
    c->name = dup_str(o->name);
    c->log_path = dup_str(o->log_path);
    c->pid_path = dup_str(o->pid_path);
    if (!c->argv || (n && !c->argv[n - 1]) || !c->name || !c->log_path || (o->pid_path && !c->pid_path)) {
        child_free(c);
        return DRA_ENOMEM;
    }
    if (pthread_create(&c->th, NULL, supervise, c) != 0) {
        dra_diag_add(d, "", 0, 0, "%s: cannot start a thread", o->name);
        child_free(c);
        return DRA_EIO;
    }
    c->th_started = 1;
    *out = c;
    return DRA_OK;
}

int drad_child_pid(drad_child *c)
{
    int pid;
    pthread_mutex_lock(&c->mu);
    pid = c->pid;
    pthread_mutex_unlock(&c->mu);
    return pid;
}

unsigned drad_child_restarts(drad_child *c)
{
    unsigned r;
    pthread_mutex_lock(&c->mu);
    r = c->restarts;
    pthread_mutex_unlock(&c->mu);
    return r;
}

/* Signals the child while it is ours (not reaped: c->pid is cleared
 * under the lock before the reap). Called with c->mu held. */
static void signal_child(drad_child *c, int sig)
{
    if (c->pid > 0)
        kill(c->pid, sig);
}

void drad_child_stop(drad_child *c, int grace_ms)
{
    struct timespec ts;
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->cv);
    signal_child(c, SIGTERM);
    clock_gettime(CLOCK_REALTIME, &ts);
    dra_timespec_add_ms(&ts, grace_ms);
    while (c->pid > 0 && pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
        ;
    if (c->pid > 0) {
        say(c, "pid %d did not stop within %d ms: killing it", (int)c->pid, grace_ms);
        signal_child(c, SIGKILL);
    }
    pthread_mutex_unlock(&c->mu);
    if (c->th_started)
        pthread_join(c->th, NULL);
    if (c->pid_path)
        unlink(c->pid_path);
    child_free(c);
}
