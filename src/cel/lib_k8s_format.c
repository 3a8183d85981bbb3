/*
 * lib_k8s_format.c: the Kubernetes format library (apiserver
 * pkg/cel/library/format.go, 1.31+): format.named(name) -> ?Format,
 * format.<name>() -> Format, and Format.validate(s) -> ?list(string)
 * (none when valid, else the validation messages). The validators are
 * apimachinery's IsDNS1123Label, IsDNS1123Subdomain, IsDNS1035Label,
 * IsQualifiedName and IsValidLabelValue with their texts, and the
 * kube-openapi formats uri, uuid, byte, date and datetime. Also the
 * Kubernetes URL library (urls.go), which shares the URI rules: url(),
 * isURL() and the URL getters.
 */
#include <stdio.h>

#include "lib_common.h"
#include "lib_time.h"

#define MAX_ERRS 4

typedef struct verrs {
    const char *msg[MAX_ERRS];
    char own[MAX_ERRS][640];
    size_t n;
} verrs;

static void add(verrs *e, const char *m)
{
    if (e->n < MAX_ERRS)
        e->msg[e->n++] = m;
}

static void addf(verrs *e, const char *pre, const char *m)
{
    if (e->n < MAX_ERRS) {
        snprintf(e->own[e->n], sizeof e->own[e->n], "%s%s", pre, m);
        e->msg[e->n] = e->own[e->n];
        e->n++;
    }
}

