/* JSON decode/encode: shapes, member order, number text, positions,
 * encoding/json-style errors and output, limits and round trips. */
#include <math.h>

#include "dra_test.h"
#include "dra/codec.h"

static dra_doc *parse_ok(dra_arena *a, const char *text)
{
    dra_doc *d = NULL;
    dra_diag dg;
    dra_diag_init(&dg, NULL);
    if (dra_doc_parse_json(a, text, strlen(text), &d, &dg) != DRA_OK)
        fail_msg("parse failed: %s", dra_diag_first(&dg));
    dra_diag_fini(&dg);
    return d;
}

/* "line:col: message" of the first error. */
static void expect_error(const char *text, dra_err want, const char *msg)
{
    dra_arena a;
    dra_diag dg;
    dra_doc *d = (dra_doc *)1;
    dra_buf b;
    dra_err err;
    dra_arena_init(&a, NULL);
    dra_diag_init(&dg, NULL);
    dra_buf_init(&b, NULL);
    err = dra_doc_parse_json(&a, text, strlen(text), &d, &dg);
    dra_diag_format(&dg, &b);
    if (err != want || strcmp(b.p ? b.p : "", msg) != 0)
        fail_msg("%s: got %s \"%s\", want %s \"%s\"", text, dra_errname(err),
                 b.p ? b.p : "", dra_errname(want), msg);
    assert_null(d);
    dra_buf_fini(&b);
    dra_diag_fini(&dg);
    dra_arena_fini(&a);
}

