/* YAML decode (typing like go-yaml v2 / sigs.k8s.io/yaml, streams,
 * anchors, merges, strict keys, errors with line:col, limits) and the
 * kubectl-style encoder with its round-trip guarantees. */
#include <math.h>

#include "dra_test.h"
#include "dra/codec.h"

typedef struct ydoc {
    dra_arena a;
    dra_diag d;
    dra_doc **docs;
    size_t n;
    dra_err err;
} ydoc;

static void yparse(ydoc *y, const char *text)
{
    dra_arena_init(&y->a, NULL);
    dra_diag_init(&y->d, NULL);
    y->err = dra_doc_parse_yaml(&y->a, text, strlen(text), &y->docs, &y->n, &y->d);
}

static void yfree(ydoc *y)
{
    dra_diag_fini(&y->d);
    dra_arena_fini(&y->a);
}

static const dra_doc *yone(ydoc *y, const char *text)
{
    yparse(y, text);
    if (y->err)
        fail_msg("%s: %s", text, dra_diag_first(&y->d));
    assert_int_equal(y->n, 1);
    return y->docs[0];
}

static void expect_error(const char *text, dra_err want, const char *msg)
{
    ydoc y;
    dra_buf b;
    dra_buf_init(&b, NULL);
    yparse(&y, text);
    dra_diag_format(&y.d, &b);
    if (y.err != want || strcmp(b.p ? b.p : "", msg) != 0)
        fail_msg("%s: got %s \"%s\", want %s \"%s\"", text, dra_errname(y.err),
                 b.p ? b.p : "", dra_errname(want), msg);
    assert_null(y.docs);
    assert_int_equal(y.n, 0);
    dra_buf_fini(&b);
    yfree(&y);
}

/* Plain scalar typing, value -> expected JSON of the decoded node. */
static void test_typing(void **state)
{
    static const char *const cases[][2] = {
        {"~", "null"}, {"null", "null"}, {"Null", "null"}, {"NULL", "null"}, {"", "null"},
        {"nULL", "\"nULL\""}, {"true", "true"}, {"True", "true"}, {"TRUE", "true"},
        {"yes", "true"}, {"Yes", "true"}, {"YES", "true"}, {"y", "true"}, {"Y", "true"},
        {"on", "true"}, {"On", "true"}, {"ON", "true"}, {"false", "false"}, {"no", "false"},
        {"NO", "false"}, {"n", "false"}, {"N", "false"}, {"off", "false"}, {"Off", "false"},
        {"tRUE", "\"tRUE\""}, {"yEs", "\"yEs\""}, {"0", "0"}, {"-1", "-1"}, {"+1", "1"},
        {"0x1F", "31"}, {"0X1f", "31"}, {"0o17", "15"}, {"017", "15"}, {"0b101", "5"},
        {"-0b101", "-5"}, {"-0x10", "-16"}, {"1_000", "1000"}, {"08", "8"}, {"09.5", "9.5"},
        {"9223372036854775807", "9223372036854775807"},
        {"-9223372036854775808", "-9223372036854775808"},
        {"9223372036854775808", "9223372036854775808"},
        {"18446744073709551615", "18446744073709551615"},
        {"18446744073709551616", "18446744073709551616"}, {"1.5", "1.5"}, {"-.5", "-0.5"},
        {".5", "0.5"}, {"1e3", "1e3"}, {"1E3", "1E3"}, {"1.", "1"}, {"+1.5e-3", "0.0015"},
        {"1e400", "\"1e400\""}, {"1_0.5", "10.5"}, {".", "\".\""}, {"-a", "\"-a\""},
        {"0x", "\"0x\""}, {"1:20", "\"1:20\""}, {"2024-01-02", "\"2024-01-02\""},
        {"12:30:00", "\"12:30:00\""}, {"abc", "\"abc\""}, {"1.2.3", "\"1.2.3\""},
        {"100Mi", "\"100Mi\""}, {"_1", "\"_1\""}, {"0x1p3", "\"0x1p3\""}, {"inf", "\"inf\""},
        {"nan", "\"nan\""}, {"'yes'", "\"yes\""}, {"\"1\"", "\"1\""}, {"!!str 1", "\"1\""},
        {"!!int \"12\"", "12"}, {"!!float 1", "1"}, {"!foo bar", "\"bar\""},
        {"<<", "\"\\u003c\\u003c\""}, {"=", "\"=\""},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[128];
        ydoc y;
        dra_buf b;
        const dra_doc *d;
        snprintf(text, sizeof text, "v: %s\n", cases[i][0]);
        d = yone(&y, text);
        dra_buf_init(&b, NULL);
        assert_int_equal(dra_doc_to_json(dra_doc_get(d, "v"), 0, &b), DRA_OK);
        if (strcmp(b.p, cases[i][1]) != 0)
            fail_msg("%s: got %s, want %s", cases[i][0], b.p, cases[i][1]);
        dra_buf_fini(&b);
        yfree(&y);
    }
}

