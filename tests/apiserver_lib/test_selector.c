/* Label and field selectors: kube's grammar, matching, and the exact
 * 400 messages kube-apiserver answers for bad selectors. */
#include "apilib_test.h"
#include "selector.h"

#define QN_RE "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QN_MSG                                                              \
    "must consist of alphanumeric characters, '-', '_' or '.', and must "   \
    "start and end with an alphanumeric character (e.g. 'MyName',  or "     \
    "'my.name',  or '123-abc', regex used for validation is '" QN_RE "')"

static int lmatch(const char *sel, const char *labels)
{
    dra_arena a;
    api_label_sel *s;
    dra_kstatus st;
    int r;
    dra_arena_init(&a, NULL);
    memset(&st, 0, sizeof st);
    if (api_sel_label_parse(&a, sel, &s, &st) != DRA_OK)
        fail_msg("parse %s: %s", sel, st.message);
    r = api_sel_label_match(s, labels ? J(&a, labels) : NULL);
    dra_arena_fini(&a);
    return r;
}

/* |st| is the 400 BadRequest kube-apiserver answers for selector |sel|,
 * with message |want|. */
static void want_bad_request(const char *sel, const dra_kstatus *st, const char *want)
{
    assert_int_equal(st->code, 400);
    assert_string_equal(st->reason, "BadRequest");
    if (strcmp(st->message, want))
        fail_msg("%s:\n got  %s\n want %s", sel, st->message, want);
}

static void lerr(const char *sel, const char *want)
{
    dra_arena a;
    api_label_sel *s = (api_label_sel *)1;
    dra_kstatus st;
    dra_arena_init(&a, NULL);
    memset(&st, 0, sizeof st);
    assert_int_equal(api_sel_label_parse(&a, sel, &s, &st), DRA_EINVAL);
    assert_null(s);
    want_bad_request(sel, &st, want);
    dra_arena_fini(&a);
}

static void test_label_match(void **state)
{
    (void)state;
    const char *l = "{\"app\":\"web\",\"tier\":\"front\",\"n\":\"7\"}";
    assert_true(lmatch("", l));
    assert_true(lmatch(NULL, NULL));
    assert_true(lmatch("app=web", l));
    assert_true(lmatch("app==web", l));
    assert_false(lmatch("app=db", l));
    assert_false(lmatch("app!=web", l));
    assert_true(lmatch("app!=db", l));
    assert_true(lmatch("missing!=x", l)); /* absent keys pass != and notin */
    assert_true(lmatch("missing notin (x)", l));
    assert_false(lmatch("missing in (x)", l));
    assert_true(lmatch("tier in (back, front)", l));
    assert_false(lmatch("tier notin (back,front)", l));
    assert_true(lmatch("app", l));
    assert_false(lmatch("!app", l));
    assert_true(lmatch("!missing", l));
    assert_true(lmatch(" app = web , tier ", l));
    assert_true(lmatch("n>6", l));
    assert_false(lmatch("n>7", l));
    assert_true(lmatch("n<8", l));
    assert_false(lmatch("app>1", l)); /* not an integer label: no match */
    assert_false(lmatch("app=web,tier=back", l));
    assert_true(lmatch("example.com/x notin (a)", l));
    /* `in` and `notin` are identifiers where a value is expected. */
    assert_true(lmatch("k in (in,notin)", "{\"k\":\"notin\"}"));
    /* empty values: `k=`, `k in ()` and `(,a)` hold "" */
    assert_true(lmatch("k=", "{\"k\":\"\"}"));
    assert_true(lmatch("k in ()", "{\"k\":\"\"}"));
    assert_true(lmatch("k in (,a)", "{\"k\":\"\"}"));
    assert_true(lmatch("k in (a,)", "{\"k\":\"\"}"));
}

