/*
 * validate_util.c: the vocabulary of validation. Field errors worded as
 * kube-apiserver's field.Error prints them ("path: Invalid value: "x":
 * detail"), Go-style quoting of bad values, and the string format checks
 * (DNS labels and subdomains, qualified names, label values, C
 * identifiers, semver) that every object validator builds on.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "validate_int.h"

void vctx_init(vctx *v, dra_diag *d, const char *root)
{
    memset(v, 0, sizeof *v);
    v->d = d;
    dra_path_init(&v->p, root);
}

void v_field(vctx *v, const char *name) { dra_path_field(&v->p, name); }
void v_index(vctx *v, size_t i) { dra_path_index(&v->p, i); }
void v_pop(vctx *v) { dra_path_pop(&v->p); }

void v_key(vctx *v, const char *key, size_t trunc)
{
    char tmp[256];
    size_t len = strlen(key), keep, head, tail;
    if (trunc < 16)
        trunc = 16;
    if (len <= trunc || trunc + 1 > sizeof tmp) {
        dra_path_key(&v->p, key);
        return;
    }
    /* Same split as kube-apiserver: the ellipsis replaces the middle. */
    keep = trunc - 3;
    head = (keep + 1) / 2;
    tail = keep / 2;
    memcpy(tmp, key, head);
    memcpy(tmp + head, "...", 3);
    memcpy(tmp + head + 3, key + len - tail, tail);
    tmp[head + 3 + tail] = '\0';
    dra_path_key(&v->p, tmp);
}

/* ---- Go-compatible quoting --------------------------------------------- */

void dra_api_go_quote(dra_buf *b, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, n;
    uint32_t c;
    dra_buf_putc(b, '"');
    while (i < len) {
        n = dra_utf8_decode(s + i, len - i, &c);
        if (n == 0) {
            dra_buf_printf(b, "\\x%02x", s[i]);
            i++;
            continue;
        }
        switch (c) {
        case '\a': dra_buf_puts(b, "\\a"); break;
        case '\b': dra_buf_puts(b, "\\b"); break;
        case '\f': dra_buf_puts(b, "\\f"); break;
        case '\n': dra_buf_puts(b, "\\n"); break;
        case '\r': dra_buf_puts(b, "\\r"); break;
        case '\t': dra_buf_puts(b, "\\t"); break;
        case '\v': dra_buf_puts(b, "\\v"); break;
        case '"': dra_buf_puts(b, "\\\""); break;
        case '\\': dra_buf_puts(b, "\\\\"); break;
        default:
            /* Go keeps printable runes; control characters, including the
             * C1 range and DEL, are escaped. */
            if (c < 0x20 || c == 0x7F)
                dra_buf_printf(b, "\\x%02x", (unsigned)c);
            else if (c >= 0x80 && c < 0xA0)
                dra_buf_printf(b, "\\u%04x", (unsigned)c);
            else
                dra_buf_append(b, s + i, n);
        }
        i += n;
    }
    dra_buf_putc(b, '"');
}

/* Go's encoding/json string form (HTML-safe, invalid UTF-8 as U+FFFD):
 * kube-apiserver renders typed strings and composite values this way. The
 * codec's JSON encoder implements exactly those rules, so a string node
 * goes through it. */
void v_json_quote(dra_buf *b, const char *str, size_t len)
{
    dra_doc tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.kind = DRA_DOC_STRING;
    tmp.u.str.s = str;
    tmp.u.str.len = len;
    /* Only ENOMEM can fail for a string, and that sets b->oom. */
    (void)dra_doc_to_json(&tmp, 0, b);
}

/* ---- error recording ---------------------------------------------------- */

static void v_emit(vctx *v, dra_buf *b)
{
    v->nerr++;
    if (b->oom) {
        v->oom = 1;
        return;
    }
    if (v->d && dra_diag_add(v->d, dra_path_str(&v->p), 0, 0, "%s",
                             b->p ? b->p : "") != DRA_OK)
        v->oom = 1;
}

static const dra_mem *v_mem(const vctx *v) { return v->d ? v->d->mem : NULL; }

void v_error(vctx *v, const char *fmt, ...)
{
    dra_buf b;
    va_list ap;
    dra_buf_init(&b, v_mem(v));
    va_start(ap, fmt);
    dra_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    v_emit(v, &b);
    dra_buf_fini(&b);
}