static void test_stream(void **state)
{
    ydoc y;
    dra_buf b;
    const dra_doc *d0;
    (void)state;
    yparse(&y, "---\n# nothing\n---\na: 1\n---\n---\n- x\n- p: [1, {z: 2}]\n...\n---\n"
               "{\"json\": [true, null]}\n---\nnull\n");
    assert_int_equal(y.err, DRA_OK);
    assert_int_equal(y.n, 3);
    dra_buf_init(&b, NULL);
    for (size_t i = 0; i < y.n; i++) {
        assert_int_equal(dra_doc_to_json(y.docs[i], 0, &b), DRA_OK);
        dra_buf_putc(&b, '|');
    }
    assert_string_equal(b.p, "{\"a\":1}|[\"x\",{\"p\":[1,{\"z\":2}]}]|{\"json\":[true,null]}|");
    assert_int_equal(y.docs[1]->line, 7);
    assert_int_equal(y.docs[1]->u.list.items[1]->col, 3);
    dra_buf_fini(&b);
    yfree(&y);
    /* a JSON document takes the JSON parser: surrogate pairs work */
    d0 = yone(&y, " {\"s\": \"\\ud83d\\ude00\", \"n\": [1, 2.5]}\n");
    assert_string_equal(dra_doc_get(d0, "s")->u.str.s, "\xf0\x9f\x98\x80");
    assert_int_equal(dra_doc_get(d0, "s")->line, 1);
    yfree(&y);
    expect_error("{\"a\": 1, \"a\": 2}", DRA_EPARSE,
                 "1:10: mapping key \"a\" already defined at line 1\n");
    yparse(&y, "");
    assert_int_equal(y.err, DRA_OK);
    assert_int_equal(y.n, 0);
    yfree(&y);
    /* block scalars */
    const dra_doc *d = yone(&y, "a: |\n  one\n  two\nb: >-\n  folded\n  text\nc: |+\n  keep\n\n");
    assert_string_equal(dra_doc_get(d, "a")->u.str.s, "one\ntwo\n");
    assert_string_equal(dra_doc_get(d, "b")->u.str.s, "folded text");
    assert_string_equal(dra_doc_get(d, "c")->u.str.s, "keep\n\n");
    yfree(&y);
}

