/*
 * kubeconfig.c: the kubeconfig drad writes for kubectl and other clients:
 * cluster, user and context all named "drad", the CA inline, the bearer
 * token as the credential.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "drad.h"

static void b64(dra_buf *out, const char *s)
{
    static const char t[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)s[i] << 16;
        if (i + 1 < n)
            v |= (unsigned char)s[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)s[i + 2];
        char q[4] = {t[(v >> 18) & 63], t[(v >> 12) & 63],
                     i + 1 < n ? t[(v >> 6) & 63] : '=', i + 2 < n ? t[v & 63] : '='};
        dra_buf_append(out, q, 4);
    }
}

dra_err drad_write_kubeconfig(const char *path, const char *url,
                              const dra_apiserver_creds *creds, dra_diag *d)
{
    dra_buf b;
    char tmp[4200];
    int fd;
    size_t off = 0;
    dra_err e = DRA_OK;
    dra_buf_init(&b, NULL);
    dra_buf_printf(&b,
                   "apiVersion: v1\nkind: Config\nclusters:\n- name: drad\n"
                   "  cluster:\n    server: %s\n    certificate-authority-data: ",
                   url);
    b64(&b, creds->ca_cert);
    dra_buf_printf(&b,
                   "\nusers:\n- name: drad\n  user:\n    token: %s\n"
                   "contexts:\n- name: drad\n  context:\n    cluster: drad\n"
                   "    user: drad\n    namespace: default\n"
                   "current-context: drad\npreferences: {}\n",
                   creds->token);
    if (b.oom) {
        dra_buf_fini(&b);
        return DRA_ENOMEM;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        dra_diag_add(d, "", 0, 0, "%s: %s", tmp, strerror(errno));
        dra_buf_fini(&b);
        return DRA_EIO;
    }
    while (off < b.len) {
        ssize_t w = write(fd, b.p + off, b.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (off != b.len || fsync(fd))
        e = DRA_EIO;
    if (close(fd) || e || rename(tmp, path)) {
        dra_diag_add(d, "", 0, 0, "%s: %s", path, strerror(errno));
        unlink(tmp);
        e = DRA_EIO;
    }
    dra_buf_fini(&b);
    return e;
}