static void test_decode(void **state)
{
    dra_arena a;
    const dra_doc *d, *v;
    (void)state;
    dra_arena_init(&a, NULL);
    d = parse_ok(&a, "{\"z\": 1, \"a\": [true, false, null, -0.5, \"x\\u00e9\\ud83d\\ude00\"],\n"
                     " \"m\": {}, \"big\": 123456789012345678901234567890,"
                     " \"min\": -9223372036854775808, \"max\": 9223372036854775807,"
                     " \"over\": 9223372036854775808, \"e\": 1e3}");
    assert_int_equal(d->kind, DRA_DOC_MAP);
    assert_int_equal(d->u.map.n, 8);
    assert_string_equal(d->u.map.m[0].key, "z"); /* source order kept */
    assert_string_equal(d->u.map.m[1].key, "a");
    v = dra_doc_get(d, "a");
    assert_int_equal(v->u.list.n, 5);
    assert_int_equal(v->u.list.items[0]->kind, DRA_DOC_BOOL);
    assert_true(v->u.list.items[0]->u.b);
    assert_int_equal(v->u.list.items[2]->kind, DRA_DOC_NULL);
    assert_int_equal(v->u.list.items[3]->kind, DRA_DOC_FLOAT);
    assert_true(v->u.list.items[3]->u.f.f == -0.5);
    assert_string_equal(v->u.list.items[4]->u.str.s, "x\xc3\xa9\xf0\x9f\x98\x80");
    v = dra_doc_get(d, "big");
    assert_int_equal(v->kind, DRA_DOC_FLOAT);
    assert_string_equal(v->u.f.num, "123456789012345678901234567890");
    assert_int_equal(dra_doc_get(d, "min")->u.i, INT64_MIN);
    assert_int_equal(dra_doc_get(d, "max")->u.i, INT64_MAX);
    assert_int_equal(dra_doc_get(d, "over")->kind, DRA_DOC_FLOAT);
    assert_int_equal(dra_doc_get(d, "e")->kind, DRA_DOC_FLOAT);
    assert_true(dra_doc_get(d, "e")->u.f.f == 1000.0);
    assert_null(dra_doc_get(d, "nope"));
    assert_null(dra_doc_get(v, "x"));
    /* positions: 1-based, columns in characters */
    assert_int_equal(d->line, 1);
    assert_int_equal(d->col, 1);
    v = dra_doc_get(d, "m");
    assert_int_equal(v->line, 2);
    assert_int_equal(v->col, 7);
    d = parse_ok(&a, "[\"\xc3\xa9\xc3\xa9\", 7]");
    assert_int_equal(d->u.list.items[1]->col, 8);
    /* NUL inside strings survives via len */
    d = parse_ok(&a, "\"a\\u0000b\"");
    assert_int_equal(d->u.str.len, 3);
    assert_memory_equal(d->u.str.s, "a\0b", 3);
    d = parse_ok(&a, " \t\r\n 42 \n");
    assert_int_equal(d->kind, DRA_DOC_INT);
    assert_int_equal(d->u.i, 42);
    dra_arena_fini(&a);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("", DRA_EPARSE, "1:1: unexpected end of JSON input\n");
    expect_error("{\"a\" 1}", DRA_EPARSE, "1:6: invalid character '1' after object key\n");
    expect_error("{\"a\":1 \"b\":2}", DRA_EPARSE,
                 "1:8: invalid character '\"' after object key:value pair\n");
    expect_error("[1,\n  2,\n  x]", DRA_EPARSE,
                 "3:3: invalid character 'x' looking for beginning of value\n");
    expect_error("[1 2]", DRA_EPARSE, "1:4: invalid character '2' after array element\n");
    expect_error("{} x", DRA_EPARSE, "1:4: invalid character 'x' after top-level value\n");
    expect_error("{\"a\":1,\"a\":2}", DRA_EPARSE, "1:8: duplicate field \"a\"\n");
    expect_error("{\"é\":1,\"é\":2}", DRA_EPARSE, "1:8: duplicate field \"é\"\n");
    expect_error("{,}", DRA_EPARSE,
                 "1:2: invalid character ',' looking for beginning of object key string\n");
    expect_error("[1,]", DRA_EPARSE, "1:4: invalid character ']' looking for beginning of value\n");
    expect_error("01", DRA_EPARSE, "1:2: invalid character '1' after top-level value\n");
    expect_error("-", DRA_EPARSE, "1:2: unexpected end of JSON input\n");
    expect_error("1.", DRA_EPARSE, "1:3: unexpected end of JSON input\n");
    expect_error("1.e5", DRA_EPARSE, "1:3: invalid character 'e' in numeric literal\n");
    expect_error("tru", DRA_EPARSE, "1:4: unexpected end of JSON input\n");
    expect_error("nul!", DRA_EPARSE,
                 "1:4: invalid character '!' in literal null (expecting 'l')\n");
    expect_error("\"abc", DRA_EPARSE, "1:5: unexpected end of JSON input\n");
    expect_error("\"a\tb\"", DRA_EPARSE, "1:3: invalid character 0x09 in string literal\n");
    expect_error("\"\\x\"", DRA_EPARSE, "1:2: invalid escape in string literal\n");
    expect_error("\"\\ud800\"", DRA_EPARSE,
                 "1:2: unpaired surrogate \\uD800 in string literal\n");
    expect_error("\"\xff\"", DRA_EPARSE, "1:2: invalid UTF-8 in string literal\n");
    expect_error("\"\xc3\xa9\" x", DRA_EPARSE,
                 "1:5: invalid character 'x' after top-level value\n");
    expect_error("1e400", DRA_ERANGE, "1:1: number 1e400 out of range\n");
    expect_error("\xef\xbb\xbf{}", DRA_EPARSE,
                 "1:1: invalid character 0xef looking for beginning of value\n");
}

static void test_limits(void **state)
{
    char deep[600];
    dra_arena a;
    dra_doc *d;
    dra_diag dg;
    (void)state;
    memset(deep, '[', 256);
    memset(deep + 256, ']', 256);
    deep[512] = '\0';
    dra_arena_init(&a, NULL);
    dra_diag_init(&dg, NULL);
    assert_int_equal(dra_doc_parse_json(&a, deep, 512, &d, &dg), DRA_OK);
    memset(deep, '[', 257);
    memset(deep + 257, ']', 257);
    assert_int_equal(dra_doc_parse_json(&a, deep, 514, &d, &dg), DRA_ELIMIT);
    assert_string_equal(dra_diag_first(&dg), "exceeded max depth of 256");
    assert_int_equal(dg.v[0].col, 257);
    dra_diag_clear(&dg);
    assert_int_equal(dra_doc_parse_json(&a, "1", (size_t)DRA_DOC_MAX_BYTES + 1, &d, &dg),
                     DRA_ELIMIT);
    dra_diag_fini(&dg);
    dra_arena_fini(&a);
}