static void v_body(vctx *v, const char *type, const char *detail)
{
    if (detail && *detail)
        v_error(v, "%s: %s", type, detail);
    else
        v_error(v, "%s", type);
}

void v_required(vctx *v, const char *detail) { v_body(v, "Required value", detail); }
void v_forbidden(vctx *v, const char *detail) { v_body(v, "Forbidden", detail); }

static void v_with_value(vctx *v, const char *type, const char *val,
                         size_t len, int quote, const char *detail)
{
    dra_buf b;
    dra_buf_init(&b, v_mem(v));
    dra_buf_printf(&b, "%s: ", type);
    if (quote)
        dra_api_go_quote(&b, val, len);
    else
        dra_buf_append(&b, val, len);
    if (detail && *detail)
        dra_buf_printf(&b, ": %s", detail);
    v_emit(v, &b);
    dra_buf_fini(&b);
}

void v_invalid_strn(vctx *v, const char *val, size_t len, const char *detail)
{
    v_with_value(v, "Invalid value", val, len, 1, detail);
}

void v_invalid_str(vctx *v, const char *val, const char *detail)
{
    val = val ? val : "";
    v_invalid_strn(v, val, strlen(val), detail);
}

void v_invalid_json_str(vctx *v, const char *val, const char *detail)
{
    dra_buf b;
    dra_buf_init(&b, v_mem(v));
    val = val ? val : "";
    v_json_quote(&b, val, strlen(val));
    v_invalid_raw(v, b.p ? b.p : "", detail);
    dra_buf_fini(&b);
}

void v_invalid_int(vctx *v, int64_t val, const char *detail)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%lld", (long long)val);
    v_with_value(v, "Invalid value", tmp, strlen(tmp), 0, detail);
}

void v_invalid_raw(vctx *v, const char *raw, const char *detail)
{
    v_with_value(v, "Invalid value", raw, strlen(raw), 0, detail);
}

void v_too_long(vctx *v, long max_bytes)
{
    v_error(v, "Too long: may not be more than %ld %s", max_bytes,
            max_bytes == 1 ? "byte" : "bytes");
}

void v_too_many(vctx *v, size_t actual, size_t max)
{
    v_error(v, "Too many: %zu: must have at most %zu %s", actual, max,
            max == 1 ? "item" : "items");
}

int v_at_most(vctx *v, size_t n, size_t max)
{
    if (n <= max)
        return 1;
    v_too_many(v, n, max);
    return 0;
}

void v_duplicate_str(vctx *v, const char *val)
{
    val = val ? val : "";
    v_with_value(v, "Duplicate value", val, strlen(val), 1, NULL);
}

void v_not_found_str(vctx *v, const char *val, const char *detail)
{
    val = val ? val : "";
    v_with_value(v, "Not found", val, strlen(val), 1, detail);
}

void v_not_supported(vctx *v, const char *val, const char *const *supported,
                     size_t n)
{
    dra_buf b;
    dra_buf_init(&b, v_mem(v));
    /* Enumerations are typed strings in Go, which kube-apiserver renders
     * as JSON; the list of supported values is strconv.Quote'd. */
    dra_buf_puts(&b, "Unsupported value: ");
    val = val ? val : "";
    v_json_quote(&b, val, strlen(val));
    if (n) {
        dra_buf_puts(&b, ": supported values: ");
        for (size_t i = 0; i < n; i++) {
            if (i)
                dra_buf_puts(&b, ", ");
            dra_api_go_quote(&b, supported[i], strlen(supported[i]));
        }
    }
    v_emit(v, &b);
    dra_buf_fini(&b);
}

void v_invalid_msgs(vctx *v, const char *val, const vmsgs *m,
                    const char *prefix)
{
    char tmp[1024];
    for (size_t i = 0; i < m->n; i++) {
        if (prefix) {
            snprintf(tmp, sizeof tmp, "%s%s", prefix, m->m[i]);
            v_invalid_str(v, val, tmp);
        } else {
            v_invalid_str(v, val, m->m[i]);
        }
    }
}

/* ---- format checks ------------------------------------------------------ */

