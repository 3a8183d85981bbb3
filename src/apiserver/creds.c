/*
 * creds.c: drad's credentials, made with GnuTLS's x509 API at the first
 * start and reused afterwards: a self-signed CA, a serving certificate
 * for 127.0.0.1, ::1 and localhost, an admin client certificate, and a
 * random bearer token. Files are written with mode 0600 through a
 * temporary name and rename, so a crash never leaves half a key.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "apiserver_int.h"

#define TEN_YEARS (10L * 365 * 24 * 3600)

/* ---- files ------------------------------------------------------------------ */

static char *read_file(const dra_mem *mem, const char *path)
{
    FILE *f = fopen(path, "rb");
    dra_buf b;
    char chunk[4096];
    size_t n;
    if (!f)
        return NULL;
    dra_buf_init(&b, mem);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        dra_buf_append(&b, chunk, n);
    fclose(f);
    if (b.oom || !b.len) {
        dra_buf_fini(&b);
        return NULL;
    }
    return dra_buf_detach(&b);
}

static dra_err write_file(const char *path, const char *text, dra_diag *d)
{
    char tmp[4200];
    int fd;
    size_t len = strlen(text), off = 0;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        dra_diag_add(d, "", 0, 0, "%s: %s", tmp, strerror(errno));
        return DRA_EIO;
    }
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            dra_diag_add(d, "", 0, 0, "%s: %s", tmp, strerror(errno));
            close(fd);
            unlink(tmp);
            return DRA_EIO;
        }
        off += (size_t)w;
    }
    if (fsync(fd) || close(fd) || rename(tmp, path)) {
        dra_diag_add(d, "", 0, 0, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return DRA_EIO;
    }
    return DRA_OK;
}

/* ---- x509 --------------------------------------------------------------------- */

typedef struct pair {
    gnutls_x509_crt_t crt;
    gnutls_x509_privkey_t key;
} pair;

static void pair_fini(pair *p)
{
    if (p->crt)
        gnutls_x509_crt_deinit(p->crt);
    if (p->key)
        gnutls_x509_privkey_deinit(p->key);
    memset(p, 0, sizeof *p);
}

static int tls_fail(dra_diag *d, const char *what, int rc)
{
    dra_diag_add(d, "", 0, 0, "%s: %s", what, gnutls_strerror(rc));
    return rc;
}

/* A fresh key and a certificate shell: version 3, random serial, the
 * subject |dn|, valid from an hour ago for ten years. */
static int pair_new(pair *p, const char *dn, dra_diag *d)
{
    unsigned char serial[16];
    time_t now = time(NULL);
    int rc;
    memset(p, 0, sizeof *p);
    if ((rc = gnutls_x509_privkey_init(&p->key)) ||
        (rc = gnutls_x509_privkey_generate(
             p->key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1),
             0)))
        return tls_fail(d, "generating a key", rc);
    if ((rc = gnutls_x509_crt_init(&p->crt)) ||
        (rc = gnutls_x509_crt_set_version(p->crt, 3)) ||
        (rc = gnutls_x509_crt_set_key(p->crt, p->key)))
        return tls_fail(d, "making a certificate", rc);
    if ((rc = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial)))
        return tls_fail(d, "random serial", rc);
    serial[0] &= 0x7f; /* a positive integer */
    if ((rc = gnutls_x509_crt_set_serial(p->crt, serial, sizeof serial)) ||
        (rc = gnutls_x509_crt_set_activation_time(p->crt, now - 3600)) ||
        (rc = gnutls_x509_crt_set_expiration_time(p->crt, now + TEN_YEARS)) ||
        (rc = gnutls_x509_crt_set_dn(p->crt, dn, NULL)))
        return tls_fail(d, "filling a certificate", rc);
    return 0;
}

static int set_key_id(pair *p)
{
    unsigned char id[64];
    size_t n = sizeof id;
    int rc = gnutls_x509_crt_get_key_id(p->crt, 0, id, &n);
    return rc ? rc : gnutls_x509_crt_set_subject_key_id(p->crt, id, n);
}

static int make_ca(pair *ca, dra_diag *d)
{
    int rc;
    if ((rc = pair_new(ca, "CN=drad-ca", d)))
        return rc;
    if ((rc = gnutls_x509_crt_set_basic_constraints(ca->crt, 1, -1)) ||
        (rc = gnutls_x509_crt_set_key_usage(ca->crt, GNUTLS_KEY_KEY_CERT_SIGN |
                                                         GNUTLS_KEY_CRL_SIGN |
                                                         GNUTLS_KEY_DIGITAL_SIGNATURE)) ||
        (rc = set_key_id(ca)) ||
        (rc = gnutls_x509_crt_sign2(ca->crt, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0)))
        return tls_fail(d, "signing the CA", rc);
    return 0;
}

