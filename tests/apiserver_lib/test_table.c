/* Table output: columns and cells as kube-apiserver prints them for the
 * seed objects and for the pod/node/event states its printers know;
 * HumanDuration; row objects; list metadata. */
#include "dra_test.h"
#include "dra/codec.h"
#include "table.h"

#define NOW "2026-03-01T12:00:00Z"

static int64_t now_ns(void)
{
    int64_t ns;
    assert_true(api_table_parse_time(NOW, &ns));
    return ns;
}

static void test_human_duration(void **state)
{
    static const struct { int64_t s; const char *want; } cases[] = {
        {-5, "<invalid>"}, {-2, "<invalid>"}, {-1, "0s"}, {0, "0s"}, {1, "1s"},
        {119, "119s"}, {120, "2m"}, {121, "2m1s"}, {599, "9m59s"}, {600, "10m"},
        {3 * 3600 - 1, "179m"}, {3 * 3600, "3h"}, {3 * 3600 + 60, "3h1m"},
        {8 * 3600 - 1, "7h59m"}, {8 * 3600, "8h"}, {47 * 3600, "47h"},
        {48 * 3600, "2d"}, {49 * 3600, "2d1h"}, {8 * 86400 - 1, "7d23h"},
        {8 * 86400, "8d"}, {730 * 86400 - 1, "729d"}, {730 * 86400, "2y"},
        {731 * 86400, "2y1d"}, {8 * 365 * 86400, "8y"}, {20 * 365 * 86400 + 5, "20y"},
    };
    char buf[32];
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        api_table_human_duration(cases[i].s * 1000000000, buf, sizeof buf);
        if (strcmp(buf, cases[i].want))
            fail_msg("%lld s: got %s want %s", (long long)cases[i].s, buf, cases[i].want);
    }
    /* -1.5 s truncates to -1 s: still "0s" */
    assert_string_equal(api_table_human_duration(-1500000000, buf, sizeof buf), "0s");
}

static void test_parse_time(void **state)
{
    int64_t ns;
    (void)state;
    assert_true(api_table_parse_time("1970-01-01T00:00:00Z", &ns));
    assert_int_equal(ns, 0);
    assert_true(api_table_parse_time("2000-03-01T00:00:01Z", &ns));
    assert_int_equal(ns, 951868801LL * 1000000000);
    assert_true(api_table_parse_time("2000-03-01T02:00:01+02:00", &ns));
    assert_int_equal(ns, 951868801LL * 1000000000);
    assert_true(api_table_parse_time("2000-03-01T00:00:01.250000Z", &ns));
    assert_int_equal(ns, 951868801LL * 1000000000 + 250000000);
    assert_false(api_table_parse_time("2000-03-01 00:00:01Z", &ns));
    assert_false(api_table_parse_time("2000-13-01T00:00:01Z", &ns));
    assert_false(api_table_parse_time("2000-03-01T00:00:01", &ns));
    assert_false(api_table_parse_time("2000-03-01T00:00:01Zx", &ns));
    assert_false(api_table_parse_time(NULL, &ns));
}

/* One row's cells rendered "a|b|c" (null as ~, ints as digits). */
static char *cells_of(const dra_doc *table, size_t row)
{
    static char out[1024];
    const dra_doc *rows = dra_doc_get(table, "rows");
    const dra_doc *cells = dra_doc_get(rows->u.list.items[row], "cells");
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < cells->u.list.n; i++) {
        const dra_doc *c = cells->u.list.items[i];
        len += (size_t)snprintf(out + len, sizeof out - len, "%s", i ? "|" : "");
        if (c->kind == DRA_DOC_STRING)
            len += (size_t)snprintf(out + len, sizeof out - len, "%s", c->u.str.s);
        else if (c->kind == DRA_DOC_INT)
            len += (size_t)snprintf(out + len, sizeof out - len, "%lld", (long long)c->u.i);
        else
            len += (size_t)snprintf(out + len, sizeof out - len, "~");
    }
    return out;
}

static char *columns_of(const dra_doc *table)
{
    static char out[512];
    const dra_doc *cols = dra_doc_get(table, "columnDefinitions");
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < cols->u.list.n; i++) {
        const dra_doc *c = cols->u.list.items[i];
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s:%s:%lld%s", i ? "," : "",
                                dra_doc_get(c, "name")->u.str.s, dra_doc_get(c, "type")->u.str.s,
                                (long long)dra_doc_get(c, "priority")->u.i,
                                *dra_doc_get(c, "format")->u.str.s ? ":name" : "");
        assert_true(dra_doc_get(c, "description")->u.str.len > 0);
    }
    return out;
}