#define DNS_LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define DNS_SUBDOMAIN_FMT DNS_LABEL_FMT "(\\." DNS_LABEL_FMT ")*"
#define QNAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QNAME_MSG "must consist of alphanumeric characters, '-', '_' or '.', " \
    "and must start and end with an alphanumeric character"
#define QNAME_REGEX_MSG QNAME_MSG " (e.g. 'MyName',  or 'my.name',  or " \
    "'123-abc', regex used for validation is '" QNAME_FMT "')"

static const char msg_label_len[] = "must be no more than 63 characters";
static const char msg_subdomain_len[] = "must be no more than 253 characters";
static const char msg_no_dots[] = "must not contain dots";
static const char msg_label_re[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric "
    "characters or '-', and must start and end with an alphanumeric character "
    "(e.g. 'my-name',  or '123-abc', regex used for validation is '"
    DNS_LABEL_FMT "')";
static const char msg_subdomain_re[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'example.com', regex used for validation is '"
    DNS_SUBDOMAIN_FMT "')";
#define QNAME_MULTI_MSG(what)                                                 \
    what " " QNAME_REGEX_MSG " with an optional DNS subdomain prefix and '/' " \
    "(e.g. 'example.com/MyName')"
static const char msg_prefix_empty[] = "prefix part must be non-empty";
static const char msg_prefix_re[] =
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
    "alphanumeric characters, '-' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'example.com', regex used for validation is '"
    DNS_SUBDOMAIN_FMT "')";
static const char msg_name_empty[] = "name part must be non-empty";
static const char msg_name_re[] = "name part " QNAME_REGEX_MSG;
static const char msg_label_value_re[] =
    "a valid label must be an empty string or consist of alphanumeric "
    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(" QNAME_FMT ")?')";
static const char msg_c_ident_re[] =
    "a valid C identifier must start with alphabetic character or '_', "
    "followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  "
    "or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')";

/* The messages in which the two wordings of the label key and value
 * checks differ (ORDER dra_api_wording): util/validation's, which object
 * validation uses, and validate/content's (Kubernetes 1.35), which
 * labels.Parse uses for selectors. */
static const struct label_words {
    const char *multi, *prefix_len, *name_len, *value_len;
} label_words[] = {
    {QNAME_MULTI_MSG("a qualified name"),
     "prefix part must be no more than 253 characters",
     "name part must be no more than 63 characters", msg_label_len},
    {QNAME_MULTI_MSG("a valid label key"),
     "prefix part must be no more than 253 bytes",
     "name part must be no more than 63 bytes", "must be no more than 63 bytes"},
};

static const struct label_words *words(dra_api_wording w)
{
    return &label_words[w == DRA_API_WORDING_CONTENT];
}

static void add(vmsgs *out, const char *m)
{
    if (out->n < sizeof out->m / sizeof out->m[0])
        out->m[out->n++] = m;
}

static int is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_alnum(char c)
{
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..len); |ci| also accepts
 * upper case (the check of a lower-cased copy). */
static int match_label_ci(const char *s, size_t len, int ci)
{
    int (*ok)(char) = ci ? is_alnum : is_lower_alnum;
    if (len == 0 || !ok(s[0]) || !ok(s[len - 1]))
        return 0;
    for (size_t i = 1; i + 1 < len; i++)
        if (!ok(s[i]) && s[i] != '-')
            return 0;
    return 1;
}

static int match_label(const char *s, size_t len)
{
    return match_label_ci(s, len, 0);
}

static int match_subdomain_ci(const char *s, size_t len, int ci)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            if (!match_label_ci(s + start, i - start, ci))
                return 0;
            start = i + 1;
        }
    }
    return 1;
}

