/*
 * shim.c: dra-shim, the per-container supervisor (containerd-shim's
 * role). `dra-shim run DIR SYNCFD` reads DIR/shim.json written by
 * runtime.c, starts bubblewrap, runs the host-side OCI hooks, turns the
 * container's stdout and stderr into a CRI-format log with a timestamp
 * per line, and records the container's state in DIR/state, so drad can
 * die and find the container again. `dra-shim init ERRFD CFGFD -- CMD`
 * is the first program inside the sandbox: it runs the createContainer
 * and startContainer hooks there, then execs the container's command,
 * reporting a failed exec on ERRFD (close-on-exec, so silence means the
 * command started).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "node_int.h"

/* The kubelet's CRI log splits lines at 16 KiB (runtime's maxMsgSize). */
#define SHIM_LINE_MAX (16 * 1024)

typedef struct shim_cfg {
    dra_doc *root;
    const char *dir;
    const char *log;
    const char *id;
    const dra_doc *bwrap;   /* list of strings: the bwrap program and options */
    const dra_doc *command; /* list of strings */
    const dra_doc *hooks;   /* list of hook objects */
    const dra_doc *ensure;  /* mount points to create: [{path, dir}] */
    const char *shim;       /* this program, for the sandbox's init */
    const char *cwd;        /* the command's working directory */
} shim_cfg;

/* ---- small I/O helpers -------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void say(int fd, const char *fmt, ...) DRA_PRINTF(2, 3);
static void say(int fd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    (void)write_all(fd, buf, (size_t)n);
}

/* Single-line copy of |s| for the state file (newlines to spaces). */
static void one_line(char *dst, size_t size, const char *s)
{
    size_t i = 0;
    for (; s && *s && i + 1 < size; s++)
        dst[i++] = (*s == '\n' || *s == '\r') ? ' ' : *s;
    while (i > 0 && dst[i - 1] == ' ')
        i--;
    dst[i] = '\0';
}

/* DIR/state: key=value lines, replaced atomically. */
typedef struct shim_state {
    const char *status; /* created, running, exited, failed */
    int ctr_pid;
    int64_t ctr_start; /* clock ticks since boot of the container's pid 1 */
    int64_t started_ns, finished_ns;
    int exit_code;
    char message[512];
} shim_state;