/* A leaf signed by |ca|: the serving certificate (|server| 1, with the
 * loopback names) or the admin client certificate. */
static int make_leaf(pair *leaf, const pair *ca, int server, dra_diag *d)
{
    static const unsigned char v4[4] = {127, 0, 0, 1};
    static const unsigned char v6[16] = {[15] = 1};
    unsigned char caid[64];
    size_t n = sizeof caid;
    int rc;
    if ((rc = pair_new(leaf, server ? "CN=drad" : "O=system:masters,CN=drad-admin", d)))
        return rc;
    if ((rc = gnutls_x509_crt_set_basic_constraints(leaf->crt, 0, -1)) ||
        (rc = gnutls_x509_crt_set_key_usage(leaf->crt, GNUTLS_KEY_DIGITAL_SIGNATURE |
                                                           GNUTLS_KEY_KEY_ENCIPHERMENT)) ||
        (rc = gnutls_x509_crt_set_key_purpose_oid(
             leaf->crt, server ? GNUTLS_KP_TLS_WWW_SERVER : GNUTLS_KP_TLS_WWW_CLIENT, 0)) ||
        (rc = set_key_id(leaf)))
        return tls_fail(d, "filling a certificate", rc);
    if (server &&
        ((rc = gnutls_x509_crt_set_subject_alt_name(leaf->crt, GNUTLS_SAN_DNSNAME,
                                                     "localhost", 9, GNUTLS_FSAN_APPEND)) ||
         (rc = gnutls_x509_crt_set_subject_alt_name(leaf->crt, GNUTLS_SAN_IPADDRESS, v4,
                                                     4, GNUTLS_FSAN_APPEND)) ||
         (rc = gnutls_x509_crt_set_subject_alt_name(leaf->crt, GNUTLS_SAN_IPADDRESS, v6,
                                                     16, GNUTLS_FSAN_APPEND))))
        return tls_fail(d, "naming the server", rc);
    if ((rc = gnutls_x509_crt_get_subject_key_id(ca->crt, caid, &n, NULL)) ||
        (rc = gnutls_x509_crt_set_authority_key_id(leaf->crt, caid, n)) ||
        (rc = gnutls_x509_crt_sign2(leaf->crt, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0)))
        return tls_fail(d, "signing a certificate", rc);
    return 0;
}

static char *export_pem(const dra_mem *mem, const pair *p, int key)
{
    gnutls_datum_t out = {NULL, 0};
    char *s;
    int rc = key ? gnutls_x509_privkey_export2(p->key, GNUTLS_X509_FMT_PEM, &out)
                 : gnutls_x509_crt_export2(p->crt, GNUTLS_X509_FMT_PEM, &out);
    if (rc)
        return NULL;
    s = dra_malloc(mem, out.size + 1);
    if (s) {
        memcpy(s, out.data, out.size);
        s[out.size] = '\0';
    }
    gnutls_free(out.data);
    return s;
}

static int import_pair(pair *p, const char *crt, const char *key)
{
    gnutls_datum_t dc = {(unsigned char *)crt, (unsigned)strlen(crt)};
    gnutls_datum_t dk = {(unsigned char *)key, (unsigned)strlen(key)};
    int rc;
    memset(p, 0, sizeof *p);
    if ((rc = gnutls_x509_crt_init(&p->crt)) ||
        (rc = gnutls_x509_crt_import(p->crt, &dc, GNUTLS_X509_FMT_PEM)) ||
        (rc = gnutls_x509_privkey_init(&p->key)) ||
        (rc = gnutls_x509_privkey_import(p->key, &dk, GNUTLS_X509_FMT_PEM)))
        return rc;
    return 0;
}

/* ---- load or create -------------------------------------------------------------- */

static char *path_in(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
    return buf;
}

static dra_err save_pair(const char *dir, const char *base, char *crt, char *key,
                         dra_diag *d)
{
    char p[4096], name[64];
    dra_err e;
    snprintf(name, sizeof name, "%s.crt", base);
    if ((e = write_file(path_in(p, sizeof p, dir, name), crt, d)))
        return e;
    snprintf(name, sizeof name, "%s.key", base);
    return write_file(path_in(p, sizeof p, dir, name), key, d);
}

