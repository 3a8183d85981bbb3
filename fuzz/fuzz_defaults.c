/* libFuzzer target for kube-apiserver's defaulting in the api module:
 * any bytes go through the YAML/JSON stream reader; every typed object
 * is defaulted as a decode, a create and an update (of the previous
 * object of its kind), every document as an untyped Namespace or Event.
 * Nothing may crash, leak or loop; the only refusal is DRA_EFORBIDDEN
 * with a message; and defaulting must be idempotent: the result printed,
 * read back and defaulted again prints the same. */
#include <stdlib.h>
#include <string.h>

#include "dra/api.h"
#include "dra/codec.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char *text_of(const dra_doc *doc)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    if (dra_doc_to_json(doc, 0, &b) != DRA_OK) {
        dra_buf_fini(&b);
        return NULL; /* e.g. nesting beyond the printer's limit */
    }
    return dra_buf_detach(&b);
}

/* The result read back and defaulted again must print the same. */
static void check_twice(dra_arena *a, const char *once, dra_api_op op, const dra_object *old)
{
    dra_doc *doc, *out;
    dra_object *o = NULL;
    char *again;
    if (dra_doc_parse_json(a, once, strlen(once), &doc, NULL) != DRA_OK ||
        dra_api_decode(a, doc, &o, NULL) != DRA_OK)
        abort();
    if (dra_api_default(a, o, op, old, NULL) != DRA_OK || dra_api_encode(a, o, &out) != DRA_OK)
        abort();
    again = text_of(out);
    if (!again || strcmp(once, again))
        abort();
    free(again);
}

static void typed(dra_arena *a, const dra_object *in, dra_api_op op, const dra_object *old)
{
    dra_object *o = NULL;
    dra_doc *out;
    dra_diag d;
    dra_err e;
    char *once;
    if (dra_api_object_copy(a, in, &o) != DRA_OK)
        return; /* objects that do not survive a copy are not ours to judge */
    dra_diag_init(&d, NULL);
    e = dra_api_default(a, o, op, old, &d);
    if (e == DRA_EFORBIDDEN && d.n == 1 && op == DRA_API_OP_CREATE) {
        dra_diag_fini(&d);
        return;
    }
    if (e != DRA_OK || d.n)
        abort();
    dra_diag_fini(&d);
    if (dra_api_encode(a, o, &out) != DRA_OK)
        abort();
    if ((once = text_of(out))) {
        check_twice(a, once, op, old);
        free(once);
    }
}

static void untyped(dra_arena *a, dra_doc *doc)
{
    char *once, *again;
    dra_doc *copy;
    if (dra_api_default_doc(a, doc, DRA_API_OP_CREATE, NULL) != DRA_OK)
        abort();
    if (!(once = text_of(doc)))
        return;
    if (dra_doc_parse_json(a, once, strlen(once), &copy, NULL) != DRA_OK ||
        dra_api_default_doc(a, copy, DRA_API_OP_CREATE, NULL) != DRA_OK)
        abort();
    again = text_of(copy);
    if (!again || strcmp(once, again))
        abort();
    free(once);
    free(again);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    dra_arena a;
    dra_object **objs = NULL;
    const dra_object *last[DRA_KIND_NODE + 1] = {NULL};
    dra_doc **docs = NULL;
    size_t n = 0;
    if (size > (1u << 16))
        return 0;
    dra_arena_init(&a, NULL);
    (void)dra_api_decode_stream(&a, (const char *)data, size, &objs, &n, NULL);
    for (size_t i = 0; i < n; i++) {
        dra_object *o = objs[i];
        if (o->kind <= DRA_KIND_UNKNOWN || o->kind > DRA_KIND_NODE)
            continue;
        typed(&a, o, DRA_API_OP_DECODE, NULL);
        typed(&a, o, DRA_API_OP_CREATE, NULL);
        typed(&a, o, DRA_API_OP_UPDATE, last[o->kind]);
        last[o->kind] = o;
    }
    /* The untyped kinds, from a JSON print of each document (a YAML tree
     * may share subtrees through aliases). */
    if (dra_doc_parse_yaml(&a, (const char *)data, size, &docs, &n, NULL) == DRA_OK)
        for (size_t i = 0; i < n; i++) {
            char *t = text_of(docs[i]);
            dra_doc *doc;
            if (t && dra_doc_parse_json(&a, t, strlen(t), &doc, NULL) == DRA_OK &&
                doc->kind == DRA_DOC_MAP)
                untyped(&a, doc);
            free(t);
        }
    dra_arena_fini(&a);
    return 0;
}
