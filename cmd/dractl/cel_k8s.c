/* cel_k8s.c: `dractl cel eval EXPR` without --device evaluates with the
 * Kubernetes libraries a DRA user has in selectors (quantity, semver,
 * lists, regex, URLs, IPs, format...): it compiles in the DRA
 * environment, whose result must be a bool, so any other result type is
 * compiled again as dyn(EXPR); expressions that need the standard
 * environment's extra libraries (math, encoders) fall back to it. */
#include <stdio.h>
#include <string.h>

#include "dra/cel.h"
#include "dractl.h"

int dractl_cel_compile_k8s(const char *expr, dra_cel_env **envp, dra_cel_program **p, dra_diag *d);

int dractl_cel_compile_k8s(const char *expr, dra_cel_env **envp, dra_cel_program **p, dra_diag *d)
{
    dra_cel_env *env = NULL, *std = NULL;
    dra_diag d2;
    dra_err e;
    *envp = NULL;
    *p = NULL;
    if (dra_cel_env_new_dra(NULL, NULL, &env))
        return DRA_ENOMEM;
    e = dra_cel_compile(env, expr, strlen(expr), p, d);
    if (e == DRA_ETYPE && dra_diag_first(d) && strstr(dra_diag_first(d), "must evaluate to bool")) {
        dra_buf b;
        dra_buf_init(&b, NULL);
        dra_buf_printf(&b, "dyn(%s)", expr);
        dra_diag_clear(d);
        e = b.p ? dra_cel_compile(env, b.p, b.len, p, d) : DRA_ENOMEM;
        dra_buf_fini(&b);
    }
    if (e == DRA_OK || e == DRA_ENOMEM) {
        *envp = env;
        return e;
    }
    /* Not a Kubernetes expression: maybe one of the standard extensions. */
    dra_diag_init(&d2, NULL);
    if (!dra_cel_env_new_std(NULL, NULL, &std) &&
        dra_cel_compile(std, expr, strlen(expr), p, &d2) == DRA_OK) {
        dra_cel_env_free(env);
        dra_diag_clear(d);
        dra_diag_fini(&d2);
        *envp = std;
        return DRA_OK;
    }
    dra_diag_fini(&d2);
    dra_cel_env_free(std);
    *envp = env;
    return e;
}
