/*
 * cel_diff_driver: the C side of the CEL differential test
 * (scripts/cel-diff.mjs). Reads one JSON file of devices and cases,
 * compiles every case's expression in the DRA environment and evaluates it
 * against its device, and prints one line per case:
 *
 *   <index> TAB <T|F|E|C|X> [TAB message]
 *
 * T/F: the selector's result; E: an evaluation error (runtime error, non-bool
 * result, cost limit); C: the expression did not compile; X: two
 * evaluations of the same program on the same device disagreed (VM state
 * leaking between runs). Input:
 *
 *   {"devices": [{"driver": "...", "allowMultipleAllocations": false,
 *                 "attributes": {"dom/id": {"int": "12"} | {"string": "s"}
 *                                | {"bool": true} | {"version": "1.2.3"}},
 *                 "capacity": {"dom/id": "80Gi"}}],
 *    "cases": [{"expr": "...", "device": 0}]}
 *
 * Ints are decimal strings so no JSON number precision is lost. Exit 0
 * unless the input is unusable (2) or an allocation fails (1).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/base.h"
#include "dra/cel.h"
#include "dra/codec.h"

typedef struct diff_device {
    dra_cel_attr *attrs;
    dra_cel_capacity *caps;
    dra_cel_device dev;
    dra_cel_prepared *prep;
} diff_device;

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "cel_diff_driver: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    return -1;
}

static int parse_int64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !*s || *end)
        return -1;
    *out = (int64_t)v;
    return 0;
}

/* One attribute value object: exactly one of int/string/bool/version. */
static int load_attr(const char *name, json_t *v, dra_cel_attr *a)
{
    json_t *x;
    a->name = name;
    if ((x = json_object_get(v, "int"))) {
        a->kind = DRA_CEL_ATTR_INT;
        return json_is_string(x) ? parse_int64(json_string_value(x), &a->i) : -1;
    }
    if ((x = json_object_get(v, "bool"))) {
        a->kind = DRA_CEL_ATTR_BOOL;
        a->b = json_is_true(x);
        return json_is_boolean(x) ? 0 : -1;
    }
    if ((x = json_object_get(v, "string"))) {
        a->kind = DRA_CEL_ATTR_STRING;
        a->s = json_string_value(x);
        return a->s ? 0 : -1;
    }
    if ((x = json_object_get(v, "version"))) {
        a->kind = DRA_CEL_ATTR_VERSION;
        a->s = json_string_value(x);
        if (!a->s)
            return -1;
        return dra_semver_parse(a->s, strlen(a->s), &a->version) ? -1 : 0;
    }
    return -1;
}

/* Fills |dd| from |jd|; strings stay borrowed from the JSON document. */
static int load_device(json_t *jd, diff_device *dd)
{
    json_t *attrs = json_object_get(jd, "attributes");
    json_t *caps = json_object_get(jd, "capacity");
    const char *driver = json_string_value(json_object_get(jd, "driver"));
    if (!driver || !json_is_object(attrs) || !json_is_object(caps))
        return fail("device needs driver, attributes and capacity", NULL);
    dd->attrs = calloc(json_object_size(attrs) + 1, sizeof *dd->attrs);
    dd->caps = calloc(json_object_size(caps) + 1, sizeof *dd->caps);
    if (!dd->attrs || !dd->caps)
        return fail("out of memory", NULL);
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach(attrs, key, v) {
        if (load_attr(key, v, &dd->attrs[n++]))
            return fail("bad attribute", key);
    }
    dd->dev.nattrs = n;
    n = 0;
    json_object_foreach(caps, key, v) {
        const char *q = json_string_value(v);
        dd->caps[n].name = key;
        if (!q || dra_quantity_parse(q, strlen(q), &dd->caps[n].value))
            return fail("bad capacity", key);
        n++;
    }
    dd->dev.ncaps = n;
    dd->dev.driver = driver;
    dd->dev.attrs = dd->attrs;
    dd->dev.caps = dd->caps;
    dd->dev.allow_multiple_allocations =
        json_is_true(json_object_get(jd, "allowMultipleAllocations"));
    dra_err err = dra_cel_device_prepare(NULL, &dd->dev, &dd->prep);
    return err ? fail("dra_cel_device_prepare", dra_errname(err)) : 0;
}