static void check_json(const dra_doc *d, int indent, const char *want)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_json(d, indent, &b), DRA_OK);
    assert_string_equal(b.p, want);
    dra_buf_fini(&b);
}

static void test_encode(void **state)
{
    dra_arena a;
    dra_doc *d, *l;
    dra_buf b;
    (void)state;
    dra_arena_init(&a, NULL);
    d = parse_ok(&a, "{\"b\":[1,2.50,{}],\"a\":\"<&>\\u2028\\n\\t\\u0001\\\"\\\\/é\","
                     "\"n\":null,\"t\":true,\"big\":18446744073709551616,\"l\":[]}");
    check_json(d, 0, "{\"b\":[1,2.50,{}],\"a\":\"\\u003c\\u0026\\u003e\\u2028\\n\\t\\u0001"
                     "\\\"\\\\/é\",\"n\":null,\"t\":true,\"big\":18446744073709551616,\"l\":[]}");
    check_json(d, 2, "{\n  \"b\": [\n    1,\n    2.50,\n    {}\n  ],\n  \"a\": \"\\u003c\\u0026"
                     "\\u003e\\u2028\\n\\t\\u0001\\\"\\\\/é\",\n  \"n\": null,\n  \"t\": true,\n"
                     "  \"big\": 18446744073709551616,\n  \"l\": []\n}");
    /* floats built in memory: shortest round-trip, Go's formatting */
    static const struct { double f; const char *s; } fl[] = {
        {0.1, "0.1"}, {1.0, "1"}, {-2.5, "-2.5"}, {1e20, "100000000000000000000"},
        {1e21, "1e+21"}, {1e-6, "0.000001"}, {1e-7, "1e-7"}, {123456789.125, "123456789.125"},
        {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
        {0.30000000000000004, "0.30000000000000004"}, {-0.0, "-0"},
    };
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
        check_json(dra_doc_new_float(&a, fl[i].f), 0, fl[i].s);
    dra_buf_init(&b, NULL);
    dra_buf_puts(&b, "keep");
    assert_int_equal(dra_doc_to_json(dra_doc_new_float(&a, NAN), 0, &b), DRA_EINVAL);
    assert_string_equal(b.p, "keep"); /* untouched on error */
    /* a self-containing list is cut off by the depth limit */
    l = dra_doc_new_list(&a, 0);
    assert_int_equal(dra_doc_list_push(&a, l, l), DRA_OK);
    assert_int_equal(dra_doc_to_json(l, 0, &b), DRA_ELIMIT);
    assert_string_equal(b.p, "keep");
    /* invalid UTF-8 from a builder becomes U+FFFD like encoding/json */
    check_json(dra_doc_new_string(&a, "a\xff", 2), 0, "\"a\\ufffd\"");
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

/* The decoder and the encoder take plain text eight bytes at a time:
 * every special byte at every offset of strings 0..19 bytes long, so a
 * hit in any lane of a chunk or in the tail is found, and integers at
 * the edges of int64. */
static void test_string_chunks(void **state)
{
    static const struct {
        const char *src, *dec, *enc; /* in the literal, decoded, re-encoded */
    } sp[] = {
        {"\\\"", "\"", "\\\""}, {"\\\\", "\\", "\\\\"}, {"\\n", "\n", "\\n"},
        {"<", "<", "\\u003c"},  {">", ">", "\\u003e"},  {"&", "&", "\\u0026"},
        {"\xc3\xa9", "\xc3\xa9", "\xc3\xa9"}, {"\x7f", "\x7f", "\x7f"},
        {"\\u0041", "A", "A"},
    };
    static const int64_t ints[] = {0, 7, -7, 10, -10, 123456789, INT64_MAX, INT64_MIN};
    dra_arena a;
    char src[64], dec[64], enc[64], num[32];
    (void)state;
    dra_arena_init(&a, NULL);
    for (size_t len = 0; len < 20; len++)
        for (size_t at = 0; at <= len; at++)
            for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++) {
                dra_doc *d;
                dra_buf b;
                /* |len| plain bytes with the special one inserted at |at| */
                snprintf(src, sizeof src, "\"%.*s%s%.*s\"", (int)at, "abcdefghijklmnopqrst",
                         sp[k].src, (int)(len - at), "ABCDEFGHIJKLMNOPQRST");
                snprintf(dec, sizeof dec, "%.*s%s%.*s", (int)at, "abcdefghijklmnopqrst",
                         sp[k].dec, (int)(len - at), "ABCDEFGHIJKLMNOPQRST");
                snprintf(enc, sizeof enc, "\"%.*s%s%.*s\"", (int)at, "abcdefghijklmnopqrst",
                         sp[k].enc, (int)(len - at), "ABCDEFGHIJKLMNOPQRST");
                d = parse_ok(&a, src);
                assert_int_equal(d->kind, DRA_DOC_STRING);
                assert_int_equal(d->u.str.len, strlen(dec));
                assert_string_equal(d->u.str.s, dec);
                dra_buf_init(&b, NULL);
                assert_int_equal(dra_doc_to_json(d, 0, &b), DRA_OK);
                assert_string_equal(b.p, enc);
                dra_buf_fini(&b);
                /* a raw control byte there is an error wherever it is */
                snprintf(src, sizeof src, "\"%.*s\x01%.*s\"", (int)at, "abcdefghijklmnopqrst",
                         (int)(len - at), "ABCDEFGHIJKLMNOPQRST");
                d = (dra_doc *)1;
                assert_int_equal(dra_doc_parse_json(&a, src, strlen(src), &d, NULL), DRA_EPARSE);
                assert_null(d);
            }
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        snprintf(num, sizeof num, "%lld", (long long)ints[i]);
        check_json(dra_doc_new_int(&a, ints[i]), 0, num);
    }
    dra_arena_fini(&a);
}