static void test_keys_and_anchors(void **state)
{
    ydoc y;
    dra_buf b;
    const dra_doc *d;
    (void)state;
    dra_buf_init(&b, NULL);
    d = yone(&y, "1: a\ntrue: b\n1.5: c\n0x10: d\nno: e\n1e3: f\n18446744073709551615: g\n");
    assert_int_equal(dra_doc_to_json(d, 0, &b), DRA_OK);
    assert_string_equal(b.p, "{\"1\":\"a\",\"true\":\"b\",\"1.5\":\"c\",\"16\":\"d\",\"false\":\"e\","
                             "\"1000\":\"f\",\"18446744073709551615\":\"g\"}");
    yfree(&y);
    d = yone(&y, "base: &b {x: 1, q: 2}\nlist: &l [1, 2]\nuse: *b\nuse2: *l\n"
                 "m:\n  <<: *b\n  q: 3\n  z: 4\nm2:\n  <<: [*b, {w: 0, x: 9}]\n");
    dra_buf_reset(&b);
    assert_int_equal(dra_doc_to_json(d, 0, &b), DRA_OK);
    assert_string_equal(b.p, "{\"base\":{\"x\":1,\"q\":2},\"list\":[1,2],\"use\":{\"x\":1,\"q\":2},"
                             "\"use2\":[1,2],\"m\":{\"x\":1,\"q\":3,\"z\":4},"
                             "\"m2\":{\"x\":1,\"q\":2,\"w\":0}}");
    yfree(&y);
    /* go-yaml v2 reads the key y as a boolean, so it becomes "true" */
    d = yone(&y, "x: 1\ny: 2\n'n': 3\n");
    dra_buf_reset(&b);
    assert_int_equal(dra_doc_to_json(d, 0, &b), DRA_OK);
    assert_string_equal(b.p, "{\"x\":1,\"true\":2,\"n\":3}");
    yfree(&y);
    dra_buf_fini(&b);
    expect_error("a: 1\nb: 2\na: 3\n", DRA_EPARSE, "3:1: mapping key \"a\" already defined at line 1\n");
    expect_error("1: x\n\"1\": y\n", DRA_EPARSE, "2:1: mapping key \"1\" already defined at line 1\n");
    expect_error("~: x\n", DRA_EPARSE, "1:1: unsupported map key: null\n");
    expect_error("? [a]\n: x\n", DRA_EPARSE,
                 "1:3: unsupported map key: a sequence cannot be a key\n");
    expect_error("a: *nope\n", DRA_EPARSE, "1:4: unknown anchor 'nope' referenced\n");
    expect_error("a: &x [*x]\n", DRA_EPARSE, "1:8: unknown anchor 'x' referenced\n");
    expect_error("a: .inf\n", DRA_EPARSE,
                 "1:4: .inf: infinity and NaN cannot be represented in JSON\n");
    expect_error("a: !!int x\n", DRA_EPARSE, "1:4: cannot decode `x` as a !!int\n");
    expect_error("m:\n  <<: 5\n", DRA_EPARSE,
                 "2:3: map merge requires map or sequence of maps as the value\n");
}

static void test_big_map_duplicates(void **state)
{
    dra_buf b;
    (void)state;
    dra_buf_init(&b, NULL);
    for (int i = 0; i < 100; i++)
        dra_buf_printf(&b, "k%d: %d\n", i, i);
    dra_buf_puts(&b, "k42: again\n");
    expect_error(b.p, DRA_EPARSE, "101:1: mapping key \"k42\" already defined at line 43\n");
    dra_buf_fini(&b);
}

static void test_errors_and_limits(void **state)
{
    dra_buf b;
    (void)state;
    expect_error("a:\n  b: 1\n c: 2\n", DRA_EPARSE,
                 "3:2: did not find expected key while parsing a block mapping\n");
    expect_error("a: [1, 2\n", DRA_EPARSE,
                 "2:1: did not find expected ',' or ']' while parsing a flow sequence\n");
    expect_error("a: \"x\n", DRA_EPARSE,
                 "2:1: found unexpected end of stream while scanning a quoted scalar\n");
    expect_error("a: b: c\n", DRA_EPARSE,
                 "1:5: mapping values are not allowed in this context\n");
    expect_error("\tx: 1\n", DRA_EPARSE,
                 "1:1: found character that cannot start any token while scanning for the next token\n");
    expect_error("a: \xff\n", DRA_EPARSE, "1:4: invalid leading UTF-8 octet\n");
    /* billion laughs */
    expect_error("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                 "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                 "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                 "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                 "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                 "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
                 DRA_ELIMIT, "4:40: document contains excessive aliasing\n");
    dra_buf_init(&b, NULL);
    for (int i = 0; i < 257; i++)
        dra_buf_putc(&b, '[');
    expect_error(b.p, DRA_ELIMIT, "1:257: exceeded max depth of 256\n");
    dra_buf_fini(&b);
}