static dra_doc *table1(dra_arena *a, const char *g, const char *v, const char *r,
                       const char *json)
{
    dra_doc *obj = NULL, *tab = NULL;
    api_table_opts o = {now_ns(), API_TABLE_METADATA, "42", NULL, 0, 0, 0};
    const dra_doc *objs[1];
    if (dra_doc_parse_json(a, json, strlen(json), &obj, NULL) != DRA_OK)
        fail_msg("bad JSON %s", json);
    objs[0] = obj;
    assert_int_equal(api_table_build(a, api_resource_find(g, v, r), objs, 1, &o, &tab), DRA_OK);
    return tab;
}

/* The seed walkthrough (examples/seed.yaml), each object created 5m ago. */
static void test_seed(void **state)
{
    dra_arena a;
    dra_doc **docs;
    size_t n, len;
    char *text = dra_test_slurp(DRA_SOURCE_DIR "/examples/seed.yaml", &len);
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_doc_parse_yaml(&a, text, len, &docs, &n, NULL), DRA_OK);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(dra_doc_map_set(&a, (dra_doc *)dra_doc_get(docs[i], "metadata"),
                                         "creationTimestamp",
                                         dra_doc_new_string(&a, "2026-03-01T11:55:00Z", 20)),
                         DRA_OK);
    static const struct { const char *r, *cols, *cells; } want[] = {
        {"resourceslices",
         "Name:string:0:name,Node:string:0,Driver:string:0,Pool:string:0,Age:string:0",
         "gb200-pod2-f06-node05-gpu.nvidia.com-7xk2p|gb200-pod2-f06-node05|gpu.nvidia.com|"
         "gb200-pod2-f06-node05|5m"},
        {"deviceclasses", "Name:string:0:name,Age:string:0", "gpu.nvidia.com|5m"},
        {"resourceclaimtemplates", "Name:string:0:name,Age:string:0", "single-gpu|5m"},
    };
    for (size_t i = 0; i < 3; i++) {
        dra_doc *tab;
        const dra_doc *objs[1] = {docs[i]};
        api_table_opts o = {now_ns(), API_TABLE_METADATA, "7", "tok", 0, 1, 12};
        assert_int_equal(api_table_build(&a, api_resource_find("resource.k8s.io", "v1", want[i].r),
                                         objs, 1, &o, &tab), DRA_OK);
        assert_string_equal(columns_of(tab), want[i].cols);
        assert_string_equal(cells_of(tab, 0), want[i].cells);
        assert_string_equal(dra_doc_get(dra_doc_get(tab, "metadata"), "resourceVersion")->u.str.s, "7");
        assert_string_equal(dra_doc_get(dra_doc_get(tab, "metadata"), "continue")->u.str.s, "tok");
        assert_int_equal(dra_doc_get(dra_doc_get(tab, "metadata"), "remainingItemCount")->u.i, 12);
        const dra_doc *obj = dra_doc_get(dra_doc_get(tab, "rows")->u.list.items[0], "object");
        assert_string_equal(dra_doc_get(obj, "kind")->u.str.s, "PartialObjectMetadata");
        assert_string_equal(dra_doc_get(obj, "apiVersion")->u.str.s, "meta.k8s.io/v1");
        assert_true(dra_doc_equal(dra_doc_get(obj, "metadata"), dra_doc_get(docs[i], "metadata")));
        assert_null(dra_doc_get(obj, "spec"));
    }
    /* The pod as the API server holds it right after create: Pending. */
    dra_doc *st = dra_doc_new_map(&a, 1);
    dra_doc_map_set(&a, st, "phase", dra_doc_new_string(&a, "Pending", 7));
    dra_doc_map_set(&a, docs[3], "status", st);
    dra_doc *tab;
    const dra_doc *objs[1] = {docs[3]};
    api_table_opts o = {now_ns(), API_TABLE_METADATA, NULL, NULL, 0, 0, 0};
    assert_int_equal(api_table_build(&a, api_resource_find("", "v1", "pods"), objs, 1, &o, &tab),
                     DRA_OK);
    assert_string_equal(columns_of(tab),
                        "Name:string:0:name,Ready:string:0,Status:string:0,Restarts:string:0,"
                        "Age:string:0,IP:string:1,Node:string:1,Nominated Node:string:1,"
                        "Readiness Gates:string:1");
    assert_string_equal(cells_of(tab, 0), "gpu-test-pod|0/1|Pending|0|5m|<none>|<none>|<none>|<none>");
    assert_null(dra_doc_get(dra_doc_get(tab, "metadata"), "resourceVersion"));
    free(text);
    dra_arena_fini(&a);
}