/* Exactly the same tree: kinds, values, member order and key bytes. */
static void same_tree(const dra_doc *x, const dra_doc *y)
{
    assert_int_equal(x->kind, y->kind);
    switch (x->kind) {
    case DRA_DOC_BOOL: assert_int_equal(x->u.b, y->u.b); break;
    case DRA_DOC_INT: assert_true(x->u.i == y->u.i); break;
    case DRA_DOC_STRING:
        assert_int_equal(x->u.str.len, y->u.str.len);
        assert_memory_equal(x->u.str.s, y->u.str.s, x->u.str.len + 1);
        break;
    case DRA_DOC_LIST:
        assert_int_equal(x->u.list.n, y->u.list.n);
        for (size_t i = 0; i < x->u.list.n; i++)
            same_tree(x->u.list.items[i], y->u.list.items[i]);
        break;
    case DRA_DOC_MAP:
        assert_int_equal(x->u.map.n, y->u.map.n);
        for (size_t i = 0; i < x->u.map.n; i++) {
            assert_int_equal(x->u.map.m[i].keylen, y->u.map.m[i].keylen);
            assert_memory_equal(x->u.map.m[i].key, y->u.map.m[i].key, x->u.map.m[i].keylen + 1);
            same_tree(x->u.map.m[i].val, y->u.map.m[i].val);
        }
        break;
    default: break;
    }
}

/* dra_doc_copy_json is the text round trip or refuses: the copy of each
 * document equals what the parser reads from its encoding, and the cases
 * where the text would read back otherwise (or fail) are refused. */
