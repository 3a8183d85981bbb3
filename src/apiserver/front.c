/*
 * front.c: the rules drad's HTTP/1.1 and HTTP/2 front ends share
 * (front.h): authentication, the Status bodies they write themselves,
 * and the query string in the form the handler gets it. The path and
 * query are decoded by libmicrohttpd's own unescaper, so both front
 * ends decode byte for byte alike.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <gnutls/x509.h>
#include <microhttpd.h>

#include "front.h"

const char *api_front_user(const dra_apiserver_creds *creds,
                           const char *authorization, int cert_ok)
{
    if (authorization && !strncasecmp(authorization, "Bearer ", 7)) {
        const char *t = authorization + 7, *want = creds->token;
        size_t lt = strlen(t), lw = strlen(want);
        unsigned diff = (unsigned)(lt ^ lw);
        /* Compared in constant time over the expected token's length. */
        for (size_t i = 0; i < lw; i++)
            diff |= (unsigned)(unsigned char)want[i] ^
                    (unsigned)(unsigned char)(i < lt ? t[i] : 0);
        return diff ? NULL : "admin";
    }
    return cert_ok ? "admin-cert" : NULL;
}

int api_front_cert_ok(gnutls_session_t s)
{
    unsigned status = 0, n = 0;
    if (!s)
        return 0;
    return gnutls_certificate_get_peers(s, &n) && n &&
           gnutls_certificate_verify_peers2(s, &status) == 0 && status == 0;
}

size_t api_front_status(char *out, size_t cap, unsigned code, const char *reason,
                        const char *msg)
{
    int n = snprintf(out, cap,
                     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                     "\"status\":\"Failure\",\"message\":\"%s\",\"reason\":\"%s\","
                     "\"code\":%u}",
                     msg, reason, code);
    if (n < 0)
        return 0;
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

void api_front_too_large_msg(char *out, size_t cap, size_t max_body)
{
    snprintf(out, cap, "Request entity too large: limit is %zu", max_body);
}

dra_err api_front_query_add(dra_buf *b, const char *key, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    const char *parts[2] = {key, value};
    if (b->len)
        dra_buf_putc(b, '&');
    for (int k = 0; k < 2; k++) {
        if (k && !value)
            break;
        if (k)
            dra_buf_putc(b, '=');
        for (const unsigned char *p = (const unsigned char *)parts[k]; *p; p++) {
            if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' ||
                *p == '~') {
                dra_buf_putc(b, (char)*p);
            } else {
                char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
                dra_buf_append(b, e, 3);
            }
        }
    }
    return b->oom ? DRA_ENOMEM : DRA_OK;
}

static char *unescape_arg(char *s)
{
    for (char *p = s; *p; p++)
        if (*p == '+')
            *p = ' ';
    MHD_http_unescape(s);
    return s;
}

dra_err api_front_query(dra_buf *b, const char *raw)
{
    dra_buf tmp;
    char *args;
    dra_err e = DRA_OK;
    if (!raw || !*raw)
        return DRA_OK;
    dra_buf_init(&tmp, b->mem);
    if (dra_buf_append(&tmp, raw, strlen(raw) + 1)) {
        dra_buf_fini(&tmp);
        return DRA_ENOMEM;
    }
    /* libmicrohttpd's split: "&" ends an argument, the first "=" before
     * it splits key and value, and an empty remainder ends the list. */
    for (args = tmp.p; !e && *args;) {
        char *amp = strchr(args, '&'), *eq;
        if (amp)
            *amp = '\0';
        eq = strchr(args, '=');
        if (eq)
            *eq = '\0';
        e = api_front_query_add(b, unescape_arg(args), eq ? unescape_arg(eq + 1) : NULL);
        if (!amp)
            break;
        args = amp + 1;
    }
    dra_buf_fini(&tmp);
    return e;
}

size_t api_front_unescape(char *s)
{
    return MHD_http_unescape(s);
}

int api_front_is_write(const char *m)
{
    return !strcmp(m, "POST") || !strcmp(m, "PUT") || !strcmp(m, "PATCH") ||
           !strcmp(m, "DELETE");
}