static void test_label_structure(void **state)
{
    dra_arena a;
    api_label_sel *s;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(api_sel_label_parse(&a, "z in (c,a,b,a),a=1,!m", &s, NULL), DRA_OK);
    assert_int_equal(s->n, 3);
    /* sorted by key; values sorted and de-duplicated */
    assert_string_equal(s->reqs[0].key, "a");
    assert_int_equal(s->reqs[0].op, API_SEL_EQ);
    assert_string_equal(s->reqs[1].key, "m");
    assert_int_equal(s->reqs[1].op, API_SEL_NOT_EXISTS);
    assert_int_equal(s->reqs[2].op, API_SEL_IN);
    assert_int_equal(s->reqs[2].n, 3);
    assert_string_equal(s->reqs[2].vals[0], "a");
    assert_string_equal(s->reqs[2].vals[2], "c");
    assert_string_equal(api_sel_label_exact(s, "a"), "1");
    assert_null(api_sel_label_exact(s, "z"));
    assert_null(api_sel_label_exact(s, "q"));
    dra_arena_fini(&a);
}

static void test_label_errors(void **state)
{
    (void)state;
    lerr("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
    lerr("app:monolith",
         "unable to parse requirement: <nil>: Invalid value: \"app:monolith\": name part " QN_MSG);
    lerr("app.kubernetes_io/name=x",
         "unable to parse requirement: <nil>: Invalid value: \"app.kubernetes_io/name\": "
         "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
         "alphanumeric characters, '-' or '.', and must start and end with an "
         "alphanumeric character (e.g. 'example.com', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    lerr("a/b/c=1", "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": "
                    "a valid label key " QN_MSG " with an optional DNS subdomain prefix "
                    "and '/' (e.g. 'example.com/MyName')");
    lerr("/a", "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part "
               "must be non-empty");
    lerr("a=b c", "found 'c', expected: ',' or 'end of string'");
    lerr("a=b,", "found '', expected: identifier after ','");
    lerr(",a", "found ',', expected: !, identifier, or 'end of string'");
    lerr("x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'");
    lerr("x in a", "unable to parse requirement: found 'a' expected: '('");
    lerr("x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier");
    lerr("x>a", "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', "
                "'Lt' operators, the value must be an integer");
    lerr("x=-bad", "unable to parse requirement: values[0][x]: Invalid value: \"-bad\": "
                   "a valid label must be an empty string or consist of alphanumeric "
                   "characters, '-', '_' or '.', and must start and end with an "
                   "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                   "'12345', regex used for validation is '(" QN_RE ")?')");
    lerr("x in (-a,b_)",
         "unable to parse requirement: [values[0][x]: Invalid value: \"-a\": a valid label "
         "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
         "and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
         "'my_value',  or '12345', regex used for validation is '(" QN_RE ")?'), "
         "values[1][x]: Invalid value: \"b_\": a valid label must be an empty string or "
         "consist of alphanumeric characters, '-', '_' or '.', and must start and end "
         "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
         "regex used for validation is '(" QN_RE ")?')]");
    lerr("!a=b", "found '=', expected: ',' or 'end of string'");
    lerr("a=(", "unable to parse requirement: found '(', expected: identifier");
    lerr("a\"b", "unable to parse requirement: <nil>: Invalid value: \"a\\\"b\": name part " QN_MSG);
}

/* Lengths are worded as validate/content does (bytes); a prefix both too
 * long and malformed gets both of IsDNS1123Subdomain's messages. */
static void test_label_lengths(void **state)
{
    char sel[400], want[1200];
    char name[65], prefix[256];
    (void)state;
    memset(name, 'a', 64);
    name[64] = '\0';
    snprintf(sel, sizeof sel, "%s=1", name);
    snprintf(want, sizeof want, "unable to parse requirement: <nil>: Invalid value: "
             "\"%s\": name part must be no more than 63 bytes", name);
    lerr(sel, want);
    snprintf(sel, sizeof sel, "x=%s", name);
    snprintf(want, sizeof want, "unable to parse requirement: values[0][x]: Invalid "
             "value: \"%s\": must be no more than 63 bytes", name);
    lerr(sel, want);
    memset(prefix, 'a', 255);
    prefix[0] = 'A';
    prefix[254] = '\0';
    snprintf(sel, sizeof sel, "%s/n", prefix);
    snprintf(want, sizeof want, "unable to parse requirement: <nil>: Invalid value: "
             "\"%s/n\": prefix part must be no more than 253 bytes; prefix part a "
             "lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
             "characters, '-' or '.', and must start and end with an alphanumeric "
             "character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", prefix);
    lerr(sel, want);
}

/* ---- field selectors ------------------------------------------------------ */

static const api_resource *res(const char *g, const char *v, const char *r)
{
    const api_resource *x = api_resource_find(g, v, r);
    assert_non_null(x);
    return x;
}

static void ferr(const api_resource *r, const char *sel, const char *want)
{
    dra_arena a;
    api_field_sel *s = (api_field_sel *)1;
    dra_kstatus st;
    dra_arena_init(&a, NULL);
    memset(&st, 0, sizeof st);
    assert_int_equal(api_sel_field_parse(&a, sel, r, &s, &st), DRA_EINVAL);
    assert_null(s);
    want_bad_request(sel, &st, want);
    dra_arena_fini(&a);
}

static int fmatch(const api_resource *r, const char *sel, const char *obj)
{
    dra_arena a;
    api_field_sel *s;
    dra_kstatus st;
    int m;
    dra_arena_init(&a, NULL);
    memset(&st, 0, sizeof st);
    if (api_sel_field_parse(&a, sel, r, &s, &st) != DRA_OK)
        fail_msg("%s: %s", sel, st.message);
    m = api_sel_field_match(s, r, J(&a, obj));
    dra_arena_fini(&a);
    return m;
}

static void test_field_errors(void **state)
{
    const api_resource *pods = res("", "v1", "pods");
    (void)state;
    ferr(pods, "spec.foo=x", "field label not supported: spec.foo");
    ferr(res("", "v1", "nodes"), "metadata.namespace=x",
         "field label not supported: metadata.namespace");
    ferr(res("resource.k8s.io", "v1", "resourceclaims"), "spec.x=1",
         "\"spec.x\" is not a known field selector: only \"metadata.name\", "
         "\"metadata.namespace\"");
    ferr(res("resource.k8s.io", "v1", "resourceslices"), "spec.pool.name=p",
         "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool.name");
    ferr(res("resource.k8s.io", "v1beta1", "resourceslices"), "metadata.namespace=p",
         "field label not supported for resource.k8s.io/v1beta1, Kind=ResourceSlice: "
         "metadata.namespace");
    ferr(pods, "foo", "invalid selector: 'foo'; can't understand 'foo'");
    ferr(pods, "metadata.name=a,bar", "invalid selector: 'metadata.name=a,bar'; can't understand 'bar'");
    ferr(pods, "metadata.name=b\\", "invalid field selector: invalid escape sequence: \\");
    ferr(pods, "metadata.name=b\\x", "invalid field selector: invalid escape sequence: \\x");
    ferr(pods, "metadata.name=b=c", "invalid field selector: unescaped character in value: 61");
    /* parse errors come before field-label errors, as upstream */
    ferr(pods, "spec.foo=x,bad", "invalid selector: 'spec.foo=x,bad'; can't understand 'bad'");
}

static void test_field_match(void **state)
{
    const api_resource *pods = res("", "v1", "pods");
    const api_resource *events = res("", "v1", "events");
    const api_resource *slices = res("resource.k8s.io", "v1", "resourceslices");
    const api_resource *nodes = res("", "v1", "nodes");
    const api_resource *classes = res("resource.k8s.io", "v1", "deviceclasses");
    const char *pod = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},"
                      "\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\","
                      "\"podIPs\":[{\"ip\":\"10.0.0.5\"}]}}";
    const char *ev = "{\"metadata\":{\"name\":\"e\",\"namespace\":\"default\"},"
                     "\"involvedObject\":{\"kind\":\"ResourceClaim\",\"name\":\"c1\","
                     "\"namespace\":\"default\",\"uid\":\"u1\"},\"reason\":\"Allocated\","
                     "\"reportingComponent\":\"sched\",\"type\":\"Normal\"}";
    (void)state;
    assert_true(fmatch(pods, "", pod));
    assert_true(fmatch(pods, "metadata.name=p", pod));
    assert_true(fmatch(pods, "metadata.name==p,metadata.namespace=default", pod));
    assert_false(fmatch(pods, "metadata.name!=p", pod));
    assert_true(fmatch(pods, "spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed", pod));
    assert_true(fmatch(pods, "spec.host=n1", pod)); /* legacy alias */
    assert_true(fmatch(pods, "status.podIP=10.0.0.5", pod));
    assert_true(fmatch(pods, "spec.hostNetwork=false", pod));
    assert_true(fmatch(pods, "spec.schedulerName=", pod)); /* absent reads as "" */
    assert_true(fmatch(events, "involvedObject.name=c1,involvedObject.namespace=default,"
                               "involvedObject.kind=ResourceClaim,involvedObject.uid=u1", ev));
    assert_false(fmatch(events, "involvedObject.uid=u2", ev));
    assert_true(fmatch(events, "source=sched", ev)); /* falls back to reportingComponent */
    assert_true(fmatch(events, "reportingComponent=sched,type=Normal,reason=Allocated", ev));
    assert_true(fmatch(slices, "spec.driver=gpu.nvidia.com,spec.nodeName=n1",
                       "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
                       "\"nodeName\":\"n1\"}}"));
    assert_true(fmatch(slices, "spec.nodeName=", "{\"metadata\":{\"name\":\"s\"},"
                                                  "\"spec\":{\"allNodes\":true}}"));
    assert_true(fmatch(nodes, "spec.unschedulable=true", "{\"spec\":{\"unschedulable\":true}}"));
    assert_true(fmatch(nodes, "spec.unschedulable=false", "{\"spec\":{}}"));
    /* cluster-scoped kinds accept metadata.namespace and see "" */
    assert_true(fmatch(classes, "metadata.namespace=", "{\"metadata\":{\"name\":\"c\"}}"));
    assert_false(fmatch(classes, "metadata.namespace=x", "{\"metadata\":{\"name\":\"c\"}}"));
    /* escaped commas and equals signs are data */
    assert_true(fmatch(pods, "metadata.name=a\\,b\\=c\\\\", "{\"metadata\":{\"name\":\"a,b=c\\\\\"}}"));
}

