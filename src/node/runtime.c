/*
 * runtime.c: starting, finding and signalling containers. A container
 * is a directory STATE/<id>/ and a dra-shim process started in its own
 * session (double fork, so it is never our child and outlives us) that
 * runs bwrap and writes STATE/<id>/state. We follow a container through
 * a pidfd on its shim and its state file; after a restart the same two
 * find it again.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "node_int.h"

#ifndef DRA_SHIM_BUILD_PATH
#define DRA_SHIM_BUILD_PATH ""
#endif

extern char **environ;

struct dra_node_runtime {
    const dra_mem *mem;
    char *state_dir;
    char *bwrap;
    char *shim;
    int as_root;
};

struct dra_node_ctr {
    dra_node_runtime *rt;
    char *id;
    char *dir;
    int shim_pid;
    int64_t shim_start;
    int pidfd;
};

/* ---- runtime ------------------------------------------------------------ */

static int executable(const char *p)
{
    return p && p[0] && access(p, X_OK) == 0;
}

/* The default dra-shim: $DRA_SHIM, beside /proc/self/exe, the build's. */
static char *find_shim(const dra_mem *mem)
{
    char self[PATH_MAX + 16];
    const char *env = getenv("DRA_SHIM");
    ssize_t n;
    if (executable(env))
        return dra_strdup(mem, env);
    n = readlink("/proc/self/exe", self, PATH_MAX);
    if (n > 0) {
        char *sl;
        self[n] = '\0';
        if ((sl = strrchr(self, '/')) != NULL) {
            strcpy(sl + 1, "dra-shim");
            if (executable(self))
                return dra_strdup(mem, self);
        }
    }
    return dra_strdup(mem, executable(DRA_SHIM_BUILD_PATH) ? DRA_SHIM_BUILD_PATH : "dra-shim");
}

dra_err dra_node_runtime_new(const dra_node_runtime_opts *opts, const dra_mem *mem,
                        dra_node_runtime **out, dra_diag *d)
{
    dra_node_runtime *rt;
    *out = NULL;
    if (!opts || !opts->state_dir || !opts->state_dir[0])
        return dra_diag_add(d, "", 0, 0, "the runtime needs a state directory"), DRA_EINVAL;
    if (!(rt = dra_calloc(mem, 1, sizeof *rt)))
        return DRA_ENOMEM;
    rt->mem = mem;
    rt->state_dir = dra_strdup(mem, opts->state_dir);
    rt->bwrap = dra_strdup(mem, opts->bwrap ? opts->bwrap : "/usr/bin/bwrap");
    rt->shim = opts->shim ? dra_strdup(mem, opts->shim) : find_shim(mem);
    rt->as_root = geteuid() == 0;
    if (!rt->state_dir || !rt->bwrap || !rt->shim) {
        dra_node_runtime_free(rt);
        return DRA_ENOMEM;
    }
    if (!executable(rt->bwrap) || !executable(rt->shim)) {
        dra_diag_add(d, "", 0, 0, "%s is not an executable file (install bubblewrap; build dra-shim)",
                     executable(rt->bwrap) ? rt->shim : rt->bwrap);
        dra_node_runtime_free(rt);
        return DRA_EINVAL;
    }
    if (node_mkdirs(rt->state_dir) != 0) {
        dra_diag_add(d, "", 0, 0, "create %s: %s", rt->state_dir, strerror(errno));
        dra_node_runtime_free(rt);
        return DRA_EIO;
    }
    *out = rt;
    return DRA_OK;
}

void dra_node_runtime_free(dra_node_runtime *rt)
{
    if (!rt)
        return;
    dra_free(rt->mem, rt->state_dir);
    dra_free(rt->mem, rt->bwrap);
    dra_free(rt->mem, rt->shim);
    dra_free(rt->mem, rt);
}