static void test_claims(void **state)
{
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
#define CLAIM(status, extra_meta)                                                        \
    "{\"metadata\":{\"name\":\"c\",\"creationTimestamp\":\"2026-03-01T11:59:30Z\"" extra_meta \
    "},\"spec\":{},\"status\":" status "}"
    assert_string_equal(cells_of(table1(&a, "resource.k8s.io", "v1", "resourceclaims",
                                        CLAIM("{}", "")), 0), "c|pending|30s");
    assert_string_equal(cells_of(table1(&a, "resource.k8s.io", "v1", "resourceclaims",
                                        CLAIM("{\"allocation\":{\"devices\":{}}}", "")), 0),
                        "c|allocated|30s");
    assert_string_equal(cells_of(table1(&a, "resource.k8s.io", "v1", "resourceclaims",
                                        CLAIM("{\"allocation\":{},\"reservedFor\":[{\"resource\":"
                                              "\"pods\",\"name\":\"p\",\"uid\":\"u\"}]}", "")), 0),
                        "c|allocated,reserved|30s");
    assert_string_equal(cells_of(table1(&a, "resource.k8s.io", "v1", "resourceclaims",
                                        CLAIM("{}", ",\"deletionTimestamp\":\"2026-03-01T12:00:00Z\"")), 0),
                        "c|deleted|30s");
    assert_string_equal(cells_of(table1(&a, "resource.k8s.io", "v1", "resourceclaims",
                                        CLAIM("{\"allocation\":{},\"reservedFor\":[{}]}",
                                              ",\"deletionTimestamp\":\"2026-03-01T12:00:00Z\"")), 0),
                        "c|deleted,allocated,reserved|30s");
    /* a slice without nodeName: a null cell, which kubectl prints blank */
    assert_string_equal(cells_of(table1(&a, "resource.k8s.io", "v1", "resourceslices",
                                        "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\","
                                        "\"allNodes\":true,\"pool\":{\"name\":\"p\"}}}"), 0),
                        "s|~|d|p|<unknown>");
    dra_arena_fini(&a);
}

static const char *pod_cells(dra_arena *a, const char *spec, const char *status, const char *meta)
{
    char buf[4096];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":\"2026-03-01T11:00:00Z\"%s},"
             "\"spec\":%s,\"status\":%s}", meta, spec, status);
    return cells_of(table1(a, "", "v1", "pods", buf), 0);
}

#define ONE_CTR "{\"containers\":[{\"name\":\"c\"}]}"