static int match_subdomain(const char *s, size_t len)
{
    return match_subdomain_ci(s, len, 0);
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static int match_qname(const char *s, size_t len)
{
    if (len == 0 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
        return 0;
    for (size_t i = 1; i + 1 < len; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

static void label_msgs(const char *s, size_t len, vmsgs *out)
{
    if (len > 63)
        add(out, msg_label_len);
    if (!match_label(s, len))
        add(out, match_subdomain(s, len) ? msg_no_dots : msg_label_re);
}

static void subdomain_msgs(const char *s, size_t len, vmsgs *out)
{
    if (len > 253)
        add(out, msg_subdomain_len);
    if (!match_subdomain(s, len))
        add(out, msg_subdomain_re);
}

void chk_dns_label(const char *s, vmsgs *out) { label_msgs(s, strlen(s), out); }
void chk_dns_subdomain(const char *s, vmsgs *out) { subdomain_msgs(s, strlen(s), out); }

/* generateName prefixes may end in '-': Kubernetes masks it with 'a'. */
static size_t masked(const char *s, char *tmp, size_t cap)
{
    size_t len = strlen(s);
    if (len >= cap)
        len = cap - 1;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    if (len && tmp[len - 1] == '-')
        tmp[len - 1] = 'a';
    return strlen(s) >= cap ? strlen(s) : len;
}

void chk_dns_subdomain_prefix(const char *s, vmsgs *out)
{
    char tmp[512];
    size_t len = masked(s, tmp, sizeof tmp);
    if (len >= sizeof tmp) {
        subdomain_msgs(s, len, out); /* far too long anyway */
        return;
    }
    subdomain_msgs(tmp, len, out);
}

void chk_qualified_name(const char *s, vmsgs *out)
{
    chk_qualified_name_ci(s, out, 0);
}

/* IsQualifiedName (IsLabelKey) in wording |w|; |ci|: judge the prefix as
 * if lower-cased. */
static void qualified_name(const char *s, vmsgs *out, int ci,
                           const struct label_words *w)
{
    const char *slash = strchr(s, '/');
    const char *name = s;
    if (slash && strchr(slash + 1, '/')) {
        add(out, w->multi);
        return;
    }
    if (slash) {
        size_t plen = (size_t)(slash - s);
        if (plen == 0) {
            add(out, msg_prefix_empty);
        } else {
            if (plen > 253)
                add(out, w->prefix_len);
            if (!match_subdomain_ci(s, plen, ci))
                add(out, msg_prefix_re);
        }
        name = slash + 1;
    }
    size_t nlen = strlen(name);
    if (nlen == 0)
        add(out, msg_name_empty);
    else if (nlen > 63)
        add(out, w->name_len);
    if (!match_qname(name, nlen))
        add(out, msg_name_re);
}

static void label_value(const char *s, vmsgs *out, const struct label_words *w)
{
    size_t len = strlen(s);
    if (len > 63)
        add(out, w->value_len);
    if (len && !match_qname(s, len))
        add(out, msg_label_value_re);
}

void chk_qualified_name_ci(const char *s, vmsgs *out, int ci)
{
    qualified_name(s, out, ci, words(DRA_API_WORDING_UTIL));
}

void chk_label_value(const char *s, vmsgs *out)
{
    label_value(s, out, words(DRA_API_WORDING_UTIL));
}

/* Copies the messages of |m| into the caller's array of |cap|. */
static size_t export_msgs(const vmsgs *m, const char **msgs, size_t cap)
{
    for (size_t i = 0; i < m->n && i < cap; i++)
        msgs[i] = m->m[i];
    return m->n;
}

size_t dra_api_check_label_key(const char *key, dra_api_wording w,
                               const char **msgs, size_t cap)
{
    vmsgs m = {0};
    qualified_name(key, &m, 0, words(w));
    return export_msgs(&m, msgs, cap);
}

size_t dra_api_check_label_value(const char *value, dra_api_wording w,
                                 const char **msgs, size_t cap)
{
    vmsgs m = {0};
    label_value(value, &m, words(w));
    return export_msgs(&m, msgs, cap);
}

void chk_c_identifier(const char *s, vmsgs *out)
{
    size_t len = strlen(s);
    int ok = len > 0 && !(s[0] >= '0' && s[0] <= '9');
    for (size_t i = 0; ok && i < len; i++)
        ok = is_alnum(s[i]) || s[i] == '_';
    if (!ok)
        add(out, msg_c_ident_re);
}

int chk_is_extended_resource_name(const char *s)
{
    char tmp[600];
    vmsgs m = {0};
    /* Native resources (no domain, or in kubernetes.io) and quota names
     * are not extended resources. */
    if (!strchr(s, '/') || strstr(s, "kubernetes.io/") ||
        strncmp(s, "requests.", 9) == 0)
        return 0;
    if (strlen(s) + 10 > sizeof tmp)
        return 0;
    snprintf(tmp, sizeof tmp, "requests.%s", s);
    chk_qualified_name(tmp, &m);
    return m.n == 0;
}

/* ---- common field validators --------------------------------------------- */

void v_dns_label(vctx *v, const char *s)
{
    vmsgs m = {0};
    chk_dns_label(s, &m);
    v_invalid_msgs(v, s, &m, NULL);
}

void v_dns_label_n(vctx *v, const char *s, size_t len)
{
    vmsgs m = {0};
    label_msgs(s, len, &m);
    for (size_t i = 0; i < m.n; i++)
        v_invalid_strn(v, s, len, m.m[i]);
}

void v_dns_subdomain(vctx *v, const char *s)
{
    vmsgs m = {0};
    chk_dns_subdomain(s, &m);
    v_invalid_msgs(v, s, &m, NULL);
}

void v_label_name(vctx *v, const char *s)
{
    vmsgs m = {0};
    chk_qualified_name(s, &m);
    v_invalid_msgs(v, s, &m, NULL);
}

void v_label_value(vctx *v, const char *s)
{
    vmsgs m = {0};
    chk_label_value(s, &m);
    v_invalid_msgs(v, s, &m, NULL);
}

/* The driver-name rules over s[0..len) (a domain inside a longer key). */
static void driver_name_n(vctx *v, const char *s, size_t len)
{
    if (len == 0)
        v_required(v, NULL);
    if (len > 63)
        v_too_long(v, 63);
    /* Checked as kube-apiserver does: a DNS subdomain after lower-casing
     * (the message still names the original value). */
    if (len > 253)
        v_invalid_strn(v, s, len, msg_subdomain_len);
    if (!match_subdomain_ci(s, len, 1))
        v_invalid_strn(v, s, len, msg_subdomain_re);
}

void v_driver_name(vctx *v, const char *s)
{
    driver_name_n(v, s, strlen(s));
}

void v_pool_name(vctx *v, const char *s)
{
    size_t len = strlen(s), start = 0;
    if (len == 0) {
        v_required(v, NULL);
        return;
    }
    if (len > 253)
        v_too_long(v, 253);
    /* Each '/'-separated part is reported with the part as the value. */
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '/') {
            vmsgs m = {0};
            char part[300];
            size_t plen = i - start;
            if (plen < sizeof part) {
                memcpy(part, s + start, plen);
                part[plen] = '\0';
                subdomain_msgs(part, plen, &m);
                v_invalid_msgs(v, part, &m, NULL);
            } else {
                subdomain_msgs(s + start, plen, &m);
                for (size_t k = 0; k < m.n; k++)
                    v_invalid_strn(v, s + start, plen, m.m[k]);
            }
            start = i + 1;
        }
    }
}

static void c_identifier_field(vctx *v, const char *s)
{
    vmsgs m = {0};
    if (strlen(s) > 32)
        v_too_long(v, 32);
    chk_c_identifier(s, &m);
    v_invalid_msgs(v, s, &m, NULL);
}

void v_qualified_attr_name(vctx *v, const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash) {
        c_identifier_field(v, s);
        return;
    }
    if (strchr(slash + 1, '/')) {
        v_invalid_str(v, s, "must not contain more than one slash");
        return;
    }
    if (slash == s)
        v_invalid_str(v, "", "the domain must not be empty");
    else
        driver_name_n(v, s, (size_t)(slash - s));
    if (slash[1] == '\0')
        v_invalid_str(v, "", "the name must not be empty");
    else
        c_identifier_field(v, slash + 1);
}

void v_fully_qualified_attr_name(vctx *v, const char *s)
{
    v_qualified_attr_name(v, s);
    if (!strchr(s, '/'))
        v_invalid_str(v, s, "a fully qualified name must be a domain and a "
                            "name separated by a slash");
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
           (c >= 'A' && c <= 'F');
}

/* The forms google/uuid accepts: plain (36), urn:uuid: (45), braced (38)
 * and bare hex (32). Returns 0 and a reason when |s| is none of them. */
static const char *uuid_problem(const char *s, size_t len, char *buf, size_t cap)
{
    const char *p = s;
    if (len != 36 && len != 38 && len != 45 && len != 32) {
        snprintf(buf, cap, "invalid UUID length: %zu", len);
        return buf;
    }
    if (len == 45) {
        if (strncasecmp(s, "urn:uuid:", 9) != 0) {
            snprintf(buf, cap, "invalid urn prefix: \"%.9s\"", s);
            return buf;
        }
        p = s + 9;
    } else if (len == 38) {
        if (s[0] != '{' || s[37] != '}')
            return "invalid UUID format";
        p = s + 1;
    }
    if (len == 32) {
        for (size_t i = 0; i < 32; i++)
            if (!is_hex(s[i]))
                return "invalid UUID format";
        return NULL;
    }
    for (size_t i = 0; i < 36; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? p[i] != '-' : !is_hex(p[i]))
            return "invalid UUID format";
    }
    return NULL;
}