static int alnum_lower(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int alnum(char c)
{
    return alnum_lower(c) || (c >= 'A' && c <= 'Z');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? (first: [a-z] for DNS-1035). */
static int is_label(const char *s, size_t n, int rfc1035)
{
    if (n == 0 || !(rfc1035 ? (s[0] >= 'a' && s[0] <= 'z') : alnum_lower(s[0])) ||
        !alnum_lower(s[n - 1]))
        return 0;
    for (size_t i = 1; i + 1 < n; i++)
        if (!alnum_lower(s[i]) && s[i] != '-')
            return 0;
    return 1;
}

static int is_subdomain(const char *s, size_t n)
{
    size_t st = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == '.') {
            if (!is_label(s + st, i - st, 0))
                return 0;
            st = i + 1;
        }
    return 1;
}

/* (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])? with |empty_ok|. */
static int is_qname(const char *s, size_t n, int empty_ok)
{
    if (n == 0)
        return empty_ok;
    if (!alnum(s[0]) || !alnum(s[n - 1]))
        return 0;
    for (size_t i = 1; i + 1 < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

#define LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define LABEL_MSG "a lowercase RFC 1123 label must consist of lower case alphanumeric " \
                  "characters or '-', and must start and end with an alphanumeric "     \
                  "character (e.g. 'my-name',  or '123-abc', regex used for validation " \
                  "is '" LABEL_FMT "')"
#define SUB_FMT LABEL_FMT "(\\." LABEL_FMT ")*"
#define SUB_MSG "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric " \
                "characters, '-' or '.', and must start and end with an alphanumeric "    \
                "character (e.g. 'example.com', regex used for validation is '" SUB_FMT "')"
#define L1035_FMT "[a-z]([-a-z0-9]*[a-z0-9])?"
#define L1035_MSG "a DNS-1035 label must consist of lower case alphanumeric characters or " \
                  "'-', start with an alphabetic character, and end with an alphanumeric "  \
                  "character (e.g. 'my-name',  or 'abc-123', regex used for validation is '" \
                  L1035_FMT "')"
#define QN_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QN_MSG "must consist of alphanumeric characters, '-', '_' or '.', and must start " \
               "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or " \
               "'123-abc', regex used for validation is '" QN_FMT "')"
#define LV_FMT "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
#define LV_MSG "a valid label must be an empty string or consist of alphanumeric "          \
               "characters, '-', '_' or '.', and must start and end with an alphanumeric " \
               "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "   \
               "validation is '" LV_FMT "')"

/* apimachinery's NameIs* with prefix=true validate name+"a" when the name
 * ends in '-' (maskTrailingDash). */
static void v_label(const char *s, size_t n, int prefix, int rfc1035, verrs *e)
{
    char buf[80];
    if (prefix && n > 1 && s[n - 1] == '-' && n <= sizeof buf) {
        memcpy(buf, s, n);
        buf[n - 1] = 'a';
        s = buf;
    }
    if (n > 63)
        add(e, "must be no more than 63 characters");
    if (!is_label(s, n, rfc1035))
        add(e, rfc1035 ? L1035_MSG : LABEL_MSG);
}

static void v_subdomain_pre(const char *s, size_t n, int prefix, const char *pre, verrs *e)
{
    char buf[300];
    if (prefix && n > 1 && s[n - 1] == '-' && n <= sizeof buf) {
        memcpy(buf, s, n);
        buf[n - 1] = 'a';
        s = buf;
    }
    if (n > 253)
        addf(e, pre, "must be no more than 253 characters");
    if (!is_subdomain(s, n))
        addf(e, pre, SUB_MSG);
}

static void v_qualified(const char *s, size_t n, verrs *e)
{
    const char *slash = memchr(s, '/', n), *name = s;
    size_t nl = n;
    if (slash) {
        size_t pl = (size_t)(slash - s);
        if (memchr(slash + 1, '/', n - pl - 1)) {
            add(e, "a qualified name " QN_MSG " with an optional DNS subdomain prefix "
                   "and '/' (e.g. 'example.com/MyName')");
            return;
        }
        if (pl == 0)
            add(e, "prefix part must be non-empty");
        else
            v_subdomain_pre(s, pl, 0, "prefix part ", e);
        name = slash + 1;
        nl = n - pl - 1;
    }
    if (nl == 0)
        add(e, "name part must be non-empty");
    else if (nl > 63)
        add(e, "name part must be no more than 63 characters");
    if (!is_qname(name, nl, 0))
        add(e, "name part " QN_MSG);
}

static int hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_uuid(const char *s, size_t n)
{
    static const int dash[] = {8, 13, 18, 23};
    if (n == 32) {
        for (size_t i = 0; i < n; i++)
            if (!hex(s[i]))
                return 0;
        return 1;
    }
    if (n != 36)
        return 0;
    for (size_t i = 0, d = 0; i < n; i++) {
        if (d < 4 && (int)i == dash[d]) {
            if (s[i] != '-')
                return 0;
            d++;
        } else if (!hex(s[i])) {
            return 0;
        }
    }
    return 1;
}

/* Go's base64.StdEncoding.DecodeString accepts (it skips \r and \n). */
static int is_base64(const char *s, size_t n)
{
    size_t k = 0, pad = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\r' || c == '\n')
            continue;
        if (c == '=') {
            pad++;
        } else {
            if (pad || !(alnum(c) || c == '+' || c == '/'))
                return 0;
        }
        k++;
    }
    return k % 4 == 0 && pad <= 2;
}

static int is_date(const char *s, size_t n)
{
    int y = 0, m, d;
    if (n != 10 || s[4] != '-' || s[7] != '-')
        return 0;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9'))
            return 0;
    for (int i = 0; i < 4; i++)
        y = y * 10 + (s[i] - '0');
    m = (s[5] - '0') * 10 + (s[6] - '0');
    d = (s[8] - '0') * 10 + (s[9] - '0');
    if (m < 1 || m > 12 || d < 1)
        return 0;
    {
        static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        return d <= dm[m - 1] + (m == 2 && leap);
    }
}

/* kube-openapi's datetime: RFC 3339 (a lower-case 't'/'z' accepted). */
static int is_datetime(const char *s, size_t n)
{
    char buf[64];
    int64_t sec;
    int32_t ns;
    dra_err e;
    if (n == 0 || n >= sizeof buf)
        return 0;
    for (size_t i = 0; i < n; i++)
        buf[i] = s[i] == 't' ? 'T' : s[i] == 'z' ? 'Z' : s[i];
    e = lib_ts_parse(buf, n, &sec, &ns, NULL);
    return e == DRA_OK || e == DRA_ERANGE;
}

/* A subset of Go's url.ParseRequestURI: control characters, an absolute
 * path or a scheme, valid %-escapes, a numeric port. */
static const char *uri_error(const char *s, size_t n)
{
    size_t i = 0;
    if (n == 0)
        return "empty url";
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)s[k] < 0x20 || s[k] == 0x7f)
            return "net/url: invalid control character in URL";
    if (n == 1 && s[0] == '*')
        return NULL;
    if ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')) {
        i = 1;
        while (i < n && (alnum(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
            i++;
        if (i < n && s[i] == ':')
            i++;
        else
            i = 0;
    } else if (s[0] == ':') {
        return "missing protocol scheme";
    }
    if (i == 0 && s[0] != '/')
        return "invalid URI for request";
    {
        /* Only the path is unescaped (and so checked); a request URI keeps
         * '#' in the path or query, and the query is not validated. */
        const char *qm = memchr(s + i, '?', n - i);
        size_t pend = qm ? (size_t)(qm - s) : n;
        for (size_t k = i; k < pend; k++)
            if (s[k] == '%' && (k + 2 >= pend || !hex(s[k + 1]) || !hex(s[k + 2])))
                return "invalid URL escape";
    }
    if (i > 0 && i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
        const char *host = s + i + 2, *end = host, *colon = NULL;
        while (end < s + n && *end != '/' && *end != '?' && *end != '#')
            end++;
        for (const char *p = host; p < end; p++)
            if (*p == '@')
                host = p + 1;
        if (host < end && *host == '[') {
            const char *rb = memchr(host, ']', (size_t)(end - host));
            if (!rb)
                return "missing ']' in host";
            colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
        } else {
            colon = memchr(host, ':', (size_t)(end - host));
        }
        if (colon)
            for (const char *p = colon + 1; p < end; p++)
                if (*p < '0' || *p > '9')
                    return "invalid port after host";
    }
    return NULL;
}

typedef enum fmt_kind {
    FK_LABEL, FK_SUB, FK_1035, FK_QNAME, FK_LABEL_P, FK_SUB_P, FK_1035_P,
    FK_LVALUE, FK_URI, FK_UUID, FK_BYTE, FK_DATE, FK_DATETIME
} fmt_kind;

typedef struct named_fmt {
    const char *name; /* format.named key and format.<name>() */
    fmt_kind kind;
} named_fmt;

static const named_fmt formats[] = {
    {"dns1123Label", FK_LABEL}, {"dns1123Subdomain", FK_SUB},
    {"dns1035Label", FK_1035}, {"qualifiedName", FK_QNAME},
    {"dns1123LabelPrefix", FK_LABEL_P}, {"dns1123SubdomainPrefix", FK_SUB_P},
    {"dns1035LabelPrefix", FK_1035_P}, {"labelValue", FK_LVALUE},
    {"uri", FK_URI}, {"uuid", FK_UUID}, {"byte", FK_BYTE}, {"date", FK_DATE},
    {"datetime", FK_DATETIME},
};

static int fmt_equal(const cel_opaque *a, const cel_opaque *b)
{
    return a->data == b->data;
}

static const cel_opaque_type format_type = {"kubernetes.NamedFormat", fmt_equal};

static void run_validator(const named_fmt *f, const char *s, size_t n, verrs *e,
                          char *uribuf, size_t urisize)
{
    const char *ue;
    switch (f->kind) {
    case FK_LABEL: case FK_LABEL_P: v_label(s, n, f->kind == FK_LABEL_P, 0, e); break;
    case FK_1035: case FK_1035_P: v_label(s, n, f->kind == FK_1035_P, 1, e); break;
    case FK_SUB: case FK_SUB_P: v_subdomain_pre(s, n, f->kind == FK_SUB_P, "", e); break;
    case FK_QNAME: v_qualified(s, n, e); break;
    case FK_LVALUE:
        if (n > 63)
            add(e, "must be no more than 63 characters");
        if (!is_qname(s, n, 1))
            add(e, LV_MSG);
        break;
    case FK_URI:
        if ((ue = uri_error(s, n)) != NULL) {
            snprintf(uribuf, urisize, "parse \"%.*s\": %s", (int)(n > 200 ? 200 : n), s, ue);
            add(e, uribuf);
        }
        break;
    case FK_UUID: if (!is_uuid(s, n)) add(e, "does not match the UUID format"); break;
    case FK_BYTE: if (!is_base64(s, n)) add(e, "invalid base64"); break;
    case FK_DATE: if (!is_date(s, n)) add(e, "invalid date"); break;
    case FK_DATETIME: if (!is_datetime(s, n)) add(e, "invalid datetime"); break;
    }
}

static cel_value f_validate(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const named_fmt *f = a[0].u.op->data;
    verrs e;
    char uribuf[300];
    cel_value list, *items;
    (void)n;
    e.n = 0;
    run_validator(f, a[1].u.s, a[1].n, &e, uribuf, sizeof uribuf);
    if (e.n == 0)
        return cel_optional_new(ctx, NULL);
    list = cel_list_new(ctx, e.n, &items);
    if (list.kind != CEL_K_LIST)
        return list;
    for (size_t i = 0; i < e.n; i++) {
        items[i] = cel_str_new(ctx, e.msg[i], strlen(e.msg[i]));
        if (items[i].kind == CEL_K_ERROR)
            return items[i];
    }
    return cel_optional_new(ctx, &list);
}

static cel_value f_named(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strlen(formats[i].name) == a[0].n &&
            memcmp(formats[i].name, a[0].u.s, a[0].n) == 0) {
            cel_value v = cel_opaque_new(ctx, &format_type, &formats[i]);
            return cel_optional_new(ctx, &v);
        }
    return cel_optional_new(ctx, NULL);
}

#define CONST_FMT(FN, IDX)                                                \
    static cel_value FN(cel_ctx *ctx, const cel_value *a, size_t n)       \
    {                                                                     \
        (void)a, (void)n;                                                 \
        return cel_opaque_new(ctx, &format_type, &formats[IDX]);          \
    }
CONST_FMT(c_label, 0)
CONST_FMT(c_sub, 1)
CONST_FMT(c_1035, 2)
CONST_FMT(c_qname, 3)
CONST_FMT(c_label_p, 4)
CONST_FMT(c_sub_p, 5)
CONST_FMT(c_1035_p, 6)
CONST_FMT(c_lvalue, 7)
CONST_FMT(c_uri, 8)
CONST_FMT(c_uuid, 9)
CONST_FMT(c_byte, 10)
CONST_FMT(c_date, 11)
CONST_FMT(c_datetime, 12)

#define NF "kubernetes.NamedFormat"
#define CONST_OV(NAME, FN) \
    {.id = "format." NAME, .name = "format." NAME, .result = NF, .args = {NULL}, .fn = FN}
static const cel_overload format_ovs[] = {
    {.id = "format-validate", .name = "validate", .flags = CEL_OV_MEMBER,
     .result = "optional_type(list(string))", .args = {NF, "string"}, .fn = f_validate},
    {.id = "format-named", .name = "format.named", .result = "optional_type(" NF ")",
     .args = {"string"}, .fn = f_named},
    CONST_OV("dns1123Label", c_label), CONST_OV("dns1123Subdomain", c_sub),
    CONST_OV("dns1035Label", c_1035), CONST_OV("qualifiedName", c_qname),
    CONST_OV("dns1123LabelPrefix", c_label_p),
    CONST_OV("dns1123SubdomainPrefix", c_sub_p),
    CONST_OV("dns1035LabelPrefix", c_1035_p), CONST_OV("labelValue", c_lvalue),
    CONST_OV("uri", c_uri), CONST_OV("uuid", c_uuid), CONST_OV("byte", c_byte),
    CONST_OV("date", c_date), CONST_OV("datetime", c_datetime),
};

static const cel_opaque_type *const format_types[] = {&format_type};

const cel_lib cel_lib_k8s_format = {
    "kubernetes.format", format_ovs, sizeof format_ovs / sizeof format_ovs[0],
    format_types, 1, lib_k8s_enabled};

/* ---- URLs (urls.go) ----------------------------------------------------------
 * A URL is kept as spans of the source text, split as Go's url.Parse does:
 * scheme ":" ["//" [userinfo "@"] host] path ["?" query] ["#" fragment],
 * or scheme ":" opaque. */

typedef struct url_parts {
    const char *src;
    size_t scheme, host_at, host_len, path_at, path_len, query_at, query_len;
    int has_query, opaque;
} url_parts;

static void url_split(const char *s, size_t n, url_parts *u)
{
    const char *hash = memchr(s, '#', n), *q;
    size_t i = 0, end;
    memset(u, 0, sizeof *u);
    u->src = s;
    if (hash)
        n = (size_t)(hash - s);
    if ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')) {
        while (i < n && (alnum(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
            i++;
        if (i < n && s[i] == ':')
            u->scheme = i++;
        else
            i = 0;
    }
    q = memchr(s + i, '?', n - i);
    end = q ? (size_t)(q - s) : n;
    if (q) {
        u->has_query = 1;
        u->query_at = end + 1;
        u->query_len = n - end - 1;
    }
    if (u->scheme && i < end && s[i] != '/') {
        u->opaque = 1;
        return;
    }
    if (end - i >= 2 && s[i] == '/' && s[i + 1] == '/') {
        size_t a = i + 2, b = a;
        while (b < end && s[b] != '/')
            b++;
        for (size_t k = a; k < b; k++)
            if (s[k] == '@')
                a = k + 1;
        u->host_at = a;
        u->host_len = b - a;
        i = b;
    }
    u->path_at = i;
    u->path_len = end - i;
}

static int url_equal(const cel_opaque *a, const cel_opaque *b)
{
    const url_parts *x = a->data, *y = b->data;
    size_t xl = strlen(x->src), yl = strlen(y->src);
    return xl == yl && memcmp(x->src, y->src, xl) == 0;
}

static const cel_opaque_type url_type = {"kubernetes.URL", url_equal};

static cel_value f_url(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const char *e = uri_error(a[0].u.s, a[0].n);
    url_parts *u;
    char *copy;
    (void)n;
    if (e)
        return cel_err(ctx, "URL parse error during conversion from string: parse \"%.*s\": %s",
                       (int)(a[0].n > 200 ? 200 : a[0].n), a[0].u.s, e);
    u = cel_alloc(ctx, sizeof *u);
    copy = cel_alloc(ctx, (size_t)a[0].n + 1);
    if (!u || !copy)
        return cel_error_value(&cel_e_nomem);
    memcpy(copy, a[0].u.s, a[0].n);
    copy[a[0].n] = '\0';
    url_split(copy, a[0].n, u);
    return cel_opaque_new(ctx, &url_type, u);
}

static cel_value f_is_url(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_bool(uri_error(a[0].u.s, a[0].n) == NULL);
}

#define URLV(v) ((const url_parts *)(v).u.op->data)

static cel_value f_scheme(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const url_parts *u = URLV(a[0]);
    char *out = cel_alloc(ctx, u->scheme + 1);
    (void)n;
    if (!out)
        return cel_error_value(&cel_e_nomem);
    for (size_t i = 0; i < u->scheme; i++) /* Go lower-cases the scheme */
        out[i] = u->src[i] >= 'A' && u->src[i] <= 'Z' ? (char)(u->src[i] + 32) : u->src[i];
    return cel_str(out, u->scheme);
}

static cel_value f_host(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const url_parts *u = URLV(a[0]);
    (void)ctx, (void)n;
    return cel_str(u->src + u->host_at, u->host_len);
}

/* Go's splitHostPort: a trailing ":digits" is the port; brackets go. */
static void host_port(const url_parts *u, const char **h, size_t *hl, const char **p,
                      size_t *pl)
{
    const char *s = u->src + u->host_at;
    size_t n = u->host_len, colon = n;
    *p = s + n;
    *pl = 0;
    for (size_t i = n; i-- > 0;)
        if (s[i] == ':') {
            colon = i;
            break;
        }
    if (colon < n) {
        int ok = 1;
        for (size_t i = colon + 1; i < n; i++)
            ok &= s[i] >= '0' && s[i] <= '9';
        if (ok) {
            *p = s + colon + 1;
            *pl = n - colon - 1;
            n = colon;
        }
    }
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
        s++;
        n -= 2;
    }
    *h = s;
    *hl = n;
}

static cel_value f_hostname(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const char *h, *p;
    size_t hl, pl;
    (void)ctx, (void)n;
    host_port(URLV(a[0]), &h, &hl, &p, &pl);
    return cel_str(h, hl);
}

static cel_value f_port(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const char *h, *p;
    size_t hl, pl;
    (void)ctx, (void)n;
    host_port(URLV(a[0]), &h, &hl, &p, &pl);
    return cel_str(p, pl);
}

static cel_value f_path(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const url_parts *u = URLV(a[0]);
    (void)ctx, (void)n;
    return u->opaque ? cel_str("", 0) : cel_str(u->src + u->path_at, u->path_len);
}

/* Go's QueryUnescape into |out|; -1 on a bad escape. */
static long query_unescape(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '+') {
            out[o++] = ' ';
        } else if (s[i] == '%') {
            int hi, lo;
            if (i + 2 >= n || !hex(s[i + 1]) || !hex(s[i + 2]))
                return -1;
            hi = s[i + 1] <= '9' ? s[i + 1] - '0' : (s[i + 1] | 32) - 'a' + 10;
            lo = s[i + 2] <= '9' ? s[i + 2] - '0' : (s[i + 2] | 32) - 'a' + 10;
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    return (long)o;
}

/* One "key=value" pair of a query, unescaped in place into |buf| at the
 * pair's own offset (an unescaped text is never longer than its source and
 * pairs do not overlap, so earlier results stay intact). Advances *pos;
 * returns 0 at the end, -1 for a pair Go's ParseQuery drops (';', a bad
 * escape, an empty key), 1 for a pair. */
static int next_pair(const char *q, size_t qn, size_t *pos, char *buf,
                     const char **k, long *kl, const char **v, long *vl)
{
    const char *pair = q + *pos, *eq, *amp;
    size_t pn;
    if (*pos > qn)
        return 0;
    amp = memchr(pair, '&', qn - *pos);
    pn = amp ? (size_t)(amp - pair) : qn - *pos;
    *pos += pn + 1;
    if (pn == 0 || memchr(pair, ';', pn))
        return -1;
    eq = memchr(pair, '=', pn);
    *k = buf + (pair - q);
    *kl = query_unescape(pair, eq ? (size_t)(eq - pair) : pn, buf + (pair - q));
    *v = eq ? buf + (eq + 1 - q) : "";
    *vl = eq ? query_unescape(eq + 1, pn - (size_t)(eq + 1 - pair), buf + (eq + 1 - q)) : 0;
    return *kl <= 0 || *vl < 0 ? -1 : 1;
}

/* Go's url.ParseQuery, keeping what parses; values keep their order. The
 * distinct keys are collected first, then each key's list is filled. */
static cel_value f_query(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const url_parts *u = URLV(a[0]);
    const char *q = u->src + u->query_at, *k, *v;
    size_t qn = u->has_query ? u->query_len : 0, npairs = 1, nkeys = 0, pos = 0;
    long kl, vl;
    cel_value *keys, m;
    size_t *counts;
    cel_map_entry *ents;
    char *buf;
    int r;
    (void)n;
    for (size_t i = 0; i < qn; i++)
        npairs += q[i] == '&';
    keys = cel_alloc(ctx, npairs * sizeof *keys);
    counts = cel_alloc(ctx, npairs * sizeof *counts);
    buf = cel_alloc(ctx, qn + 1);
    if (!keys || !counts || !buf)
        return cel_error_value(&cel_e_nomem);
    while ((r = next_pair(q, qn, &pos, buf, &k, &kl, &v, &vl)) != 0) {
        size_t j = 0;
        if (r < 0)
            continue;
        while (j < nkeys && !(keys[j].n == (uint32_t)kl && memcmp(keys[j].u.s, k, (size_t)kl) == 0))
            j++;
        if (j == nkeys) {
            keys[nkeys] = cel_str(k, (size_t)kl);
            counts[nkeys++] = 0;
        }
        counts[j]++;
    }
    m = cel_map_new(ctx, nkeys, &ents);
    if (m.kind != CEL_K_MAP)
        return m;
    for (size_t j = 0; j < nkeys; j++) {
        cel_value lv, *items;
        size_t filled = 0;
        lv = cel_list_new(ctx, counts[j], &items);
        if (lv.kind != CEL_K_LIST)
            return lv;
        pos = 0;
        while (filled < counts[j] && (r = next_pair(q, qn, &pos, buf, &k, &kl, &v, &vl)) != 0) {
            if (r < 0 || keys[j].n != (uint32_t)kl || memcmp(keys[j].u.s, k, (size_t)kl) != 0)
                continue;
            items[filled] = cel_str_new(ctx, v, (size_t)vl);
            if (items[filled++].kind == CEL_K_ERROR)
                return items[filled - 1];
        }
        cel_map_entry_set(&ents[j], cel_str_new(ctx, keys[j].u.s, keys[j].n), lv);
    }
    return m;
}

static const cel_overload url_ovs[] = {
    {.id = "string_to_url", .name = "url", .result = "kubernetes.URL",
     .args = {"string"}, .fn = f_url},
    {.id = "url_get_scheme", .name = "getScheme", .flags = CEL_OV_MEMBER,
     .result = "string", .args = {"kubernetes.URL"}, .fn = f_scheme},
    {.id = "url_get_host", .name = "getHost", .flags = CEL_OV_MEMBER,
     .result = "string", .args = {"kubernetes.URL"}, .fn = f_host},
    {.id = "url_get_hostname", .name = "getHostname", .flags = CEL_OV_MEMBER,
     .result = "string", .args = {"kubernetes.URL"}, .fn = f_hostname},
    {.id = "url_get_port", .name = "getPort", .flags = CEL_OV_MEMBER,
     .result = "string", .args = {"kubernetes.URL"}, .fn = f_port},
    {.id = "url_get_escaped_path", .name = "getEscapedPath", .flags = CEL_OV_MEMBER,
     .result = "string", .args = {"kubernetes.URL"}, .fn = f_path},
    {.id = "url_get_query", .name = "getQuery", .flags = CEL_OV_MEMBER,
     .result = "map(string, list(string))", .args = {"kubernetes.URL"}, .fn = f_query},
    {.id = "is_url_string", .name = "isURL", .result = "bool", .args = {"string"},
     .fn = f_is_url},
};

static const cel_opaque_type *const url_types[] = {&url_type};

const cel_lib cel_lib_k8s_urls = {
    "kubernetes.urls", url_ovs, sizeof url_ovs / sizeof url_ovs[0], url_types, 1,
    lib_k8s_enabled};
