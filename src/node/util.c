/*
 * util.c: clocks, RFC 3339 times, and the few file operations the node
 * module needs (atomic writes, directory trees, /proc lookups). Shared
 * by the library and dra-shim.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "node_int.h"

int64_t node_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t node_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian). */
static void civil(int64_t days, int *y, int *m, int *d)
{
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static int64_t days_from_civil(int y, int m, int d)
{
    int64_t yy = y - (m <= 2);
    int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
    int64_t yoe = yy - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void node_fmt_time(int64_t ns, int frac, char *buf, size_t size)
{
    int64_t secs = ns >= 0 ? ns / 1000000000 : (ns - 999999999) / 1000000000;
    int64_t rem = ns - secs * 1000000000;
    int64_t days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
    int64_t sod = secs - days * 86400;
    int y, mo, d;
    civil(days, &y, &mo, &d);
    if (frac)
        snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", y, mo, d, (int)(sod / 3600),
                 (int)(sod / 60 % 60), (int)(sod % 60), (long long)rem);
    else
        snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, (int)(sod / 3600),
                 (int)(sod / 60 % 60), (int)(sod % 60));
}

static int digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int node_parse_time(const char *s, size_t len, int64_t *ns)
{
    int y, mo, d, h, mi, se;
    int64_t frac = 0, scale = 100000000;
    size_t i = 19;
    if (len < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
        return -1;
    if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) || digits(s + 11, 2, &h) ||
        digits(s + 14, 2, &mi) || digits(s + 17, 2, &se))
        return -1;
    if (s[i] == '.') {
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
            frac += (s[i] - '0') * scale;
            scale /= 10;
        }
    }
    if (i + 1 != len || s[i] != 'Z' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return -1;
    {
        int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
        /* Nanoseconds in int64 end in 2262. */
        if (secs < 0 || secs >= INT64_MAX / 1000000000 - 1)
            return -1;
        *ns = secs * (int64_t)1000000000 + frac;
    }
    return 0;
}

int node_mkdirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return errno = EINVAL, -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        buf[i] = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return -1;
        buf[i] = i == n ? '\0' : '/';
    }
    return 0;
}

int node_write_file(const char *path, const void *data, size_t len)
{
    char tmp[4096];
    int fd, saved;
    const char *p = data;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= sizeof tmp)
        return errno = ENAMETOOLONG, -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            goto fail;
        p += w;
        len -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        fd = -1;
        goto fail;
    }
    return 0;
fail:
    saved = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    errno = saved;
    return -1;
}

int node_read_file(dra_arena *a, const char *path, size_t max, char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *buf;
    size_t n = 0;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size > max) {
        int saved = (size_t)st.st_size > max ? EFBIG : errno;
        close(fd);
        return errno = saved, -1;
    }
    if (!(buf = dra_arena_alloc(a, (size_t)st.st_size + 1))) {
        close(fd);
        return errno = ENOMEM, -1;
    }
    while (n < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int saved = errno;
            close(fd);
            return errno = saved, -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
}

int node_rmtree(const char *path)
{
    DIR *dp = opendir(path);
    struct dirent *de;
    int rc = 0;
    if (!dp)
        return errno == ENOTDIR ? unlink(path) : (errno == ENOENT ? 0 : -1);
    while ((de = readdir(dp)) != NULL) {
        char sub[4096];
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if ((size_t)snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) >= sizeof sub) {
            rc = -1;
            continue;
        }
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            rc |= node_rmtree(sub);
        else if (unlink(sub) != 0 && errno != ENOENT)
            rc = -1;
    }
    closedir(dp);
    if (rmdir(path) != 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

int64_t node_proc_start(int pid)
{
    char path[64], buf[1024];
    int fd;
    ssize_t n;
    const char *p;
    if (pid <= 0)
        return -1;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: fields after it
     * start past the last ')'. starttime is field 22, 19 spaces past the state (field 3). */
    if (!(p = strrchr(buf, ')')))
        return -1;
    p++;
    for (int f = 0; f < 19 && p; f++)
        p = strchr(p + 1, ' ');
    if (!p)
        return -1;
    /* A zombie (state Z) is as good as gone. */
    if (strrchr(buf, ')')[2] == 'Z')
        return -1;
    return strtoll(p + 1, NULL, 10);
}

void node_errf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

void node_random_hex(char *buf, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[64];
    size_t got = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = read(fd, raw, sizeof raw);
        got = r > 0 ? (size_t)r : 0;
        close(fd);
    }
    for (size_t i = got; i < sizeof raw; i++) /* fallback: time and address bits */
        raw[i] = (unsigned char)((uint64_t)node_now_ns() >> (i % 8 * 8) ^ (uintptr_t)buf >> (i % 4));
    for (size_t i = 0; i < n; i++)
        buf[i] = hex[(raw[(i / 2) % sizeof raw] >> (i % 2 ? 0 : 4)) & 15];
    buf[n] = '\0';
}