void v_uid(vctx *v, const char *s)
{
    char buf[64], msg[128];
    size_t len = strlen(s);
    const char *why = uuid_problem(s, len, buf, sizeof buf);
    int lower = 1;
    for (size_t i = 0; i < len; i++)
        if (s[i] >= 'A' && s[i] <= 'Z')
            lower = 0;
    if (why) {
        snprintf(msg, sizeof msg, "error validating uid: %s", why);
        v_invalid_str(v, s, msg);
    } else if (len != 36 || !lower) {
        v_invalid_str(v, s, "uid must be in RFC 4122 normalized form, "
                            "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with "
                            "lowercase hexadecimal characters");
    }
}

/* ---- semver 2.0.0 --------------------------------------------------------- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* (0|[1-9]\d*) */
static const char *sv_numeric(const char *p)
{
    if (*p == '0')
        return p + 1;
    if (!is_digit(*p))
        return NULL;
    while (is_digit(*p))
        p++;
    return p;
}

/* One identifier of [0-9A-Za-z-]+; |pre| adds the no-leading-zero rule
 * for purely numeric prerelease identifiers. */
static const char *sv_ident(const char *p, int pre)
{
    const char *start = p;
    int alpha = 0;
    while (is_alnum(*p) || *p == '-') {
        if (!is_digit(*p))
            alpha = 1;
        p++;
    }
    if (p == start)
        return NULL;
    if (pre && !alpha && p - start > 1 && *start == '0')
        return NULL;
    return p;
}