static void test_flatten(void **state)
{
    ydoc y;
    (void)state;
    yparse(&y, "kind: List\napiVersion: v1\nitems:\n- kind: A\n- kind: B\n---\nkind: C\n"
               "---\nkind: List\nitems: []\n");
    assert_int_equal(y.err, DRA_OK);
    assert_int_equal(y.n, 3);
    assert_int_equal(dra_doc_flatten_lists(&y.a, &y.docs, &y.n), DRA_OK);
    assert_int_equal(y.n, 3);
    assert_string_equal(dra_doc_get(y.docs[0], "kind")->u.str.s, "A");
    assert_string_equal(dra_doc_get(y.docs[1], "kind")->u.str.s, "B");
    assert_string_equal(dra_doc_get(y.docs[2], "kind")->u.str.s, "C");
    yfree(&y);
}

static char *to_yaml(const dra_doc *d)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_yaml(d, &b), DRA_OK);
    return dra_buf_detach(&b);
}

/* decode -> encode -> decode gives an equal tree, and encoding is a fixed
 * point: encode(decode(encode(x))) == encode(x). */
static void check_roundtrip(const dra_doc *d)
{
    char *y1 = to_yaml(d), *y2;
    ydoc r;
    yparse(&r, y1);
    if (r.err)
        fail_msg("re-parse failed: %s\n%s", dra_diag_first(&r.d), y1);
    assert_int_equal(r.n, 1);
    if (!dra_doc_equal(d, r.docs[0]))
        fail_msg("not equal after round trip:\n%s", y1);
    y2 = to_yaml(r.docs[0]);
    assert_string_equal(y1, y2);
    free(y1);
    free(y2);
    yfree(&r);
}

static void test_encode_style(void **state)
{
    char path[512], *json, *want, *got;
    size_t len;
    dra_arena a;
    dra_doc *d;
    dra_diag dg;
    (void)state;
    snprintf(path, sizeof path, "%s/codec/style.json", DRA_TEST_DATA);
    json = dra_test_slurp(path, &len);
    snprintf(path, sizeof path, "%s/codec/style.yaml", DRA_TEST_DATA);
    want = dra_test_slurp(path, NULL);
    dra_arena_init(&a, NULL);
    dra_diag_init(&dg, NULL);
    assert_int_equal(dra_doc_parse_json(&a, json, len, &d, &dg), DRA_OK);
    got = to_yaml(d);
    assert_string_equal(got, want);
    check_roundtrip(d);
    free(got);
    free(json);
    free(want);
    dra_diag_fini(&dg);
    dra_arena_fini(&a);
}

static void check_yaml(const dra_doc *d, const char *want)
{
    char *got = to_yaml(d);
    assert_string_equal(got, want);
    free(got);
}