static void test_pods(void **state)
{
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_string_equal(pod_cells(&a, ONE_CTR,
        "{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
        "\"podIPs\":[{\"ip\":\"10.1.0.4\"},{\"ip\":\"fd00::4\"}],\"containerStatuses\":[{\"name\":"
        "\"c\",\"ready\":true,\"restartCount\":0,\"state\":{\"running\":{}}}]}", ""),
        "p|1/1|Running|0|60m|10.1.0.4|<none>|<none>|<none>");
    /* a waiting reason wins; restarts with the last termination's age */
    assert_string_equal(pod_cells(&a, "{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]}",
        "{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"c\",\"restartCount\":3,"
        "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},\"lastState\":{\"terminated\":"
        "{\"exitCode\":1,\"finishedAt\":\"2026-03-01T11:55:00Z\"}}}]}", ""),
        "p|0/1|CrashLoopBackOff|3 (5m ago)|60m|<none>|n1|<none>|<none>");
    /* terminated without reason: ExitCode / Signal */
    assert_string_equal(pod_cells(&a, ONE_CTR,
        "{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"c\",\"state\":{\"terminated\":"
        "{\"exitCode\":2}}}]}", ""), "p|0/1|ExitCode:2|0|60m|<none>|<none>|<none>|<none>");
    assert_string_equal(pod_cells(&a, ONE_CTR,
        "{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"c\",\"state\":{\"terminated\":"
        "{\"exitCode\":137,\"signal\":9}}}]}", ""), "p|0/1|Signal:9|0|60m|<none>|<none>|<none>|<none>");
    /* completed pod: row condition Completed */
    {
        char buf[1024];
        snprintf(buf, sizeof buf, "{\"metadata\":{\"name\":\"p\"},\"spec\":" ONE_CTR ",\"status\":"
                 "{\"phase\":\"Succeeded\",\"containerStatuses\":[{\"name\":\"c\",\"state\":"
                 "{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}}]}}");
        dra_doc *tab = table1(&a, "", "v1", "pods", buf);
        assert_string_equal(cells_of(tab, 0), "p|0/1|Completed|0|<unknown>|<none>|<none>|<none>|<none>");
        const dra_doc *c = dra_doc_get(dra_doc_get(tab, "rows")->u.list.items[0], "conditions");
        assert_non_null(c);
        assert_string_equal(dra_doc_get(c->u.list.items[0], "type")->u.str.s, "Completed");
        assert_string_equal(dra_doc_get(c->u.list.items[0], "reason")->u.str.s, "Succeeded");
        assert_string_equal(dra_doc_get(c->u.list.items[0], "message")->u.str.s,
                            "The pod has completed successfully.");
    }
    /* initializing */
    assert_string_equal(pod_cells(&a,
        "{\"initContainers\":[{\"name\":\"i\"}],\"containers\":[{\"name\":\"c\"}]}",
        "{\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":\"i\",\"state\":"
        "{\"running\":{}}}]}", ""), "p|0/1|Init:0/1|0|60m|<none>|<none>|<none>|<none>");
    assert_string_equal(pod_cells(&a,
        "{\"initContainers\":[{\"name\":\"i\"}],\"containers\":[{\"name\":\"c\"}]}",
        "{\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":\"i\",\"state\":"
        "{\"waiting\":{\"reason\":\"ImagePullBackOff\"}}}]}", ""),
        "p|0/1|Init:ImagePullBackOff|0|60m|<none>|<none>|<none>|<none>");
    /* a started, ready sidecar counts in READY and in the total */
    assert_string_equal(pod_cells(&a,
        "{\"initContainers\":[{\"name\":\"s\",\"restartPolicy\":\"Always\"}],"
        "\"containers\":[{\"name\":\"c\"}]}",
        "{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\"}],"
        "\"initContainerStatuses\":[{\"name\":\"s\",\"started\":true,\"ready\":true,"
        "\"restartCount\":2,\"state\":{\"running\":{}}}],\"containerStatuses\":[{\"name\":\"c\","
        "\"ready\":true,\"state\":{\"running\":{}}}]}", ""),
        "p|2/2|Running|2|60m|<none>|<none>|<none>|<none>");
    /* terminating; scheduling gated; readiness gates */
    assert_string_equal(pod_cells(&a, ONE_CTR, "{\"phase\":\"Running\"}",
                                  ",\"deletionTimestamp\":\"2026-03-01T11:59:00Z\""),
                        "p|0/1|Terminating|0|60m|<none>|<none>|<none>|<none>");
    assert_string_equal(pod_cells(&a, ONE_CTR, "{\"phase\":\"Running\",\"reason\":\"NodeLost\"}",
                                  ",\"deletionTimestamp\":\"2026-03-01T11:59:00Z\""),
                        "p|0/1|Unknown|0|60m|<none>|<none>|<none>|<none>");
    assert_string_equal(pod_cells(&a, ONE_CTR,
        "{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
        "\"reason\":\"SchedulingGated\"}]}", ""), "p|0/1|SchedulingGated|0|60m|<none>|<none>|<none>|<none>");
    assert_string_equal(pod_cells(&a,
        "{\"containers\":[{\"name\":\"c\"}],\"readinessGates\":[{\"conditionType\":\"a\"},"
        "{\"conditionType\":\"b\"}]}",
        "{\"phase\":\"Pending\",\"nominatedNodeName\":\"n2\",\"conditions\":[{\"type\":\"a\","
        "\"status\":\"True\"}]}", ""), "p|0/1|Pending|0|60m|<none>|<none>|n2|1/2");
    dra_arena_fini(&a);
}