static void test_copy_json(void **state)
{
    static const char *const ok[] = {
        "{}", "[]", "null", "\"\"", "-9223372036854775808",
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"<&>\\u2028\\u0000\"}},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"args\":[\"\\u00e9\",\"\",true,false,null,0]}],"
        "\"empty\":{},\"none\":[]}}",
    };
    dra_arena a;
    dra_doc *src, *cp, *back, *m;
    dra_buf b;
    char key[8];
    (void)state;
    dra_arena_init(&a, NULL);
    dra_buf_init(&b, NULL);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        src = parse_ok(&a, ok[i]);
        assert_int_equal(dra_doc_copy_json(&a, src, SIZE_MAX, &cp), DRA_OK);
        b.len = 0;
        assert_int_equal(dra_doc_to_json(src, 0, &b), DRA_OK);
        back = parse_ok(&a, b.p);
        same_tree(cp, back);
        assert_int_equal(cp->line, 0);
        /* never a copy when the text is longer than the limit */
        assert_int_equal(dra_doc_copy_json(&a, src, b.len - 1, &cp), DRA_EUNSUPPORTED);
    }
    /* a map past the linear duplicate check, built in memory */
    m = dra_doc_new_map(&a, 0);
    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_int_equal(dra_doc_map_set(&a, m, key, dra_doc_new_int(&a, i)), DRA_OK);
    }
    assert_int_equal(dra_doc_copy_json(&a, m, SIZE_MAX, &cp), DRA_OK);
    same_tree(cp, m);
    /* a repeated key, small and large map: the parser would refuse it */
    m->u.map.m[39].key = "k3";
    m->u.map.m[39].keylen = 2;
    cp = (dra_doc *)1;
    assert_int_equal(dra_doc_copy_json(&a, m, SIZE_MAX, &cp), DRA_EUNSUPPORTED);
    assert_null(cp);
    src = parse_ok(&a, "{\"a\":1,\"b\":2}");
    src->u.map.m[1].key = "a";
    src->u.map.m[1].keylen = 1;
    assert_int_equal(dra_doc_copy_json(&a, src, SIZE_MAX, &cp), DRA_EUNSUPPORTED);
    /* a float (1.0 would read back as 1), invalid UTF-8 (U+FFFD), too long */
    src = parse_ok(&a, "{\"f\":[1.5]}");
    assert_int_equal(dra_doc_copy_json(&a, src, SIZE_MAX, &cp), DRA_EUNSUPPORTED);
    assert_int_equal(dra_doc_copy_json(&a, dra_doc_new_string(&a, "a\xff", 2), SIZE_MAX, &cp),
                     DRA_EUNSUPPORTED);
    src = parse_ok(&a, "{\"name\":\"abcdefgh\"}");
    assert_int_equal(dra_doc_copy_json(&a, src, 10, &cp), DRA_EUNSUPPORTED);
    /* nesting near the limit goes through the text */
    src = dra_doc_new_list(&a, 0);
    for (int i = 0; i < DRA_DOC_MAX_DEPTH; i++) {
        dra_doc *l = dra_doc_new_list(&a, 0);
        assert_int_equal(dra_doc_list_push(&a, l, src), DRA_OK);
        src = l;
    }
    assert_int_equal(dra_doc_copy_json(&a, src, SIZE_MAX, &cp), DRA_EUNSUPPORTED);
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

static void test_roundtrip_files(void **state)
{
    static const char *const files[] = {"resourceslice.json", "resourceclaim.json"};
    (void)state;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        size_t len;
        char *text;
        dra_arena a;
        dra_doc *d1, *d2;
        dra_buf b1, b2;
        snprintf(path, sizeof path, "%s/codec/%s", DRA_TEST_DATA, files[i]);
        text = dra_test_slurp(path, &len);
        dra_arena_init(&a, NULL);
        dra_buf_init(&b1, NULL);
        dra_buf_init(&b2, NULL);
        d1 = parse_ok(&a, text);
        for (int indent = 0; indent <= 4; indent += 2) {
            dra_buf_reset(&b1);
            dra_buf_reset(&b2);
            assert_int_equal(dra_doc_to_json(d1, indent, &b1), DRA_OK);
            d2 = parse_ok(&a, b1.p);
            assert_true(dra_doc_equal(d1, d2));
            assert_int_equal(dra_doc_to_json(d2, indent, &b2), DRA_OK);
            assert_string_equal(b1.p, b2.p);
        }
        /* the indented source file is printed back byte for byte */
        dra_buf_reset(&b1);
        assert_int_equal(dra_doc_to_json(d1, 2, &b1), DRA_OK);
        dra_buf_putc(&b1, '\n');
        assert_string_equal(b1.p, text);
        dra_buf_fini(&b1);
        dra_buf_fini(&b2);
        dra_arena_fini(&a);
        free(text);
    }
}

