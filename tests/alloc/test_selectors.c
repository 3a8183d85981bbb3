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
    (void)ud;
    (void)prepared;
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

const dra_alloc_selector_ops test_selector_ops = {
    NULL, t_compile, t_release, NULL, NULL, t_eval, NULL,
};
