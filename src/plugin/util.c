/*
 * plugin/util.c: small helpers the plugin's files share: a sticky-error
 * builder for dra_doc trees (CDI specs, checkpoints, slices), atomic
 * file replacement (temp file, fsync, rename, fsync of the directory),
 * directory creation and an advisory file lock with a timeout.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plugin_int.h"

/* ---- files ------------------------------------------------------------------ */

static void errmsg(dra_diag *d, const char *what, const char *path, int e)
{
    dra_diag_add(d, "", 0, 0, "%s %s: %s", what, path, strerror(e));
}

dra_err plugin_mkdirs(const char *path, unsigned mode, dra_diag *d)
{
    char buf[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof(buf)) {
        dra_diag_add(d, "", 0, 0, "invalid directory path \"%s\"", path);
        return DRA_EINVAL;
    }
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST) {
            errmsg(d, "cannot create directory", buf, errno);
            return DRA_EIO;
        }
        buf[i] = c;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        dra_diag_add(d, "", 0, 0, "%s is not a directory", path);
        return DRA_EIO;
    }
    return DRA_OK;
}

dra_err plugin_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return DRA_EIO;
    int r = fsync(fd);
    close(fd);
    return r == 0 ? DRA_OK : DRA_EIO;
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

dra_err plugin_write_atomic(const char *dir, const char *name, const char *data,
                            size_t len, unsigned mode, int sync, dra_diag *d)
{
    char tmp[4096], dst[4096];
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.tmp-XXXXXX", dir, name) >= sizeof(tmp) ||
        (size_t)snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= sizeof(dst)) {
        dra_diag_add(d, "", 0, 0, "path too long: %s/%s", dir, name);
        return DRA_EINVAL;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        errmsg(d, "cannot create", tmp, errno);
        return DRA_EIO;
    }
    int e = 0;
    if (write_all(fd, data, len) != 0 || fchmod(fd, (mode_t)mode) != 0 ||
        (sync >= PLUGIN_SYNC_DATA && fdatasync(fd) != 0))
        e = errno ? errno : EIO;
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, dst) != 0)
        e = errno;
    if (e) {
        unlink(tmp);
        errmsg(d, "cannot write", dst, e);
        return DRA_EIO;
    }
    if (sync >= PLUGIN_SYNC_ALL && plugin_fsync_dir(dir) != DRA_OK) {
        errmsg(d, "cannot sync directory", dir, errno);
        return DRA_EIO;
    }
    return DRA_OK;
}

dra_err plugin_read_file(const char *path, const dra_mem *mem, dra_buf *out,
                         size_t max, dra_diag *d)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return DRA_ENOTFOUND;
        errmsg(d, "cannot open", path, errno);
        return DRA_EIO;
    }
    (void)mem;
    char chunk[8192];
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof(chunk));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            errmsg(d, "cannot read", path, errno);
            close(fd);
            return DRA_EIO;
        }
        if (r == 0)
            break;
        if (out->len + (size_t)r > max) {
            dra_diag_add(d, "", 0, 0, "%s is larger than %zu bytes", path, max);
            close(fd);
            return DRA_ELIMIT;
        }
        if (dra_buf_append(out, chunk, (size_t)r) != DRA_OK) {
            close(fd);
            return DRA_ENOMEM;
        }
    }
    close(fd);
    return DRA_OK;
}

/* ---- lock files -------------------------------------------------------------- */

dra_err plugin_flock(const char *path, int timeout_ms, int *fd_out)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    *fd_out = -1;
    if (fd < 0)
        return DRA_EIO;
    struct timespec nap = {0, 2 * 1000 * 1000};
    for (int waited = 0;; waited += 2) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            *fd_out = fd;
            return DRA_OK;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            close(fd);
            return DRA_EIO;
        }
        if (waited >= timeout_ms) {
            close(fd);
            return DRA_ETIMEOUT;
        }
        nanosleep(&nap, NULL);
    }
}

void plugin_funlock(int fd)
{
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
}

/* ---- log ---------------------------------------------------------------------- */

void plugin_log(const struct dra_plugin *p, const char *fmt, ...)
{
    if (!p || !p->o.log)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    p->o.log(p->o.log_ud, line);
}

/* ---- time --------------------------------------------------------------------- */

int64_t plugin_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void plugin_rfc3339(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