static void test_builders_equal(void **state)
{
    dra_arena a;
    dra_doc *m, *m2, *l;
    (void)state;
    dra_arena_init(&a, NULL);
    m = dra_doc_new_map(&a, 0);
    for (int i = 0; i < 20; i++) {
        char k[8];
        snprintf(k, sizeof k, "k%d", i);
        assert_int_equal(dra_doc_map_set(&a, m, k, dra_doc_new_int(&a, i)), DRA_OK);
    }
    assert_int_equal(dra_doc_map_set(&a, m, "k3", dra_doc_new_string(&a, "x", 1)), DRA_OK);
    assert_int_equal(m->u.map.n, 20);
    assert_string_equal(dra_doc_get(m, "k3")->u.str.s, "x");
    m2 = parse_ok(&a, "{\"k19\":19,\"k18\":18,\"k17\":17,\"k16\":16,\"k15\":15,\"k14\":14,"
                      "\"k13\":13,\"k12\":12,\"k11\":11,\"k10\":10,\"k9\":9,\"k8\":8,\"k7\":7,"
                      "\"k6\":6,\"k5\":5,\"k4\":4,\"k3\":\"x\",\"k2\":2,\"k1\":1,\"k0\":0.0}");
    assert_true(dra_doc_equal(m, m2)); /* order-insensitive, 0 == 0.0 */
    assert_int_equal(dra_doc_map_set(&a, m2, "k0", dra_doc_new_float(&a, 0.5)), DRA_OK);
    assert_false(dra_doc_equal(m, m2));
    /* decoded maps grow too (they carry the hidden capacity slot) */
    assert_int_equal(dra_doc_map_set(&a, m2, "new", dra_doc_new_null(&a)), DRA_OK);
    assert_int_equal(m2->u.map.n, 21);
    l = parse_ok(&a, "[1]");
    assert_int_equal(dra_doc_list_push(&a, l, dra_doc_new_bool(&a, 1)), DRA_OK);
    assert_int_equal(dra_doc_list_push(&a, l, dra_doc_new_int(&a, 3)), DRA_OK);
    assert_int_equal(l->u.list.n, 3);
    assert_int_equal(l->u.list.items[0]->u.i, 1);
    assert_int_equal(dra_doc_list_push(&a, m, l), DRA_EINVAL);
    /* nodes filled by hand (exact arrays, no capacity tag) grow by copying */
    {
        dra_doc *hm = dra_doc_new_map(&a, 0), *hl = dra_doc_new_list(&a, 0);
        hm->u.map.m = dra_arena_array(&a, 2, sizeof *hm->u.map.m);
        hm->u.map.m[0] = (dra_doc_member){"a", 1, dra_doc_new_int(&a, 1)};
        hm->u.map.m[1] = (dra_doc_member){"b", 1, dra_doc_new_int(&a, 2)};
        hm->u.map.n = 2;
        assert_int_equal(dra_doc_map_set(&a, hm, "c", dra_doc_new_int(&a, 3)), DRA_OK);
        assert_int_equal(hm->u.map.n, 3);
        assert_int_equal(dra_doc_get(hm, "a")->u.i, 1);
        assert_int_equal(dra_doc_get(hm, "c")->u.i, 3);
        hl->u.list.items = dra_arena_array(&a, 1, sizeof *hl->u.list.items);
        hl->u.list.items[0] = dra_doc_new_null(&a);
        hl->u.list.n = 1;
        for (int i = 0; i < 10; i++)
            assert_int_equal(dra_doc_list_push(&a, hl, dra_doc_new_int(&a, i)), DRA_OK);
        assert_int_equal(hl->u.list.n, 11);
        assert_int_equal(hl->u.list.items[0]->kind, DRA_DOC_NULL);
        assert_int_equal(hl->u.list.items[10]->u.i, 9);
    }
    assert_false(dra_doc_equal(parse_ok(&a, "18446744073709551616"),
                               parse_ok(&a, "18446744073709551617")));
    assert_true(dra_doc_equal(parse_ok(&a, "1e2"), parse_ok(&a, "100")));
    assert_false(dra_doc_equal(parse_ok(&a, "\"1\""), parse_ok(&a, "1")));
    assert_false(dra_doc_equal(parse_ok(&a, "[1,2]"), parse_ok(&a, "[2,1]")));
    dra_arena_fini(&a);
}