/* The CA from the files, or a new one (then every leaf is remade too). */
static dra_err load_ca(const char *dir, dra_apiserver_creds *c, pair *ca,
                       int *fresh, dra_diag *d)
{
    char p[4096];
    c->ca_cert = read_file(c->mem, path_in(p, sizeof p, dir, "ca.crt"));
    c->ca_key = read_file(c->mem, path_in(p, sizeof p, dir, "ca.key"));
    *fresh = 0;
    if (c->ca_cert && c->ca_key && !import_pair(ca, c->ca_cert, c->ca_key))
        return DRA_OK;
    pair_fini(ca);
    dra_free(c->mem, c->ca_cert);
    dra_free(c->mem, c->ca_key);
    c->ca_cert = c->ca_key = NULL;
    if (make_ca(ca, d))
        return DRA_EIO;
    c->ca_cert = export_pem(c->mem, ca, 0);
    c->ca_key = export_pem(c->mem, ca, 1);
    if (!c->ca_cert || !c->ca_key)
        return DRA_ENOMEM;
    *fresh = 1;
    return save_pair(dir, "ca", c->ca_cert, c->ca_key, d);
}

static dra_err load_leaf(const char *dir, const char *base, int server,
                         const pair *ca, int fresh, const dra_mem *mem,
                         char **crt, char **key, dra_diag *d)
{
    char p[4096], name[64];
    pair leaf;
    snprintf(name, sizeof name, "%s.crt", base);
    *crt = fresh ? NULL : read_file(mem, path_in(p, sizeof p, dir, name));
    snprintf(name, sizeof name, "%s.key", base);
    *key = fresh ? NULL : read_file(mem, path_in(p, sizeof p, dir, name));
    if (*crt && *key)
        return DRA_OK;
    dra_free(mem, *crt);
    dra_free(mem, *key);
    *crt = *key = NULL;
    if (make_leaf(&leaf, ca, server, d)) {
        pair_fini(&leaf);
        return DRA_EIO;
    }
    *crt = export_pem(mem, &leaf, 0);
    *key = export_pem(mem, &leaf, 1);
    pair_fini(&leaf);
    if (!*crt || !*key)
        return DRA_ENOMEM;
    return save_pair(dir, base, *crt, *key, d);
}

static dra_err load_token(const char *dir, dra_apiserver_creds *c, dra_diag *d)
{
    char p[4096];
    unsigned char raw[24];
    char hex[64];
    c->token = read_file(c->mem, path_in(p, sizeof p, dir, "token"));
    if (c->token) {
        c->token[strcspn(c->token, "\r\n")] = '\0';
        if (strlen(c->token) >= 16)
            return DRA_OK;
        dra_free(c->mem, c->token);
    }
    if (gnutls_rnd(GNUTLS_RND_KEY, raw, sizeof raw)) {
        dra_diag_add(d, "", 0, 0, "cannot draw random bytes for the token");
        return DRA_EIO;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    c->token = dra_strdup(c->mem, hex);
    if (!c->token)
        return DRA_ENOMEM;
    return write_file(p, c->token, d);
}

dra_err dra_apiserver_creds_load(const char *dir, const dra_mem *mem,
                                 dra_apiserver_creds *out, dra_diag *d)
{
    pair ca;
    int fresh;
    dra_err e;
    memset(out, 0, sizeof *out);
    memset(&ca, 0, sizeof ca);
    out->mem = mem;
    if (gnutls_global_init()) {
        dra_diag_add(d, "", 0, 0, "cannot initialise GnuTLS");
        return DRA_EIO;
    }
    if ((e = load_ca(dir, out, &ca, &fresh, d)) ||
        (e = load_leaf(dir, "server", 1, &ca, fresh, mem, &out->server_cert,
                       &out->server_key, d)) ||
        (e = load_leaf(dir, "admin", 0, &ca, fresh, mem, &out->client_cert,
                       &out->client_key, d)) ||
        (e = load_token(dir, out, d)))
        dra_apiserver_creds_fini(out);
    pair_fini(&ca);
    gnutls_global_deinit();
    return e;
}

void dra_apiserver_creds_fini(dra_apiserver_creds *c)
{
    if (!c)
        return;
    dra_free(c->mem, c->ca_cert);
    dra_free(c->mem, c->ca_key);
    dra_free(c->mem, c->server_cert);
    dra_free(c->mem, c->server_key);
    dra_free(c->mem, c->client_cert);
    dra_free(c->mem, c->client_key);
    if (c->token)
        memset(c->token, 0, strlen(c->token));
    dra_free(c->mem, c->token);
    memset(c, 0, sizeof *c);
}
