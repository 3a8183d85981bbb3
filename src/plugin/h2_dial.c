/*
 * plugin/h2_dial.c: the client's connection to a gRPC target: a unix
 * socket ("/path", "unix:path", "unix:///path") or a TCP "host:port"
 * ("[v6]:port"; each address the name resolves to, in turn), connected
 * without blocking past the call's deadline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "plugin_int.h"

/* The path of a unix target ("/p", "unix:p", "unix:///p"), NULL for TCP. */
static const char *unix_path(const char *target)
{
    if (target[0] == '/')
        return target;
    if (strncmp(target, "unix://", 7) == 0)
        return target + 7;
    if (strncmp(target, "unix:", 5) == 0)
        return target + 5;
    return NULL;
}

/* Waits for a non-blocking connect; 0 or an errno value. */
static int finish_connect(int fd, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - plugin_now_ms();
        if (left <= 0)
            return ETIMEDOUT;
        struct pollfd pfd = {fd, POLLOUT, 0};
        int r = poll(&pfd, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno;
        if (r == 0)
            continue;
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            return errno;
        return err;
    }
}

/* A connected non-blocking socket, or -1 with errno-style *err. */
static int dial(const struct sockaddr *sa, socklen_t salen, int64_t deadline_ms, int *err)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    int rc = connect(fd, sa, salen);
    *err = rc == 0 ? 0 : errno;
    if (rc != 0 && errno == EINPROGRESS)
        *err = finish_connect(fd, deadline_ms);
    if (*err != 0) {
        close(fd);
        return -1;
    }
    if (sa->sa_family != AF_UNIX) {
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    return fd;
}

static int dial_unix(const char *path, int64_t deadline_ms, int *err)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        *err = ENAMETOOLONG;
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path));
    return dial((struct sockaddr *)&sa, sizeof(sa), deadline_ms, err);
}

/* "host:port" or "[v6]:port"; every address getaddrinfo gives, in turn. */
static int dial_tcp(const char *target, int64_t deadline_ms, int *err)
{
    char host[256];
    const char *colon = strrchr(target, ':');
    size_t hl = colon ? (size_t)(colon - target) : 0;
    if (!colon || hl == 0 || hl >= sizeof(host) || !colon[1]) {
        *err = EINVAL;
        return -1;
    }
    if (target[0] == '[' && colon[-1] == ']') {
        memcpy(host, target + 1, hl - 2);
        host[hl - 2] = '\0';
    } else {
        memcpy(host, target, hl);
        host[hl] = '\0';
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0) {
        *err = EHOSTUNREACH;
        return -1;
    }
    int fd = -1;
    *err = EHOSTUNREACH;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
        fd = dial(ai->ai_addr, ai->ai_addrlen, deadline_ms, err);
    freeaddrinfo(res);
    return fd;
}

int plugin_dial(const char *target, int64_t deadline_ms, char *peer, size_t peercap,
                char *authority, size_t authcap, int *err)
{
    const char *path = unix_path(target);
    if (path) {
        snprintf(peer, peercap, "unix:%s", path);
        snprintf(authority, authcap, "localhost");
        return dial_unix(path, deadline_ms, err);
    }
    snprintf(peer, peercap, "%s", target);
    snprintf(authority, authcap, "%s", target);
    return dial_tcp(target, deadline_ms, err);
}