static void test_nodes_events_namespaces(void **state)
{
    dra_arena a;
    dra_doc *tab;
    (void)state;
    dra_arena_init(&a, NULL);
    tab = table1(&a, "", "v1", "nodes",
        "{\"metadata\":{\"name\":\"n1\",\"creationTimestamp\":\"2026-02-27T12:00:00Z\","
        "\"labels\":{\"node-role.kubernetes.io/worker\":\"\",\"kubernetes.io/role\":\"gpu\","
        "\"node-role.kubernetes.io/control-plane\":\"\",\"node-role.kubernetes.io/\":\"\"}},"
        "\"spec\":{\"unschedulable\":true},\"status\":{\"conditions\":[{\"type\":\"Ready\","
        "\"status\":\"True\"}],\"addresses\":[{\"type\":\"Hostname\",\"address\":\"h\"},"
        "{\"type\":\"InternalIP\",\"address\":\"192.168.1.5\"}],\"nodeInfo\":{\"kubeletVersion\":"
        "\"v1.35.0\",\"osImage\":\"Debian GNU/Linux 12 (bookworm)\"}}}");
    assert_string_equal(columns_of(tab),
                        "Name:string:0:name,Status:string:0,Roles:string:0,Age:string:0,"
                        "Version:string:0,Internal-IP:string:1,External-IP:string:1,"
                        "OS-Image:string:1,Kernel-Version:string:1,Container-Runtime:string:1");
    assert_string_equal(cells_of(tab, 0),
                        "n1|Ready,SchedulingDisabled|control-plane,gpu,worker|2d|v1.35.0|"
                        "192.168.1.5|<none>|Debian GNU/Linux 12 (bookworm)|<unknown>|<unknown>");
    assert_string_equal(cells_of(table1(&a, "", "v1", "nodes",
        "{\"metadata\":{\"name\":\"n\"},\"status\":{\"conditions\":[{\"type\":\"Ready\","
        "\"status\":\"Unknown\"}]}}"), 0),
        "n|NotReady|<none>|<unknown>||<none>|<none>|<unknown>|<unknown>|<unknown>");
    assert_string_equal(cells_of(table1(&a, "", "v1", "nodes", "{\"metadata\":{\"name\":\"n\"}}"), 0),
                        "n|Unknown|<none>|<unknown>||<none>|<none>|<unknown>|<unknown>|<unknown>");

    tab = table1(&a, "", "v1", "events",
        "{\"metadata\":{\"name\":\"c.1\"},\"involvedObject\":{\"kind\":\"ResourceClaim\",\"name\":"
        "\"c\",\"fieldPath\":\"spec\"},\"reason\":\"Allocated\",\"message\":\"  gpu-0 on n1\\n\","
        "\"source\":{\"component\":\"dra-scheduler\",\"host\":\"n1\"},\"firstTimestamp\":"
        "\"2026-03-01T11:50:00Z\",\"lastTimestamp\":\"2026-03-01T11:59:00Z\",\"count\":3,"
        "\"type\":\"Normal\"}");
    assert_string_equal(columns_of(tab),
                        "Last Seen:string:0,Type:string:0,Reason:string:0,Object:string:0,"
                        "Subobject:string:1,Source:string:1,Message:string:0,First Seen:string:1,"
                        "Count:string:1,Name:string:1:name");
    assert_string_equal(cells_of(tab, 0),
                        "60s|Normal|Allocated|resourceclaim/c|spec|dra-scheduler, n1|gpu-0 on n1|"
                        "10m|3|c.1");
    /* new-style event: eventTime, series, reportingComponent, count 0 -> 1 */
    assert_string_equal(cells_of(table1(&a, "", "v1", "events",
        "{\"metadata\":{\"name\":\"e\"},\"involvedObject\":{\"kind\":\"Node\"},\"eventTime\":"
        "\"2026-03-01T11:58:00.000000Z\",\"reportingComponent\":\"kubelet\",\"type\":\"Warning\"}"), 0),
        "2m|Warning||node||kubelet||2m|1|e");
    assert_string_equal(cells_of(table1(&a, "", "v1", "events",
        "{\"metadata\":{\"name\":\"e\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\"},"
        "\"eventTime\":\"2026-03-01T11:00:00.000000Z\",\"series\":{\"count\":9,"
        "\"lastObservedTime\":\"2026-03-01T11:59:50.500000Z\"},\"reportingComponent\":\"k\","
        "\"reportingInstance\":\"i\"}"), 0),
        "9s|||pod/p||k, i||60m|9|e");

    assert_string_equal(cells_of(table1(&a, "", "v1", "namespaces",
        "{\"metadata\":{\"name\":\"default\",\"creationTimestamp\":\"2026-03-01T09:00:00Z\"},"
        "\"status\":{\"phase\":\"Active\"}}"), 0), "default|Active|3h");
    dra_arena_fini(&a);
}

