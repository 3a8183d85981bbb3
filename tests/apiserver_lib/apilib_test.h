/* Helpers the apiserver_lib tests share: JSON text into a document (the
 * test fails on text that is not JSON) and a document back into compact
 * JSON for comparing with the expected text. */
#ifndef DRA_APILIB_TEST_H
#define DRA_APILIB_TEST_H

#include "dra_test.h"
#include "dra/codec.h"

/* |text| parsed into |a|; fails the test with the parser's message when it
 * is not JSON. */
static inline dra_doc *J(dra_arena *a, const char *text)
{
    dra_doc *d = NULL;
    dra_diag dg;
    dra_diag_init(&dg, NULL);
    if (dra_doc_parse_json(a, text, strlen(text), &d, &dg) != DRA_OK)
        fail_msg("bad test JSON %s: %s", text, dra_diag_first(&dg));
    dra_diag_fini(&dg);
    return d;
}

/* |d| as compact JSON without a trailing newline, in a buffer of this
 * file's that the next call overwrites (16 KiB; longer output is cut). */
static inline char *show(const dra_doc *d)
{
    static char out[16384];
    dra_buf b;
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_json(d, 0, &b), DRA_OK);
    snprintf(out, sizeof out, "%.*s",
             (int)(b.len && b.p[b.len - 1] == '\n' ? b.len - 1 : b.len), b.p);
    dra_buf_fini(&b);
    return out;
}

#endif