static void test_field_exact(void **state)
{
    dra_arena a;
    api_field_sel *s;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(api_sel_field_parse(&a, "spec.nodeName=n,metadata.name!=x",
                                         res("", "v1", "pods"), &s, NULL), DRA_OK);
    assert_int_equal(s->n, 2);
    /* terms are sorted like upstream sorts them */
    assert_string_equal(s->terms[0].field, "metadata.name");
    assert_string_equal(api_sel_field_exact(s, "spec.nodeName"), "n");
    assert_null(api_sel_field_exact(s, "metadata.name"));
    dra_arena_fini(&a);
}

/* Every allocation failure is reported, never a crash or a leak. */
static void test_failmem(void **state)
{
    (void)state;
    for (long i = 0; i < 200; i++) {
        dra_failmem fm;
        dra_arena a;
        api_label_sel *s;
        api_field_sel *f;
        dra_err e1, e2;
        dra_failmem_init(&fm, i);
        dra_arena_init(&a, &fm.mem);
        e1 = api_sel_label_parse(&a, "a in (x,y,z),b!=c,!d,e>3", &s, NULL);
        e2 = api_sel_field_parse(&a, "metadata.name=a\\,b,spec.nodeName!=n",
                                 api_resource_find("", "v1", "pods"), &f, NULL);
        assert_true(e1 == DRA_OK || e1 == DRA_ENOMEM);
        assert_true(e2 == DRA_OK || e2 == DRA_ENOMEM);
        dra_arena_fini(&a);
        assert_int_equal(fm.live, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_match),
        cmocka_unit_test(test_label_structure),
        cmocka_unit_test(test_label_errors),
        cmocka_unit_test(test_label_lengths),
        cmocka_unit_test(test_field_errors),
        cmocka_unit_test(test_field_match),
        cmocka_unit_test(test_field_exact),
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
