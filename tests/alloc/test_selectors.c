/* The test selector backend described in test_selectors.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_selectors.h"

static dra_err t_compile(void *ud, const char *expr, void **prog, dra_diag *d)
{
    (void)ud;
    if (strncmp(expr, "syntax", 6) == 0) {
        dra_diag_add(d, "", 1, 1, "syntax error in test selector");
        return DRA_EPARSE;
    }
    *prog = strdup(expr);
    return *prog ? DRA_OK : DRA_ENOMEM;
}

static void t_release(void *ud, void *prog)
{
    (void)ud;
    free(prog);
}

static int clause(const char *c, size_t n, const char *driver, const dra_alloc_device *dev,
                  dra_diag *d)
{
    char buf[256], val[128];
    const dra_cel_attr *at;
    char *eq;
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, c, n);
    buf[n] = '\0';
    if (strcmp(buf, "true") == 0)
        return 1;
    if (strcmp(buf, "false") == 0)
        return 0;
    if (strcmp(buf, "error") == 0) {
        dra_diag_add(d, "", 0, 0, "no such key: error");
        return -1;
    }
    if (strncmp(buf, "driver=", 7) == 0)
        return strcmp(buf + 7, driver) == 0;
    if (strncmp(buf, "has:", 4) == 0)
        return dra_alloc_attr_lookup(driver, dev, buf + 4) != NULL;
    if (strncmp(buf, "attr:", 5) == 0 && (eq = strchr(buf, '='))) {
        *eq = '\0';
        at = dra_alloc_attr_lookup(driver, dev, buf + 5);
        if (!at)
            return 0;
        switch (at->kind) {
        case DRA_CEL_ATTR_INT:
            snprintf(val, sizeof val, "%lld", (long long)at->i);
            break;
        case DRA_CEL_ATTR_BOOL:
            snprintf(val, sizeof val, "%s", at->b ? "true" : "false");
            break;
        default:
            snprintf(val, sizeof val, "%s", at->s ? at->s : "");
        }
        return strcmp(val, eq + 1) == 0;
    }
    dra_diag_add(d, "", 0, 0, "unknown test clause %s", buf);
    return -1;
}

static dra_err t_eval(void *ud, void *prog, const char *driver, const dra_alloc_device *dev,
                      void *prepared, int *result, dra_diag *d)
{
    const char *p = prog;
    (void)prepared;
    if (ud)
        (*(long *)ud)++; /* tests count evaluations */
    for (;;) {
        const char *amp = strstr(p, " && ");
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        int r = clause(p, n, driver, dev, d);
        if (r < 0)
            return DRA_EEVAL;
        if (!r) {
            *result = 0;
            return DRA_OK;
        }
        if (!amp)
            break;
        p = amp + 4;
    }
    *result = 1;
    return DRA_OK;
}

/* The reads of a program: driver=, attr: and has: clauses with qualified
 * names (a bare name's domain depends on the device's driver, which a
 * read cannot say), true and false; anything else may read anything. */
static dra_err t_reads(void *ud, void *prog, dra_arena *ar, const dra_cel_read **out, size_t *n)
{
    const char *p = prog;
    dra_cel_read *r = dra_arena_array(ar, strlen(p) / 4 + 2, sizeof *r);
    size_t k = 0;
    (void)ud;
    if (!r)
        return DRA_ENOMEM;
    for (;;) {
        const char *amp = strstr(p, " && "), *end = amp ? amp : p + strlen(p);
        const char *name = NULL, *slash;
        if (!strncmp(p, "driver=", 7)) {
            r[k++].field = DRA_CEL_READ_DRIVER;
        } else if (!strncmp(p, "attr:", 5) || !strncmp(p, "has:", 4)) {
            name = p + (*p == 'a' ? 5 : 4);
        } else if (!((end - p == 4 && !strncmp(p, "true", 4)) ||
                     (end - p == 5 && !strncmp(p, "false", 5)))) {
            return DRA_EUNSUPPORTED;
        }
        if (name) {
            const char *stop = memchr(name, '=', (size_t)(end - name));
            stop = stop ? stop : end;
            slash = memchr(name, '/', (size_t)(stop - name));
            if (!slash)
                return DRA_EUNSUPPORTED;
            r[k].field = DRA_CEL_READ_ATTRIBUTE;
            r[k].domain = name;
            r[k].domain_len = (size_t)(slash - name);
            r[k].id = slash + 1;
            r[k].id_len = (size_t)(stop - slash - 1);
            k++;
        }
        if (!amp)
            break;
        p = amp + 4;
    }
    *out = r;
    *n = k;
    return DRA_OK;
}

const dra_alloc_selector_ops test_selector_ops = {
    NULL, t_compile, t_release, NULL, NULL, t_eval, NULL, t_reads,
};