int chk_semver(const char *s)
{
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        if (!(p = sv_numeric(p)))
            return 0;
        if (i < 2 && *p++ != '.')
            return 0;
    }
    if (*p == '-') {
        do {
            if (!(p = sv_ident(p + 1, 1)))
                return 0;
        } while (*p == '.');
    }
    if (*p == '+') {
        do {
            if (!(p = sv_ident(p + 1, 0)))
                return 0;
        } while (*p == '.');
    }
    return *p == '\0';
}

/* ---- string sets ------------------------------------------------------------ */

void vset_init(vset *s, vctx *v)
{
    const dra_mem *mem = v->d ? v->d->mem : NULL;
    dra_map_init(&s->m, mem);
    dra_arena_init(&s->a, mem);
}

void vset_fini(vset *s)
{
    dra_map_fini(&s->m);
    dra_arena_fini(&s->a);
}

int vset_has(const vset *s, const char *key)
{
    return dra_map_find(&s->m, key, strlen(key)) != NULL;
}

int vset_seen(vctx *v, vset *s, const char *key)
{
    char *copy;
    size_t len = strlen(key);
    if (dra_map_find(&s->m, key, len))
        return 1;
    copy = dra_arena_strndup(&s->a, key, len);
    if (!copy || dra_map_put(&s->m, copy, len, copy) != DRA_OK)
        v->oom = 1;
    return 0;
}

void v_unique_keys(vctx *v, const void *items, size_t n, size_t size,
                   size_t key_off)
{
    const char *p = items;
    vset seen;
    vset_init(&seen, v);
    for (size_t i = 0; i < n; i++) {
        const char *k;
        memcpy(&k, p + i * size + key_off, sizeof k);
        k = k ? k : "";
        if (vset_seen(v, &seen, k)) {
            v_index(v, i);
            v_duplicate_str(v, k);
            v_pop(v);
        }
    }
    vset_fini(&seen);
}
