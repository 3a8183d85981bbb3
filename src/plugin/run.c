/*
 * plugin/run.c: running nvidia-smi and nvidia-cuda-mps-control from the
 * driver root, as NVIDIA's plugin does with exec.Command: posix_spawn
 * (safe in a threaded process), stdin from a string, stdout and stderr
 * collected together, a timeout after which the child is killed.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugin_int.h"

extern char **environ;

static void close_pair(int fds[2])
{
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* Feeds |input| and drains the output until the child closes it or the
 * deadline passes. Returns 0, or -1 on timeout. */
static int pump(int in_fd, int out_fd, const char *input, int timeout_ms, dra_buf *out)
{
    size_t in_left = input ? strlen(input) : 0;
    int64_t deadline = plugin_now_ms() + timeout_ms;
    if (in_left == 0 && in_fd >= 0) {
        close(in_fd);
        in_fd = -1;
    }
    while (out_fd >= 0 || in_fd >= 0) {
        struct pollfd pf[2];
        int n = 2;
        pf[0].fd = out_fd; /* poll ignores negative descriptors */
        pf[0].events = POLLIN;
        pf[0].revents = 0;
        pf[1].fd = in_fd;
        pf[1].events = POLLOUT;
        pf[1].revents = 0;
        int64_t left = deadline - plugin_now_ms();
        if (left <= 0)
            break;
        int r = poll(pf, (nfds_t)n, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        if (in_fd >= 0 && (pf[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(in_fd, input, in_left);
            if (w > 0) {
                input += w;
                in_left -= (size_t)w;
            }
            if (w < 0 || in_left == 0) {
                close(in_fd);
                in_fd = -1;
            }
        }
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char buf[4096];
            ssize_t k = read(out_fd, buf, sizeof(buf));
            if (k > 0 && out && out->len < 65536)
                dra_buf_append(out, buf, (size_t)k);
            if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN)) {
                close(out_fd);
                out_fd = -1;
            }
        }
    }
    if (in_fd >= 0)
        close(in_fd);
    if (out_fd >= 0) {
        close(out_fd);
        return -1;
    }
    return 0;
}

dra_err plugin_run(const char *const *argv, const char *const *env,
                   const char *input, int timeout_ms, dra_buf *out, int *status)
{
    int in_p[2] = {-1, -1}, out_p[2] = {-1, -1};
    *status = -1;
    if (pipe2(in_p, O_CLOEXEC) != 0 || pipe2(out_p, O_CLOEXEC) != 0) {
        close_pair(in_p);
        close_pair(out_p);
        return DRA_EIO;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in_p[0], 0);
    if (out) {
        posix_spawn_file_actions_adddup2(&fa, out_p[1], 1);
        posix_spawn_file_actions_adddup2(&fa, out_p[1], 2);
    } else {
        /* A daemon would keep a pipe open forever: no output wanted. */
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
    }
    pid_t pid;
    int r = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv,
                        env ? (char *const *)env : environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in_p[0]);
    close(out_p[1]);
    if (r != 0) {
        close(in_p[1]);
        close(out_p[0]);
        if (out)
            dra_buf_printf(out, "cannot run %s: %s", argv[0], strerror(r));
        return DRA_EIO;
    }
    int64_t deadline = plugin_now_ms() + timeout_ms;
    if (!out) {
        close(out_p[0]);
        out_p[0] = -1;
    }
    int timed_out = pump(in_p[1], out_p[0], input, timeout_ms, out) != 0;
    int ws = 0;
    for (;;) {
        pid_t w = waitpid(pid, &ws, timed_out ? 0 : WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        if (w == 0 && plugin_now_ms() >= deadline) {
            kill(pid, SIGKILL);
            timed_out = 1;
        } else if (w == 0) {
            struct timespec nap = {0, 2000000};
            nanosleep(&nap, NULL);
        }
    }
    if (!timed_out && WIFEXITED(ws))
        *status = WEXITSTATUS(ws);
    return DRA_OK;
}