dra_err dra_node_runtime_probe(dra_node_runtime *rt, dra_diag *d)
{
    int pfd[2], st = 0;
    char msg[512];
    size_t n = 0;
    pid_t pid;
    static const char *const tail[] = {"--unshare-pid", "--as-pid-1", "--die-with-parent", "--ro-bind", "/", "/",
                                       "--dev", "/dev", "--proc", "/proc", "--", "/bin/true"};
    static const char *const user[] = {"--unshare-user", "--uid", "0", "--gid", "0"};
    char *argv[24];
    size_t k = 0;
    argv[k++] = rt->bwrap;
    for (size_t i = 0; !rt->as_root && i < sizeof user / sizeof *user; i++)
        argv[k++] = (char *)user[i];
    for (size_t i = 0; i < sizeof tail / sizeof *tail; i++)
        argv[k++] = (char *)tail[i];
    argv[k] = NULL;
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return DRA_EIO;
    if ((pid = fork()) < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return DRA_EIO;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(pfd[1], 2);
        execv(rt->bwrap, argv);
        _exit(127);
    }
    close(pfd[1]);
    for (;;) {
        ssize_t r = read(pfd[0], msg + n, sizeof msg - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || (n += (size_t)r) >= sizeof msg - 1)
            break;
    }
    msg[n] = '\0';
    close(pfd[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return DRA_OK;
    while (n > 0 && msg[n - 1] == '\n')
        msg[--n] = '\0';
    dra_diag_add(d, "", 0, 0, "bwrap cannot create a container here: %s", n ? msg : "it failed");
    return DRA_EUNSUPPORTED;
}

dra_err dra_node_runtime_list(dra_node_runtime *rt, dra_arena *a, const char ***ids, size_t *n)
{
    DIR *dp = opendir(rt->state_dir);
    struct dirent *de;
    const char **v = NULL;
    size_t cap = 0;
    *ids = NULL;
    *n = 0;
    if (!dp)
        return errno == ENOENT ? DRA_OK : DRA_EIO;
    while ((de = readdir(dp)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (*n == cap) {
            const char **nv = dra_arena_array(a, cap * 2 + 8, sizeof *nv);
            if (!nv)
                break;
            if (*n)
                memcpy(nv, v, *n * sizeof *v);
            v = nv;
            cap = cap * 2 + 8;
        }
        if (!(v[*n] = dra_arena_strdup(a, de->d_name)))
            break;
        (*n)++;
    }
    closedir(dp);
    *ids = v;
    return de ? DRA_ENOMEM : DRA_OK;
}

/* ---- state file -------------------------------------------------------- */

typedef struct raw_state {
    char status[16];
    int shim_pid, pid;
    int64_t shim_start, pid_start, started, finished;
    int exit_code;
    char message[512];
} raw_state;

static int state_read(const char *dir, raw_state *s)
{
    char path[PATH_MAX + 32], *text, *line, *save = NULL;
    dra_arena a;
    int rc = -1;
    memset(s, 0, sizeof *s);
    snprintf(path, sizeof path, "%s/state", dir);
    dra_arena_init(&a, NULL);
    if (node_read_file(&a, path, 1 << 16, &text, NULL) == 0) {
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            char *v = strchr(line, '=');
            if (!v)
                continue;
            *v++ = '\0';
            if (strcmp(line, "status") == 0)
                snprintf(s->status, sizeof s->status, "%s", v);
            else if (strcmp(line, "shim_pid") == 0)
                s->shim_pid = atoi(v);
            else if (strcmp(line, "shim_start") == 0)
                s->shim_start = strtoll(v, NULL, 10);
            else if (strcmp(line, "pid") == 0)
                s->pid = atoi(v);
            else if (strcmp(line, "pid_start") == 0)
                s->pid_start = strtoll(v, NULL, 10);
            else if (strcmp(line, "started") == 0)
                s->started = strtoll(v, NULL, 10);
            else if (strcmp(line, "finished") == 0)
                s->finished = strtoll(v, NULL, 10);
            else if (strcmp(line, "exit_code") == 0)
                s->exit_code = atoi(v);
            else if (strcmp(line, "message") == 0)
                snprintf(s->message, sizeof s->message, "%s", v);
        }
        rc = 0;
    }
    dra_arena_fini(&a);
    return rc;
}

static int alive(int pid, int64_t start)
{
    return pid > 0 && start >= 0 && node_proc_start(pid) == start;
}

static int pidfd_of(int pid)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
#else
    (void)pid;
    return -1;
#endif
}

static dra_node_ctr *ctr_new(dra_node_runtime *rt, const char *id, const char *dir)
{
    dra_node_ctr *c = dra_calloc(rt->mem, 1, sizeof *c);
    if (!c)
        return NULL;
    c->rt = rt;
    c->pidfd = -1;
    c->id = dra_strdup(rt->mem, id);
    c->dir = dra_strdup(rt->mem, dir);
    if (!c->id || !c->dir) {
        dra_node_ctr_free(c);
        return NULL;
    }
    return c;
}

void dra_node_ctr_free(dra_node_ctr *c)
{
    if (!c)
        return;
    if (c->pidfd >= 0)
        close(c->pidfd);
    dra_free(c->rt->mem, c->id);
    dra_free(c->rt->mem, c->dir);
    dra_free(c->rt->mem, c);
}

const char *dra_node_ctr_id(const dra_node_ctr *c)
{
    return c->id;
}

int dra_node_ctr_fd(const dra_node_ctr *c)
{
    return c->pidfd;
}

dra_err dra_node_ctr_status_get(dra_node_ctr *c, dra_node_ctr_status *st)
{
    raw_state s;
    /* A shim found gone after a read that said running may have written
     * its last state and exited in between: read once more before
     * calling the container lost. */
    for (int again = 0;; again++) {
        memset(st, 0, sizeof *st);
        if (state_read(c->dir, &s) != 0)
            return DRA_EIO;
        st->pid = s.pid;
        st->started_ns = s.started;
        st->finished_ns = s.finished;
        st->exit_code = s.exit_code;
        snprintf(st->message, sizeof st->message, "%s", s.message);
        if (strcmp(s.status, "exited") == 0)
            st->phase = DRA_NODE_CTR_EXITED;
        else if (strcmp(s.status, "failed") == 0)
            st->phase = DRA_NODE_CTR_FAILED;
        else if (alive(s.shim_pid, s.shim_start))
            st->phase = strcmp(s.status, "running") == 0 ? DRA_NODE_CTR_RUNNING
                                                         : DRA_NODE_CTR_CREATED;
        else if (again)
            st->phase = DRA_NODE_CTR_LOST;
        else
            continue;
        return DRA_OK;
    }
}

dra_err dra_node_ctr_signal(dra_node_ctr *c, int sig)
{
    raw_state s;
    if (state_read(c->dir, &s) != 0)
        return DRA_EIO;
    /* The pid is only ours while the process that had it lives. */
    if (!alive(s.pid, s.pid_start))
        return DRA_OK;
    if (kill(s.pid, sig) != 0 && errno != ESRCH)
        return DRA_EIO;
    return DRA_OK;
}

dra_err dra_node_ctr_wait(dra_node_ctr *c, int timeout_ms, dra_node_ctr_status *st)
{
    dra_node_ctr_status tmp;
    int64_t deadline = timeout_ms < 0 ? -1 : node_mono_ms() + timeout_ms;
    if (!st)
        st = &tmp;
    for (;;) {
        int64_t left = deadline < 0 ? 50 : deadline - node_mono_ms();
        if (dra_node_ctr_status_get(c, st) == DRA_OK && st->phase != DRA_NODE_CTR_RUNNING &&
            st->phase != DRA_NODE_CTR_CREATED)
            return DRA_OK;
        if (deadline >= 0 && left <= 0)
            return DRA_ETIMEOUT;
        if (c->pidfd >= 0) {
            struct pollfd p = {c->pidfd, POLLIN, 0};
            if (poll(&p, 1, deadline < 0 ? -1 : (int)left) > 0) {
                /* The shim is gone; its last write is on disk. */
                dra_node_ctr_status_get(c, st);
                if (st->phase == DRA_NODE_CTR_RUNNING || st->phase == DRA_NODE_CTR_CREATED)
                    st->phase = DRA_NODE_CTR_LOST;
                return DRA_OK;
            }
        } else {
            usleep((useconds_t)((left < 50 ? left : 50) * 1000));
        }
    }
}

dra_err dra_node_ctr_remove(dra_node_runtime *rt, const char *id)
{
    char dir[PATH_MAX];
    raw_state s;
    if ((size_t)snprintf(dir, sizeof dir, "%s/%s", rt->state_dir, id) >= sizeof dir || strchr(id, '/'))
        return DRA_EINVAL;
    if (state_read(dir, &s) == 0 && alive(s.shim_pid, s.shim_start))
        return DRA_ECONFLICT;
    return node_rmtree(dir) == 0 ? DRA_OK : DRA_EIO;
}

dra_err dra_node_ctr_open(dra_node_runtime *rt, const char *id, dra_node_ctr **out, dra_diag *d)
{
    char dir[PATH_MAX];
    raw_state s;
    dra_node_ctr *c;
    *out = NULL;
    if (!id || strchr(id, '/') || (size_t)snprintf(dir, sizeof dir, "%s/%s", rt->state_dir, id) >= sizeof dir)
        return DRA_EINVAL;
    if (state_read(dir, &s) != 0) {
        if (errno == ENOENT)
            return DRA_ENOTFOUND;
        dra_diag_add(d, "", 0, 0, "read %s/state: %s", dir, strerror(errno));
        return DRA_EIO;
    }
    if (!(c = ctr_new(rt, id, dir)))
        return DRA_ENOMEM;
    c->shim_pid = s.shim_pid;
    c->shim_start = s.shim_start;
    if (alive(s.shim_pid, s.shim_start)) {
        c->pidfd = pidfd_of(s.shim_pid);
        /* It may have exited between the check and the open. */
        if (c->pidfd >= 0 && !alive(s.shim_pid, s.shim_start)) {
            close(c->pidfd);
            c->pidfd = -1;
        }
    }
    *out = c;
    return DRA_OK;
}

/* ---- start ------------------------------------------------------------- */

/* Reads one line from |fd| (the shim's sync socket) within
 * |timeout_ms|. 0, or -1 on EOF, error or timeout. */
static int read_line(int fd, char *buf, size_t size, int timeout_ms)
{
    size_t n = 0;
    int64_t deadline = node_mono_ms() + timeout_ms;
    while (n + 1 < size) {
        struct pollfd p = {fd, POLLIN, 0};
        int64_t left = deadline - node_mono_ms();
        ssize_t r;
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return -1;
        r = read(fd, buf + n, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (buf[n] == '\n')
            break;
        n++;
    }
    buf[n] = '\0';
    return 0;
}

/* Forks the shim in its own session; it forks again at once (see
 * shim.c), so it is never our child and outlives us. Only
 * async-signal-safe calls between fork and exec: we may have threads.
 * Exec'ing right away also keeps tools like valgrind out of the child. */
static int spawn_shim(dra_node_runtime *rt, const char *dir, int sync_fd)
{
    char *argv[] = {rt->shim, (char *)"run", (char *)dir, (char *)"3", NULL};
    int nul = open("/dev/null", O_RDWR | O_CLOEXEC), st = 0;
    pid_t pid;
    if (nul < 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        sigset_t none;
        /* drad blocks SIGTERM and SIGINT in every thread to take them
         * with sigwait; the mask survives exec. */
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setsid();
        /* The standard streams first: |nul| may be 3, |sync_fd| is not
         * below 3 since ours are open. */
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
        if (sync_fd == 3)
            fcntl(3, F_SETFD, 0);
        else
            dup2(sync_fd, 3);
        close_range(4, ~0u, 0);
        execve(rt->shim, argv, environ);
        _exit(127);
    }
    close(nul);
    if (pid < 0)
        return -1;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* A minimal OCI runtime config for hooks that read the bundle: the
 * process, the root (the host's, read-only) and the hostname. */
static dra_doc *oci_config(dra_arena *a, const dra_node_ctr_config *cfg, dra_err *err)
{
    dra_doc *m = dra_doc_new_map(a, 4), *proc = dra_doc_new_map(a, 3), *root = dra_doc_new_map(a, 2);
    dra_doc *args = dra_doc_new_list(a, cfg->argc), *env = dra_doc_new_list(a, cfg->n_env);
    for (size_t i = 0; i < cfg->argc; i++)
        node_push(a, args, node_str(a, cfg->argv[i]), err);
    for (size_t i = 0; i < cfg->n_env; i++)
        node_push(a, env, node_str(a, cfg->env[i]), err);
    for (size_t i = 0; cfg->edits && i < cfg->edits->n_env; i++)
        node_push(a, env, node_str(a, cfg->edits->env[i]), err);
    node_set_str(a, m, "ociVersion", "1.2.0", err);
    node_set(a, proc, "args", args, err);
    node_set(a, proc, "env", env, err);
    node_set_str(a, proc, "cwd", cfg->working_dir && cfg->working_dir[0] ? cfg->working_dir : "/", err);
    node_set(a, m, "process", proc, err);
    node_set_str(a, root, "path", "/", err);
    node_set(a, root, "readonly", dra_doc_new_bool(a, 1), err);
    node_set(a, m, "root", root, err);
    if (cfg->hostname)
        node_set_str(a, m, "hostname", cfg->hostname, err);
    return m;
}

static dra_err write_json(const char *dir, const char *name, const dra_doc *doc, const dra_mem *mem,
                          dra_diag *d)
{
    char path[PATH_MAX + 32];
    dra_buf b;
    dra_err e;
    dra_buf_init(&b, mem);
    e = dra_doc_to_json(doc, 2, &b);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!e && node_write_file(path, b.p, b.len) != 0) {
        dra_diag_add(d, "", 0, 0, "write %s: %s", path, strerror(errno));
        e = DRA_EIO;
    }
    dra_buf_fini(&b);
    return e;
}

static dra_err write_config(dra_node_runtime *rt, const dra_node_ctr_config *cfg, const char *dir, dra_diag *d)
{
    dra_arena a;
    dra_doc *doc, *oci;
    dra_err e, berr = DRA_OK;
    dra_arena_init(&a, rt->mem);
    e = node_ctr_plan(&a, cfg, rt->bwrap, rt->shim, dir, rt->as_root, &doc, d);
    if (!e)
        e = write_json(dir, "shim.json", doc, rt->mem, d);
    if (!e) {
        oci = oci_config(&a, cfg, &berr);
        e = berr ? berr : write_json(dir, "config.json", oci, rt->mem, d);
    }
    dra_arena_fini(&a);
    return e;
}

/* Talks the shim through its start: its pid, our go, its outcome. */
static dra_err handshake(dra_node_ctr *c, int fd, dra_diag *d)
{
    char line[1024];
    int got = read_line(fd, line, sizeof line, 10000);
    if (got == 0 && strncmp(line, "failed ", 7) == 0)
        return dra_diag_add(d, "", 0, 0, "%s", line + 7), DRA_EIO;
    if (got != 0 || strncmp(line, "pid ", 4) != 0) {
        dra_node_ctr_status st;
        if (dra_node_ctr_status_get(c, &st) == DRA_OK && st.message[0])
            return dra_diag_add(d, "", 0, 0, "%s", st.message), DRA_EIO;
        return dra_diag_add(d, "", 0, 0, "dra-shim did not start (%s)", c->rt->shim), DRA_EIO;
    }
    c->shim_pid = atoi(line + 4);
    c->shim_start = node_proc_start(c->shim_pid);
    c->pidfd = pidfd_of(c->shim_pid);
    if (write(fd, "g", 1) != 1)
        return dra_diag_add(d, "", 0, 0, "dra-shim went away"), DRA_EIO;
    /* Hooks may run before the command starts; they have their own
     * timeouts, this is only a backstop. */
    if (read_line(fd, line, sizeof line, 600000) != 0)
        return dra_diag_add(d, "", 0, 0, "dra-shim ended while starting the container"), DRA_EIO;
    if (strncmp(line, "running ", 8) == 0)
        return DRA_OK;
    dra_diag_add(d, "", 0, 0, "%s", strncmp(line, "failed ", 7) == 0 ? line + 7 : line);
    return DRA_EIO;
}

dra_err dra_node_ctr_start(dra_node_runtime *rt, const dra_node_ctr_config *cfg,
                      dra_node_ctr **out, dra_diag *d)
{
    char dir[PATH_MAX];
    int sv[2];
    dra_node_ctr *c;
    dra_err e;
    *out = NULL;
    if (!cfg || !cfg->id || !cfg->log_path || strchr(cfg->id, '/') ||
        (size_t)snprintf(dir, sizeof dir, "%s/%s", rt->state_dir, cfg->id) >= sizeof dir)
        return dra_diag_add(d, "", 0, 0, "invalid container id or log path"), DRA_EINVAL;
    if (mkdir(dir, 0700) != 0)
        return errno == EEXIST ? DRA_EEXIST
                               : (dra_diag_add(d, "", 0, 0, "create %s: %s", dir, strerror(errno)), DRA_EIO);
    if ((e = write_config(rt, cfg, dir, d)) != DRA_OK) {
        node_rmtree(dir);
        return e;
    }
    if (!(c = ctr_new(rt, cfg->id, dir)))
        return DRA_ENOMEM;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        dra_node_ctr_free(c);
        return DRA_EIO;
    }
    if (spawn_shim(rt, dir, sv[1]) != 0) {
        close(sv[0]);
        close(sv[1]);
        dra_node_ctr_free(c);
        return dra_diag_add(d, "", 0, 0, "fork: %s", strerror(errno)), DRA_EIO;
    }
    close(sv[1]);
    e = handshake(c, sv[0], d);
    close(sv[0]);
    if (e) {
        dra_node_ctr_free(c);
        return e;
    }
    *out = c;
    return DRA_OK;
}