static void check_order(const char *json, dra_doc_order order, const char *want)
{
    dra_arena a;
    dra_doc *d;
    dra_buf b;
    dra_arena_init(&a, NULL);
    dra_buf_init(&b, NULL);
    d = parse_ok(&a, json);
    assert_int_equal(dra_doc_sort_keys(d, order), DRA_OK);
    assert_int_equal(dra_doc_to_json(d, 0, &b), DRA_OK);
    assert_string_equal(b.p, want);
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

static void test_sort_keys(void **state)
{
    static const char in[] = "{\"kind\":1,\"b\":2,\"a10\":3,\"a2\":4,\"_x\":5,\"10\":6,"
                             "\"2\":7,\"apiVersion\":{\"z\":[{\"y\":1,\"x\":2}],\"a\":0},\"A\":9}";
    (void)state;
    check_order(in, DRA_DOC_ORDER_BYTES,
                "{\"10\":6,\"2\":7,\"A\":9,\"_x\":5,\"a10\":3,\"a2\":4,"
                "\"apiVersion\":{\"a\":0,\"z\":[{\"x\":2,\"y\":1}]},\"b\":2,\"kind\":1}");
    check_order(in, DRA_DOC_ORDER_YAML,
                "{\"_x\":5,\"2\":7,\"10\":6,\"A\":9,\"a2\":4,\"a10\":3,"
                "\"apiVersion\":{\"a\":0,\"z\":[{\"x\":2,\"y\":1}]},\"b\":2,\"kind\":1}");
    check_order("{\"x10\":1,\"x9\":2,\"x09\":3,\"x010\":4,\"ab\":5,\"a\":6}", DRA_DOC_ORDER_YAML,
                "{\"a\":6,\"ab\":5,\"x9\":2,\"x09\":3,\"x10\":1,\"x010\":4}");
    check_order("{\"k30000000000000000000000\":1,\"k2\":2}", DRA_DOC_ORDER_YAML,
                "{\"k2\":2,\"k30000000000000000000000\":1}");
    assert_int_equal(dra_doc_sort_keys(NULL, DRA_DOC_ORDER_YAML), DRA_EINVAL);
}

/* go-yaml's order has cycles: "0ct" < "1ead" < "00066x" < "0ct". The
 * result must depend only on the key set (every input order gives the
 * same output) so that sorting is idempotent; found by fuzz_json. */
static void test_sort_keys_cycle(void **state)
{
    static const char *perms[] = {
        "{\"0ct\":1,\"1ead\":2,\"00066x\":3}", "{\"0ct\":1,\"00066x\":3,\"1ead\":2}",
        "{\"1ead\":2,\"0ct\":1,\"00066x\":3}", "{\"1ead\":2,\"00066x\":3,\"0ct\":1}",
        "{\"00066x\":3,\"0ct\":1,\"1ead\":2}", "{\"00066x\":3,\"1ead\":2,\"0ct\":1}",
    };
    (void)state;
    for (size_t i = 0; i < sizeof perms / sizeof *perms; i++)
        check_order(perms[i], DRA_DOC_ORDER_YAML, "{\"00066x\":3,\"0ct\":1,\"1ead\":2}");
    check_order("{\"00066x\":3,\"0ct\":1,\"1ead\":2}", DRA_DOC_ORDER_YAML,
                "{\"00066x\":3,\"0ct\":1,\"1ead\":2}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_string_chunks),
        cmocka_unit_test(test_copy_json),
        cmocka_unit_test(test_roundtrip_files),
        cmocka_unit_test(test_builders_equal),
        cmocka_unit_test(test_sort_keys),
        cmocka_unit_test(test_sort_keys_cycle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