static void state_write(const shim_cfg *c, const shim_state *s)
{
    char path[4096], buf[2048];
    int n = snprintf(buf, sizeof buf,
                     "shim_pid=%d\nshim_start=%lld\nstatus=%s\npid=%d\npid_start=%lld\n"
                     "started=%lld\nfinished=%lld\nexit_code=%d\nmessage=%s\n",
                     (int)getpid(), (long long)node_proc_start((int)getpid()), s->status, s->ctr_pid,
                     (long long)s->ctr_start, (long long)s->started_ns, (long long)s->finished_ns,
                     s->exit_code, s->message);
    snprintf(path, sizeof path, "%s/state", c->dir);
    if (n > 0)
        (void)node_write_file(path, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* ---- configuration -------------------------------------------------------- */

static const char *cfg_str(const dra_doc *m, const char *k)
{
    const dra_doc *v = dra_doc_get(m, k);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

static const dra_doc *cfg_list(const dra_doc *m, const char *k)
{
    const dra_doc *v = dra_doc_get(m, k);
    return v && v->kind == DRA_DOC_LIST ? v : NULL;
}

static int strings_ok(const dra_doc *l)
{
    for (size_t i = 0; l && i < l->u.list.n; i++)
        if (l->u.list.items[i]->kind != DRA_DOC_STRING)
            return 0;
    return l != NULL;
}

static int cfg_load(dra_arena *a, const char *dir, shim_cfg *c, char *err, size_t size)
{
    char path[4096], *text;
    size_t len;
    snprintf(path, sizeof path, "%s/shim.json", dir);
    memset(c, 0, sizeof *c);
    c->dir = dir;
    if (node_read_file(a, path, 16u << 20, &text, &len) != 0)
        return node_errf(err, size, "read %s: %s", path, strerror(errno)), -1;
    if (dra_doc_parse_json(a, text, len, &c->root, NULL) != DRA_OK || c->root->kind != DRA_DOC_MAP)
        return node_errf(err, size, "%s: not a JSON object", path), -1;
    c->log = cfg_str(c->root, "log");
    c->id = cfg_str(c->root, "id");
    c->shim = cfg_str(c->root, "shim");
    c->cwd = cfg_str(c->root, "cwd");
    c->bwrap = cfg_list(c->root, "bwrap");
    c->command = cfg_list(c->root, "command");
    c->hooks = cfg_list(c->root, "hooks");
    c->ensure = cfg_list(c->root, "ensure");
    if (!c->log || !c->id || !c->shim || !strings_ok(c->bwrap) || !strings_ok(c->command) ||
        c->bwrap->u.list.n == 0 || c->command->u.list.n == 0)
        return node_errf(err, size, "%s: missing log, id, shim, bwrap or command", path), -1;
    return 0;
}

/* ---- OCI hooks -------------------------------------------------------------- */

/* The OCI state document a hook reads on stdin, into |out|. */
static void hook_state(const char *id, const char *dir, const char *status, int pid, char *out,
                       size_t size)
{
    dra_arena a;
    dra_buf b;
    dra_doc *m;
    dra_arena_init(&a, NULL);
    dra_buf_init(&b, NULL);
    m = dra_doc_new_map(&a, 5);
    snprintf(out, size, "{}");
    if (m && !dra_doc_map_set(&a, m, "ociVersion", dra_doc_new_string(&a, "1.2.0", 5)) &&
        !dra_doc_map_set(&a, m, "id", dra_doc_new_string(&a, id, strlen(id))) &&
        !dra_doc_map_set(&a, m, "status", dra_doc_new_string(&a, status, strlen(status))) &&
        !dra_doc_map_set(&a, m, "pid", dra_doc_new_int(&a, pid)) &&
        !dra_doc_map_set(&a, m, "bundle", dra_doc_new_string(&a, dir, strlen(dir))) &&
        dra_doc_to_json(m, 0, &b) == DRA_OK)
        snprintf(out, size, "%s", b.p);
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

/* What a process started from here inherits is what a container's
 * process gets from a runtime: default dispositions and an empty signal
 * mask (we ignore SIGPIPE, SIGHUP and SIGINT, and the agent may block
 * signals in its threads; both would survive exec). Async-signal-safe. */
static void default_signals(void)
{
    struct sigaction sa;
    sigset_t none;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &sa, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Runs one hook object: path, args (args[0] is argv[0]), env, timeout;
 * |state| on its stdin, its output appended to |outfd|. 0 when it
 * exited 0; -1 with the reason in |err|. */
static int hook_run(const dra_doc *h, int exec_fd, const char *state, int outfd, char *err, size_t size)
{
    const char *path = cfg_str(h, "path");
    const dra_doc *args = cfg_list(h, "args"), *env = cfg_list(h, "env"), *to = dra_doc_get(h, "timeout");
    char *argv[256], *envp[256];
    int in[2], st = 0;
    int64_t deadline = to && to->kind == DRA_DOC_INT && to->u.i > 0 ? node_mono_ms() + to->u.i * 1000 : -1;
    size_t na = 0, ne = 0;
    pid_t pid;
    if (!path)
        return node_errf(err, size, "hook without a path"), -1;
    for (size_t i = 0; args && i < args->u.list.n && na < 255; i++)
        argv[na++] = (char *)args->u.list.items[i]->u.str.s;
    if (na == 0)
        argv[na++] = (char *)path;
    argv[na] = NULL;
    for (size_t i = 0; env && i < env->u.list.n && ne < 255; i++)
        envp[ne++] = (char *)env->u.list.items[i]->u.str.s;
    envp[ne] = NULL;
    if (pipe2(in, O_CLOEXEC) != 0)
        return node_errf(err, size, "pipe: %s", strerror(errno)), -1;
    pid = fork();
    if (pid < 0) {
        close(in[0]);
        close(in[1]);
        return node_errf(err, size, "fork: %s", strerror(errno)), -1;
    }
    if (pid == 0) {
        default_signals();
        dup2(in[0], 0);
        dup2(outfd, 1);
        dup2(outfd, 2);
        if (exec_fd >= 0)
            fexecve(exec_fd, argv, envp);
        else
            execve(path, argv, envp);
        _exit(127);
    }
    close(in[0]);
    (void)write_all(in[1], state, strlen(state));
    close(in[1]);
    for (;;) {
        pid_t r = waitpid(pid, &st, deadline < 0 ? 0 : WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return node_errf(err, size, "wait: %s", strerror(errno)), -1;
        if (deadline >= 0 && node_mono_ms() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return node_errf(err, size, "error running hook %s: timeout after %llds", path,
                            (long long)to->u.i),
                   -1;
        }
        if (r == 0)
            usleep(5000);
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        return node_errf(err, size, "error running hook %s: cannot execute (missing or not executable)", path), -1;
    if (WIFEXITED(st))
        return node_errf(err, size, "error running hook %s: exit status %d", path, WEXITSTATUS(st)), -1;
    return node_errf(err, size, "error running hook %s: signal %d", path, WTERMSIG(st)), -1;
}

/* The descriptor given for hook |i| in |fds| ("i:fd,i:fd"), or -1. */
static int hook_fd(const char *fds, size_t i)
{
    for (const char *p = fds; p && *p;) {
        char *end;
        long k = strtol(p, &end, 10);
        if (*end != ':')
            return -1;
        if ((size_t)k == i)
            return atoi(end + 1);
        p = strchr(end, ',');
        p = p ? p + 1 : NULL;
    }
    return -1;
}

/* Runs every hook of |kind| in order; stops at the first failure. Hooks
 * listed in |fds| run from that descriptor (opened on the host). */
static int hooks_run(const dra_doc *hooks, const char *kind, const char *fds, const char *state,
                     int outfd, char *err, size_t size)
{
    for (size_t i = 0; hooks && i < hooks->u.list.n; i++) {
        const dra_doc *h = hooks->u.list.items[i];
        const char *k = cfg_str(h, "hookName");
        if (k && strcmp(k, kind) == 0 && hook_run(h, hook_fd(fds, i), state, outfd, err, size) != 0)
            return -1;
    }
    return 0;
}

/* ---- the sandbox's init: hooks inside, then exec ------------------------ */

int node_shim_init(int argc, char **argv)
{
    /* argv: PROGRAM init ERRFD CFGFD CWD HOOKFDS -- CMD ARGS... */
    int errfd, cfgfd, i = 7;
    char err[1024], state[1024];
    dra_arena a;
    if (argc < 8 || strcmp(argv[6], "--") != 0)
        return 125;
    errfd = atoi(argv[2]);
    cfgfd = atoi(argv[3]);
    dra_arena_init(&a, NULL);
    if (cfgfd >= 0) {
        char path[64], *text;
        size_t len;
        dra_doc *root = NULL;
        snprintf(path, sizeof path, "/proc/self/fd/%d", cfgfd);
        if (node_read_file(&a, path, 16u << 20, &text, &len) == 0 &&
            dra_doc_parse_json(&a, text, len, &root, NULL) == DRA_OK) {
            const dra_doc *hooks = cfg_list(root, "hooks");
            const char *id = cfg_str(root, "id"), *dir = cfg_str(root, "dir");
            hook_state(id ? id : "", dir ? dir : "", "created", (int)getpid(), state, sizeof state);
            /* createContainer hooks resolve on the host (the shim opened
             * them), startContainer hooks inside, as OCI says. */
            if (hooks_run(hooks, "createContainer", argv[5], state, 2, err, sizeof err) != 0 ||
                hooks_run(hooks, "startContainer", NULL, state, 2, err, sizeof err) != 0) {
                say(errfd, "%s", err);
                _exit(126);
            }
        }
        close(cfgfd);
    }
    dra_arena_fini(&a);
    if (chdir(argv[4]) != 0) {
        say(errfd, "chdir to cwd (\"%s\") set in config.json failed: %s", argv[4], strerror(errno));
        _exit(127);
    }
    /* Only the standard streams reach the command. */
    if (errfd > 3)
        close_range(3, (unsigned)errfd - 1, 0);
    close_range((unsigned)errfd + 1, ~0u, 0);
    fcntl(errfd, F_SETFD, FD_CLOEXEC);
    default_signals();
    execvp(argv[i], argv + i);
    if (errno == ENOENT && !strchr(argv[i], '/'))
        say(errfd, "exec: \"%s\": executable file not found in $PATH", argv[i]);
    else
        say(errfd, "exec: \"%s\": %s", argv[i], strerror(errno));
    _exit(127);
}

/* ---- the log writer ------------------------------------------------------ */

typedef struct stream {
    int fd;
    const char *name; /* stdout, stderr */
    char buf[SHIM_LINE_MAX];
    size_t len;
} stream;

/* One CRI log record: "<time> <stream> <P|F> <content>\n". */
static void log_record(int logfd, const char *name, int partial, const char *p, size_t n)
{
    char head[80], ts[48];
    int h;
    struct iovec v[3];
    node_fmt_time(node_now_ns(), 1, ts, sizeof ts);
    h = snprintf(head, sizeof head, "%s %s %c ", ts, name, partial ? 'P' : 'F');
    v[0] = (struct iovec){head, (size_t)h};
    v[1] = (struct iovec){(void *)p, n};
    v[2] = (struct iovec){(char *)"\n", 1};
    /* One writev on an O_APPEND descriptor: a record is never split by
     * the other stream's records (records stay far below PIPE_BUF-like
     * limits of regular files, which append atomically per call). */
    while (writev(logfd, v, 3) < 0 && errno == EINTR)
        ;
}

/* Reads what is available on |s|; writes full lines, and partial
 * records when a line passes SHIM_LINE_MAX. Returns 0 at EOF. */
static int stream_pump(stream *s, int logfd)
{
    ssize_t r = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);
    size_t start = 0;
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return 1;
    if (r <= 0) {
        if (s->len)
            log_record(logfd, s->name, 0, s->buf, s->len);
        s->len = 0;
        return 0;
    }
    s->len += (size_t)r;
    for (size_t i = 0; i < s->len; i++) {
        if (s->buf[i] != '\n')
            continue;
        log_record(logfd, s->name, 0, s->buf + start, i - start);
        start = i + 1;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
    if (s->len == sizeof s->buf) {
        log_record(logfd, s->name, 1, s->buf, s->len);
        s->len = 0;
    }
    return 1;
}

/* ---- mount points ----------------------------------------------------------
 * The sandbox sees the host's root read-only, so a CDI mount or device
 * node whose destination does not exist on the host has no mount point.
 * As root, the shim gives itself a private mount namespace and lays an
 * overlay (upper layer on a private tmpfs) over the deepest existing
 * directory, then creates the mount points there; bwrap inherits that
 * view. The host never sees any of it. */

static int overlay_dir(const char *scratch, const char *dir, int n, char *err, size_t size)
{
    char up[4200], wk[4200], opts[12800];
    snprintf(up, sizeof up, "%s/u%d", scratch, n);
    snprintf(wk, sizeof wk, "%s/w%d", scratch, n);
    if (mkdir(up, 0755) != 0 || mkdir(wk, 0755) != 0)
        return node_errf(err, size, "mkdir %s: %s", up, strerror(errno)), -1;
    snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s", dir, up, wk);
    if (mount("overlay", dir, "overlay", 0, opts) != 0)
        return node_errf(err, size, "overlay on %s: %s", dir, strerror(errno)), -1;
    return 0;
}

/* Creates |path| (a directory when |is_dir|) and its missing parents
 * under an overlay of the deepest existing ancestor. */
static int ensure_one(const char *scratch, const char *path, int is_dir, int *n_overlays,
                      char *err, size_t size)
{
    char anc[4096];
    struct stat st;
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof anc || path[0] != '/')
        return node_errf(err, size, "bad mount point %s", path), -1;
    if (lstat(path, &st) == 0)
        return 0;
    memcpy(anc, path, len + 1);
    do {
        char *sl = strrchr(anc, '/');
        if (sl == anc) {
            anc[1] = '\0';
            break;
        }
        *sl = '\0';
    } while (lstat(anc, &st) != 0);
    if (strcmp(anc, "/") == 0)
        return node_errf(err, size, "cannot create mount point %s: no parent directory of it exists on the host",
                        path),
               -1;
    if (overlay_dir(scratch, anc, (*n_overlays)++, err, size) != 0)
        return -1;
    for (size_t i = strlen(anc) + 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        memcpy(anc, path, i);
        anc[i] = '\0';
        if (i == len && !is_dir) {
            int fd = open(anc, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0)
                return node_errf(err, size, "create %s: %s", anc, strerror(errno)), -1;
            close(fd);
        } else if (mkdir(anc, 0755) != 0 && errno != EEXIST) {
            return node_errf(err, size, "mkdir %s: %s", anc, strerror(errno)), -1;
        }
    }
    return 0;
}

static int ensure_mount_points(const shim_cfg *c, char *err, size_t size)
{
    char scratch[4096];
    int n = 0;
    if (!c->ensure || c->ensure->u.list.n == 0)
        return 0;
    if (unshare(CLONE_NEWNS) != 0)
        return node_errf(err, size, "creating mount points needs a private mount namespace: %s",
                        strerror(errno)),
               -1;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return node_errf(err, size, "make mounts private: %s", strerror(errno)), -1;
    snprintf(scratch, sizeof scratch, "%s/scratch", c->dir);
    if ((mkdir(scratch, 0700) != 0 && errno != EEXIST) ||
        mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0)
        return node_errf(err, size, "scratch tmpfs %s: %s", scratch, strerror(errno)), -1;
    for (size_t i = 0; i < c->ensure->u.list.n; i++) {
        const dra_doc *e = c->ensure->u.list.items[i];
        const char *p = cfg_str(e, "path");
        const dra_doc *d = dra_doc_get(e, "dir");
        if (!p || ensure_one(scratch, p, d && d->kind == DRA_DOC_BOOL && d->u.b, &n, err, size) != 0)
            return -1;
    }
    return 0;
}

/* ---- run --------------------------------------------------------------- */

typedef struct run {
    shim_cfg c;
    dra_arena *a;
    int sync;         /* socket to the agent while starting */
    int logfd, hooklog;
    int out[2], errp[2], info[2], block[2], status[2], exec[2], cfgfd;
    pid_t bwrap;
    shim_state st;
    char state_json[1024];
    char *hook_fds; /* "i:fd,..." for createContainer hooks */
} run;

/* Opens every createContainer hook on the host for the sandbox's init,
 * which runs it from the descriptor (inherited through bwrap). */
static int open_hooks(run *r, char *err, size_t size)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    for (size_t i = 0; r->c.hooks && i < r->c.hooks->u.list.n; i++) {
        const dra_doc *h = r->c.hooks->u.list.items[i];
        const char *k = cfg_str(h, "hookName"), *path = cfg_str(h, "path");
        int fd;
        if (!k || strcmp(k, "createContainer") != 0 || !path)
            continue;
        if ((fd = open(path, O_PATH)) < 0) {
            node_errf(err, size, "error running hook %s: %s", path, strerror(errno));
            dra_buf_fini(&b);
            return -1;
        }
        dra_buf_printf(&b, "%s%zu:%d", b.len ? "," : "", i, fd);
    }
    r->hook_fds = dra_arena_strdup(r->a, b.len ? b.p : "-");
    dra_buf_fini(&b);
    return r->hook_fds ? 0 : -1;
}

/* The bwrap command line: program, our fds, options, then our init. */
static char **run_argv(run *r)
{
    const dra_doc *b = r->c.bwrap, *cmd = r->c.command;
    size_t n = b->u.list.n + cmd->u.list.n + 16, k = 0;
    char **v = dra_arena_array(r->a, n, sizeof *v);
    if (!v)
        return NULL;
    v[k++] = (char *)b->u.list.items[0]->u.str.s;
    v[k++] = (char *)"--info-fd";
    v[k++] = dra_arena_sprintf(r->a, "%d", r->info[1]);
    v[k++] = (char *)"--block-fd";
    v[k++] = dra_arena_sprintf(r->a, "%d", r->block[0]);
    v[k++] = (char *)"--json-status-fd";
    v[k++] = dra_arena_sprintf(r->a, "%d", r->status[1]);
    for (size_t i = 1; i < b->u.list.n; i++)
        v[k++] = (char *)b->u.list.items[i]->u.str.s;
    v[k++] = (char *)"--";
    v[k++] = (char *)r->c.shim;
    v[k++] = (char *)"init";
    v[k++] = dra_arena_sprintf(r->a, "%d", r->exec[1]);
    v[k++] = dra_arena_sprintf(r->a, "%d", r->cfgfd);
    v[k++] = (char *)(r->c.cwd ? r->c.cwd : "/");
    v[k++] = r->hook_fds;
    v[k++] = (char *)"--";
    for (size_t i = 0; i < cmd->u.list.n; i++)
        v[k++] = (char *)cmd->u.list.items[i]->u.str.s;
    v[k] = NULL;
    for (size_t i = 0; i < k; i++)
        if (!v[i])
            return NULL;
    return v;
}

static void fail_start(run *r, const char *msg)
{
    r->st.status = "failed";
    r->st.exit_code = 128;
    r->st.finished_ns = node_now_ns();
    one_line(r->st.message, sizeof r->st.message, msg);
    state_write(&r->c, &r->st);
    say(r->sync, "failed %s\n", r->st.message);
}

/* Reads |fd| to EOF into |buf| (NUL-terminated). */
static size_t read_to_eof(int fd, char *buf, size_t size)
{
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd, buf + n, size - 1 - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0 || n + (size_t)k >= size - 1) {
            n += k > 0 ? (size_t)k : 0;
            break;
        }
        n += (size_t)k;
    }
    buf[n] = '\0';
    return n;
}

static int spawn_bwrap(run *r, char **argv)
{
    r->bwrap = fork();
    if (r->bwrap < 0)
        return -1;
    if (r->bwrap == 0) {
        int keep[] = {r->info[1], r->block[0], r->status[1], r->exec[1], r->cfgfd};
        int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
        default_signals();
        dup2(nul, 0);
        dup2(r->out[1], 1);
        dup2(r->errp[1], 2);
        for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
            if (keep[i] >= 0)
                fcntl(keep[i], F_SETFD, 0);
        execv(argv[0], argv);
        say(2, "bwrap: exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return 0;
}

static int make_pipes(run *r)
{
    if (pipe2(r->out, O_CLOEXEC) || pipe2(r->errp, O_CLOEXEC) || pipe2(r->info, O_CLOEXEC) ||
        pipe2(r->block, O_CLOEXEC) || pipe2(r->status, O_CLOEXEC) || pipe2(r->exec, O_CLOEXEC))
        return -1;
    return 0;
}

/* Parses bwrap's info ("child-pid": N) text. */
static int info_pid(const char *s)
{
    const char *p = strstr(s, "\"child-pid\"");
    return p && (p = strchr(p, ':')) ? atoi(p + 1) : 0;
}

/* Starts the container; on success the state is "running". */
static int run_start(run *r)
{
    char buf[8192], err[1024];
    char **argv;
    int pid;
    if (make_pipes(r) != 0)
        return fail_start(r, "pipe failed"), -1;
    if (open_hooks(r, err, sizeof err) != 0)
        return fail_start(r, err), -1;
    if (!(argv = run_argv(r)))
        return fail_start(r, "out of memory"), -1;
    if (ensure_mount_points(&r->c, err, sizeof err) != 0)
        return fail_start(r, err), -1;
    if (spawn_bwrap(r, argv) != 0)
        return fail_start(r, "fork failed"), -1;
    close(r->out[1]);
    close(r->errp[1]);
    close(r->info[1]);
    close(r->block[0]);
    close(r->status[1]);
    close(r->exec[1]);
    r->out[1] = r->errp[1] = r->info[1] = r->block[0] = r->status[1] = r->exec[1] = -1;
    read_to_eof(r->info[0], buf, sizeof buf);
    if (!(pid = info_pid(buf))) {
        /* bwrap gave up while building the sandbox: its stderr says why. */
        size_t n = read_to_eof(r->errp[0], buf, sizeof buf);
        while (n > 0 && buf[n - 1] == '\n')
            buf[--n] = '\0';
        waitpid(r->bwrap, NULL, 0);
        return fail_start(r, n ? buf : "bwrap failed to create the sandbox"), -1;
    }
    r->st.ctr_pid = pid;
    r->st.ctr_start = node_proc_start(pid);
    return 0;
}

static int run_release(run *r)
{
    char msg[1024], err[1024];
    hook_state(r->c.id, r->c.dir, "created", r->st.ctr_pid, r->state_json, sizeof r->state_json);
    if (hooks_run(r->c.hooks, "createRuntime", NULL, r->state_json, r->hooklog, err, sizeof err) != 0 ||
        hooks_run(r->c.hooks, "prestart", NULL, r->state_json, r->hooklog, err, sizeof err) != 0) {
        kill(r->st.ctr_pid, SIGKILL);
        waitpid(r->bwrap, NULL, 0);
        return fail_start(r, err), -1;
    }
    (void)write_all(r->block[1], "g", 1);
    close(r->block[1]);
    r->block[1] = -1;
    if (read_to_eof(r->exec[0], msg, sizeof msg) > 0) {
        waitpid(r->bwrap, NULL, 0);
        return fail_start(r, msg), -1;
    }
    r->st.status = "running";
    r->st.started_ns = node_now_ns();
    state_write(&r->c, &r->st);
    hook_state(r->c.id, r->c.dir, "running", r->st.ctr_pid, r->state_json, sizeof r->state_json);
    say(r->sync, "running %d %lld\n", r->st.ctr_pid, (long long)r->st.started_ns);
    close(r->sync);
    r->sync = -1;
    if (hooks_run(r->c.hooks, "poststart", NULL, r->state_json, r->hooklog, err, sizeof err) != 0)
        say(r->hooklog, "poststart: %s (ignored, as OCI runtimes do)\n", err);
    return 0;
}

/* Copies output to the log until both streams end, then reaps bwrap. */
static void run_supervise(run *r)
{
    stream so = {r->out[0], "stdout", {0}, 0}, se = {r->errp[0], "stderr", {0}, 0};
    int open_out = 1, open_err = 1, st = 0;
    char buf[256], err[1024];
    while (open_out || open_err) {
        struct pollfd p[2] = {{so.fd, POLLIN, 0}, {se.fd, POLLIN, 0}};
        if (!open_out)
            p[0].fd = -1;
        if (!open_err)
            p[1].fd = -1;
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (open_out && p[0].revents)
            open_out = stream_pump(&so, r->logfd);
        if (open_err && p[1].revents)
            open_err = stream_pump(&se, r->logfd);
    }
    while (waitpid(r->bwrap, &st, 0) < 0 && errno == EINTR)
        ;
    r->st.finished_ns = node_now_ns();
    buf[0] = '\0';
    read_to_eof(r->status[0], buf, sizeof buf);
    /* bwrap reports the exit as {"exit-code": N}, 128+signal for a
     * signal, as containerd does; its own exit status is the same. */
    {
        const char *p = strstr(buf, "\"exit-code\"");
        if (p && (p = strchr(p, ':')))
            r->st.exit_code = atoi(p + 1);
        else if (WIFEXITED(st))
            r->st.exit_code = WEXITSTATUS(st);
        else
            r->st.exit_code = 128 + WTERMSIG(st);
    }
    r->st.status = "exited";
    state_write(&r->c, &r->st);
    hook_state(r->c.id, r->c.dir, "stopped", r->st.ctr_pid, r->state_json, sizeof r->state_json);
    if (hooks_run(r->c.hooks, "poststop", NULL, r->state_json, r->hooklog, err, sizeof err) != 0)
        say(r->hooklog, "poststop: %s (ignored)\n", err);
}

static int open_files(run *r, char *err, size_t size)
{
    char path[4096];
    r->logfd = open(r->c.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (r->logfd < 0)
        return node_errf(err, size, "open log %s: %s", r->c.log, strerror(errno)), -1;
    snprintf(path, sizeof path, "%s/hooks.log", r->c.dir);
    r->hooklog = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    snprintf(path, sizeof path, "%s/shim.json", r->c.dir);
    /* The sandbox's init reads the hooks through this descriptor: the
     * state directory itself may be hidden inside (under /tmp). */
    r->cfgfd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->hooklog < 0 || r->cfgfd < 0)
        return node_errf(err, size, "open %s: %s", path, strerror(errno)), -1;
    return 0;
}

int node_shim_run(int argc, char **argv)
{
    /* argv: PROGRAM run DIR SYNCFD */
    run r;
    dra_arena a;
    char err[1024];
    if (argc < 4)
        return 2;
    /* Leave the agent's process tree: our parent exits now and the
     * agent reaps it, so we are nobody's child but init's. */
    {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p > 0)
            _exit(0);
    }
    memset(&r, 0, sizeof r);
    r.out[0] = r.out[1] = r.errp[0] = r.errp[1] = r.block[1] = -1;
    r.sync = atoi(argv[3]);
    r.st.status = "created";
    r.a = &a;
    dra_arena_init(&a, NULL);
    fcntl(r.sync, F_SETFD, FD_CLOEXEC);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    if (cfg_load(&a, argv[2], &r.c, err, sizeof err) != 0 || open_files(&r, err, sizeof err) != 0) {
        r.c.dir = argv[2];
        fail_start(&r, err);
        return 1;
    }
    /* Wait for the agent's go: it holds a pidfd on us by then. */
    say(r.sync, "pid %d\n", (int)getpid());
    if (read(r.sync, err, 1) != 1)
        return 1;
    if (run_start(&r) != 0 || run_release(&r) != 0)
        return 1;
    run_supervise(&r);
    dra_arena_fini(&a);
    return 0;
}