/* Message text on one line (tabs and newlines would break the format). */
static void print_msg(const dra_diag *d)
{
    const char *m = dra_diag_first(d);
    if (!m)
        return;
    putchar('\t');
    for (; *m; m++)
        putchar(*m == '\n' || *m == '\t' || *m == '\r' ? ' ' : *m);
}

static char outcome(dra_err err, int r)
{
    if (err == DRA_OK)
        return r ? 'T' : 'F';
    return 'E';
}

static int run_case(dra_cel_env *env, dra_cel_vm *vm, diff_device *devs, size_t ndev,
                    size_t idx, json_t *c)
{
    const char *expr = json_string_value(json_object_get(c, "expr"));
    json_t *jdev = json_object_get(c, "device");
    if (!expr || !json_is_integer(jdev) || json_integer_value(jdev) < 0 ||
        (size_t)json_integer_value(jdev) >= ndev)
        return fail("case needs expr and a valid device index", NULL);
    const dra_cel_prepared *pd = devs[json_integer_value(jdev)].prep;
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_cel_program *p = NULL;
    dra_err err = dra_cel_compile(env, expr, strlen(expr), &p, &d);
    if (err == DRA_ENOMEM) {
        dra_diag_fini(&d);
        return fail("out of memory compiling", expr);
    }
    if (err) {
        printf("%zu\tC\t%s", idx, dra_errname(err));
        print_msg(&d);
        putchar('\n');
        dra_diag_fini(&d);
        return 0;
    }
    int r1 = 0, r2 = 0;
    dra_err e1 = dra_cel_eval_device(p, vm, pd, &r1, &d);
    dra_err e2 = dra_cel_eval_device(p, vm, pd, &r2, NULL);
    char o1 = outcome(e1, r1), o2 = outcome(e2, r2);
    if (e1 == DRA_ENOMEM || e2 == DRA_ENOMEM) {
        dra_cel_program_unref(p);
        dra_diag_fini(&d);
        return fail("out of memory evaluating", expr);
    }
    if (o1 != o2)
        printf("%zu\tX\tfirst %c then %c", idx, o1, o2);
    else if (o1 == 'E') {
        printf("%zu\tE\t%s", idx, dra_errname(e1));
        print_msg(&d);
    } else
        printf("%zu\t%c", idx, o1);
    putchar('\n');
    dra_cel_program_unref(p);
    dra_diag_fini(&d);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cel_diff_driver CASES.json\n");
        return 2;
    }
    json_error_t jerr;
    json_t *root = json_load_file(argv[1], 0, &jerr);
    if (!root) {
        fprintf(stderr, "cel_diff_driver: %s:%d:%d: %s\n", argv[1], jerr.line, jerr.column,
                jerr.text);
        return 2;
    }
    json_t *jdevs = json_object_get(root, "devices");
    json_t *jcases = json_object_get(root, "cases");
    int rc = 2;
    size_t ndev = json_array_size(jdevs);
    diff_device *devs = calloc(ndev + 1, sizeof *devs);
    dra_cel_env *env = NULL;
    dra_cel_vm *vm = NULL;
    if (!json_is_array(jdevs) || !json_is_array(jcases) || !devs) {
        fail("input needs arrays devices and cases", NULL);
        goto out;
    }
    for (size_t i = 0; i < ndev; i++)
        if (load_device(json_array_get(jdevs, i), &devs[i]))
            goto out;
    if (dra_cel_env_new_dra(NULL, NULL, &env) || dra_cel_vm_new(NULL, &vm)) {
        fail("cannot create the CEL environment", NULL);
        goto out;
    }
    rc = 0;
    size_t i;
    json_t *c;
    json_array_foreach(jcases, i, c) {
        if (run_case(env, vm, devs, ndev, i, c)) {
            rc = 1;
            break;
        }
    }
out:
    fflush(stdout);
    for (size_t k = 0; devs && k < ndev; k++) {
        dra_cel_prepared_free(devs[k].prep);
        free(devs[k].attrs);
        free(devs[k].caps);
    }
    free(devs);
    dra_cel_vm_free(vm);
    dra_cel_env_free(env);
    json_decref(root);
    return rc;
}