static void test_include_and_headers(void **state)
{
    dra_arena a;
    dra_doc *obj = NULL, *tab;
    const char *json = "{\"kind\":\"DeviceClass\",\"apiVersion\":\"resource.k8s.io/v1\","
                       "\"metadata\":{\"name\":\"x\"},\"spec\":{}}";
    const api_resource *r = api_resource_find("resource.k8s.io", "v1", "deviceclasses");
    api_table_include inc;
    dra_kstatus st;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_doc_parse_json(&a, json, strlen(json), &obj, NULL), DRA_OK);
    const dra_doc *objs[2] = {obj, obj};
    api_table_opts o = {0, API_TABLE_OBJECT, NULL, NULL, 1, 0, 0};
    assert_int_equal(api_table_build(&a, r, objs, 2, &o, &tab), DRA_OK);
    assert_int_equal(dra_doc_get(tab, "columnDefinitions")->kind, DRA_DOC_NULL);
    assert_int_equal(dra_doc_get(tab, "rows")->u.list.n, 2);
    assert_ptr_equal(dra_doc_get(dra_doc_get(tab, "rows")->u.list.items[1], "object"), obj);
    o.include = API_TABLE_NONE;
    assert_int_equal(api_table_build(&a, r, objs, 1, &o, &tab), DRA_OK);
    assert_int_equal(dra_doc_get(dra_doc_get(tab, "rows")->u.list.items[0], "object")->kind,
                     DRA_DOC_NULL);
    /* an empty list still has rows: [] (kubectl prints "No resources found") */
    assert_int_equal(api_table_build(&a, r, NULL, 0, NULL, &tab), DRA_OK);
    assert_int_equal(dra_doc_get(tab, "rows")->u.list.n, 0);
    dra_buf b;
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_json(tab, 0, &b), DRA_OK);
    assert_non_null(strstr(b.p, "\"rows\":[]"));
    assert_non_null(strstr(b.p, "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{},"
                                "\"columnDefinitions\":[{\"name\":\"Name\",\"type\":\"string\","
                                "\"format\":\"name\",\"description\":\"Name must be unique"));
    dra_buf_fini(&b);
    assert_int_equal(api_table_parse_include("", &inc, NULL), DRA_OK);
    assert_int_equal(inc, API_TABLE_METADATA);
    assert_int_equal(api_table_parse_include("Object", &inc, NULL), DRA_OK);
    assert_int_equal(inc, API_TABLE_OBJECT);
    assert_int_equal(api_table_parse_include("All", &inc, &st), DRA_EINVAL);
    assert_int_equal(st.code, 400);
    assert_int_equal(api_table_build(&a, NULL, objs, 1, NULL, &tab), DRA_EINVAL);
    dra_arena_fini(&a);
}

static void test_failmem(void **state)
{
    const char *json = "{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":\"2026-03-01T11:00:00Z\","
                       "\"labels\":{\"node-role.kubernetes.io/a\":\"\"}},\"spec\":" ONE_CTR
                       ",\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"c\","
                       "\"restartCount\":1,\"lastState\":{\"terminated\":{\"finishedAt\":"
                       "\"2026-03-01T11:00:00Z\"}},\"state\":{\"running\":{}}}]}}";
    static const char *const kinds[] = {"pods", "nodes", "events", "namespaces"};
    (void)state;
    for (long i = 0; i < 300; i++) {
        dra_failmem fm;
        dra_arena a, in;
        dra_doc *obj = NULL, *tab;
        dra_arena_init(&in, NULL);
        assert_int_equal(dra_doc_parse_json(&in, json, strlen(json), &obj, NULL), DRA_OK);
        dra_failmem_init(&fm, i);
        dra_arena_init(&a, &fm.mem);
        for (size_t k = 0; k < 4; k++) {
            const dra_doc *objs[1] = {obj};
            api_table_opts o = {now_ns(), API_TABLE_METADATA, "1", NULL, 0, 0, 0};
            dra_err e = api_table_build(&a, api_resource_find("", "v1", kinds[k]), objs, 1, &o, &tab);
            assert_true(e == DRA_OK || e == DRA_ENOMEM);
        }
        dra_arena_fini(&a);
        dra_arena_fini(&in);
        assert_int_equal(fm.live, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_human_duration),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_claims),
        cmocka_unit_test(test_pods),
        cmocka_unit_test(test_nodes_events_namespaces),
        cmocka_unit_test(test_include_and_headers),
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