static void test_encode_small(void **state)
{
    dra_arena a;
    dra_doc *m, *l;
    dra_buf b;
    (void)state;
    dra_arena_init(&a, NULL);
    check_yaml(dra_doc_new_string(&a, "abc", 3), "abc\n");
    check_yaml(dra_doc_new_string(&a, "a\nb", 3), "|-\n  a\n  b\n");
    check_yaml(dra_doc_new_int(&a, -7), "-7\n");
    check_yaml(dra_doc_new_null(&a), "null\n");
    check_yaml(dra_doc_new_map(&a, 0), "{}\n");
    check_yaml(dra_doc_new_float(&a, 0.1), "0.1\n");
    check_yaml(dra_doc_new_float(&a, 3.0), "3\n");
    l = dra_doc_new_list(&a, 0);
    dra_doc_list_push(&a, l, dra_doc_new_string(&a, "x", 1));
    dra_doc_list_push(&a, l, dra_doc_new_list(&a, 0));
    check_yaml(l, "- x\n- []\n");
    m = dra_doc_new_map(&a, 0);
    {
        char longkey[200];
        memset(longkey, 'k', 150);
        longkey[150] = '\0';
        dra_doc_map_set(&a, m, longkey, dra_doc_new_int(&a, 1));
        dra_doc_map_set(&a, m, "multi\nline", dra_doc_new_int(&a, 2));
        check_roundtrip(m);
    }
    dra_buf_init(&b, NULL);
    dra_buf_puts(&b, "keep");
    assert_int_equal(dra_doc_to_yaml(dra_doc_new_float(&a, INFINITY), &b), DRA_EINVAL);
    assert_int_equal(dra_doc_to_yaml(dra_doc_new_string(&a, "\xff", 1), &b), DRA_EINVAL);
    assert_string_equal(b.p, "keep");
    l = dra_doc_new_list(&a, 0);
    dra_doc_list_push(&a, l, l);
    assert_int_equal(dra_doc_to_yaml(l, &b), DRA_ELIMIT);
    assert_string_equal(b.p, "keep");
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

/* Every string that the typing table knows about, and awkward ones,
 * survive a YAML round trip as strings. */
static void test_string_roundtrip(void **state)
{
    static const char *const strs[] = {
        "", " ", "  ", "true", "y", "Yes", "off", "null", "~", "0", "-1", "0x1F", "1e3",
        "1_000", ".5", ".inf", "-.inf", ".nan", "1:20", "2024-01-02", "2024-1-2 3:04:05",
        "2024-01-02T03:04:05.5+01:00", "<<", "- x", "-x", "-", "?", "? x", ":", ": x", "a:",
        "#x", "a #x", "a#x", "[x]", "{x}", "x, y", "&a", "*a", "!t", "|", ">", "'", "\"",
        "%", "@", "`", "---", "...", "--- x", "a\n", "\n", "\n\n", "a\n\nb\n\n",
        " a\nb", "a \nb", "a\n b", "a\t", "\t", "\r\n", "a\rb", "\x01", "é", "\xe2\x80\xa8",
        "a\xe2\x80\xa8\nb", "\xef\xbb\xbf", "\xc2\x85", "\xc2\xa0", "\xf0\x9f\x98\x80",
        "'quoted'", "\"dq\"", "it's", "back\\slash", "1.2.3", "100Mi", "0o17", "+1",
        "+.5", "0b1", "09", "=", "a  b", "x    y    z",
        "word word word word word word word word word word word word word word word word word",
        "word  word  word  word  word  word  word  word  word  word  word  word  word  word  w",
        "a: long: line: with: colons: that: needs: to: be: single: quoted: and: folded: yes: ok",
        "tab\tin a long line that is going to be double quoted and folded past col eighty ok",
        "multi\nline with a very long second line that goes well past the eighty column limit",
    };
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        dra_doc *m = dra_doc_new_map(&a, 0), *l = dra_doc_new_list(&a, 0);
        dra_doc *s = dra_doc_new_string(&a, strs[i], strlen(strs[i]));
        dra_doc_map_set(&a, m, "k", s);
        dra_doc_map_set(&a, m, strs[i], dra_doc_new_int(&a, 1));
        dra_doc_list_push(&a, l, s);
        dra_doc_list_push(&a, l, m);
        check_roundtrip(s);
        check_roundtrip(m);
        check_roundtrip(l);
    }
    dra_arena_fini(&a);
}

static void test_file_roundtrip(void **state)
{
    static const char *const files[] = {"resourceclaimtemplate.yaml", "style.yaml",
                                        "resourceslice.json", "resourceclaim.json"};
    (void)state;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[512], *text;
        ydoc y;
        snprintf(path, sizeof path, "%s/codec/%s", DRA_TEST_DATA, files[f]);
        text = dra_test_slurp(path, NULL);
        yparse(&y, text);
        if (y.err)
            fail_msg("%s: %s", files[f], dra_diag_first(&y.d));
        assert_true(y.n >= 1);
        for (size_t i = 0; i < y.n; i++)
            check_roundtrip(y.docs[i]);
        yfree(&y);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_typing),
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_keys_and_anchors),
        cmocka_unit_test(test_big_map_duplicates),
        cmocka_unit_test(test_errors_and_limits),
        cmocka_unit_test(test_flatten),
        cmocka_unit_test(test_encode_style),
        cmocka_unit_test(test_encode_small),
        cmocka_unit_test(test_string_roundtrip),
        cmocka_unit_test(test_file_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
