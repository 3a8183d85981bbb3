/* libFuzzer target for label and field selectors: parse arbitrary text
 * with kube's grammars and match it against fixed objects. Input: one
 * byte choosing the resource, then the selector text. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "apiserver/selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char obj_json[] =
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"labels\":{\"app\":\"web\","
    "\"n\":\"7\",\"example.com/x\":\"\"}},\"spec\":{\"nodeName\":\"n1\",\"unschedulable\":true,"
    "\"driver\":\"d\"},\"status\":{\"phase\":\"Running\",\"podIPs\":[{\"ip\":\"10.0.0.1\"}]},"
    "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\"},\"source\":{\"component\":\"c\"}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const res[][3] = {{"", "v1", "pods"}, {"", "v1", "nodes"},
                                         {"", "v1", "events"}, {"", "v1", "namespaces"},
                                         {"resource.k8s.io", "v1", "resourceslices"},
                                         {"resource.k8s.io", "v1beta1", "resourceclaims"}};
    dra_arena a;
    dra_doc *obj = NULL;
    api_label_sel *ls;
    api_field_sel *fs;
    dra_kstatus st;
    char text[4096];
    if (size < 1 || size > sizeof text)
        return 0;
    const api_resource *r = api_resource_find(res[data[0] % 6][0], res[data[0] % 6][1],
                                              res[data[0] % 6][2]);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    dra_arena_init(&a, NULL);
    if (dra_doc_parse_json(&a, obj_json, sizeof obj_json - 1, &obj, NULL) == DRA_OK) {
        if (api_sel_label_parse(&a, text, &ls, &st) == DRA_OK) {
            (void)api_sel_label_match(ls, dra_doc_get(dra_doc_get(obj, "metadata"), "labels"));
            (void)api_sel_label_exact(ls, "app");
        }
        if (api_sel_field_parse(&a, text, r, &fs, &st) == DRA_OK) {
            (void)api_sel_field_match(fs, r, obj);
            (void)api_sel_field_exact(fs, "metadata.name");
        }
    }
    dra_arena_fini(&a);
    return 0;
}
