/* Tests for src/base: errors, arena, buffer, map, paths, diagnostics, and a
 * failmalloc loop proving each structure survives every allocation failing. */
#include "dra_test.h"

#include <stdint.h>

static void test_errors(void **state)
{
    (void)state;
    assert_string_equal(dra_strerror(DRA_ENOMEM), "out of memory");
    assert_string_equal(dra_errname(DRA_EINVALID), "DRA_EINVALID");
    assert_string_equal(dra_strerror(12345), "unknown error");
    assert_string_equal(dra_errname(DRA_OK), "DRA_OK");
}

static void test_arena(void **state)
{
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    for (int i = 0; i < 10000; i++) {
        char *s = dra_arena_sprintf(&a, "item-%d", i);
        assert_non_null(s);
        assert_int_equal(((uintptr_t)s) % 16, 0);
    }
    char *big = dra_arena_alloc(&a, 100000);
    assert_non_null(big);
    memset(big, 1, 100000);
    char *small = dra_arena_strndup(&a, "abcdef", 3);
    assert_string_equal(small, "abc");
    assert_null(dra_arena_array(&a, SIZE_MAX / 2, 4));
    dra_arena_reset(&a);
    assert_non_null(dra_arena_strdup(&a, "after reset"));
    dra_arena_fini(&a);
    dra_arena_fini(&a); /* idempotent */
}

static void test_buf(void **state)
{
    dra_buf b;
    (void)state;
    dra_buf_init(&b, NULL);
    for (int i = 0; i < 1000; i++)
        dra_buf_printf(&b, "%d,", i);
    assert_false(b.oom);
    assert_memory_equal(b.p, "0,1,2,", 6);
    /* Results that fit the room left, that just do not, and far longer
     * ones: each appended whole and terminated. */
    {
        char big[3000];
        size_t before;
        memset(big, 'z', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        for (int k = 0; k < 200; k++) {
            before = b.len;
            dra_buf_printf(&b, "<%.*s>", k * 13 % 2999, big);
            assert_int_equal(b.len, before + 2 + (size_t)(k * 13 % 2999));
            assert_int_equal(b.p[b.len], '\0');
            assert_int_equal(b.p[before], '<');
            assert_int_equal(b.p[b.len - 1], '>');
        }
        assert_false(b.oom);
        assert_memory_equal(b.p, "0,1,2,", 6);
    }
    dra_buf_reset(&b);
    dra_buf_puts(&b, "x");
    dra_buf_putc(&b, 'y');
    assert_string_equal(b.p, "xy");
    char *s = dra_buf_detach(&b);
    assert_string_equal(s, "xy");
    free(s);
    assert_null(b.p);
    s = dra_buf_detach(&b);
    assert_string_equal(s, "");
    free(s);
    dra_buf_fini(&b);
}

static void test_map(void **state)
{
    dra_map m;
    dra_arena a;
    char *keys[5000];
    (void)state;
    dra_arena_init(&a, NULL);
    dra_map_init(&m, NULL);
    for (int i = 0; i < 5000; i++) {
        keys[i] = dra_arena_sprintf(&a, "k%d", i);
        assert_int_equal(dra_map_put(&m, keys[i], strlen(keys[i]),
                                     (void *)(intptr_t)(i + 1)), DRA_OK);
    }
    for (int i = 0; i < 5000; i += 2)
        assert_true(dra_map_del(&m, keys[i], strlen(keys[i])));
    assert_false(dra_map_del(&m, "nope", 4));
    assert_int_equal(m.live, 2500);
    for (int i = 0; i < 5000; i++) {
        intptr_t v = (intptr_t)dra_map_get(&m, keys[i], strlen(keys[i]));
        assert_int_equal(v, i % 2 ? i + 1 : 0);
    }
    /* Re-insert after deletes, then check insertion order survives. */
    assert_int_equal(dra_map_put(&m, keys[0], strlen(keys[0]), (void *)1), DRA_OK);
    assert_int_equal(dra_map_put(&m, keys[1], strlen(keys[1]), (void *)7), DRA_OK);
    assert_int_equal((intptr_t)dra_map_get(&m, keys[1], 2), 7);
    const char *last = NULL;
    for (size_t i = 0; i < m.n; i++)
        if (m.entries[i].key)
            last = m.entries[i].key;
    assert_string_equal(last, "k0");
    dra_map_fini(&m);
    dra_arena_fini(&a);
}

static void test_path(void **state)
{
    dra_path p;
    (void)state;
    dra_path_init(&p, "spec");
    dra_path_field(&p, "devices");
    dra_path_field(&p, "requests");
    dra_path_index(&p, 0);
    dra_path_field(&p, "exactly");
    dra_path_field(&p, "count");
    assert_string_equal(dra_path_str(&p), "spec.devices.requests[0].exactly.count");
    dra_path_pop(&p);
    dra_path_pop(&p);
    dra_path_pop(&p);
    dra_path_key(&p, "gpu.nvidia.com/uuid");
    assert_string_equal(dra_path_str(&p), "spec.devices.requests[gpu.nvidia.com/uuid]");
    for (int i = 0; i < 500; i++)
        dra_path_field(&p, "averyveryverylongfieldname");
    assert_true(strlen(dra_path_str(&p)) < DRA_PATH_MAX);
    for (int i = 0; i < 500; i++)
        dra_path_pop(&p);
    assert_string_equal(dra_path_str(&p), "spec.devices.requests[gpu.nvidia.com/uuid]");
    dra_path_pop(&p);
    dra_path_index(&p, 1234567);
    assert_string_equal(dra_path_str(&p), "spec.devices.requests[1234567]");
    dra_path_pop(&p);
    dra_path_index(&p, SIZE_MAX);
    {
        char want[64];
        snprintf(want, sizeof want, "spec.devices.requests[%zu]", (size_t)SIZE_MAX);
        assert_string_equal(dra_path_str(&p), want);
    }
}

static void test_diag(void **state)
{
    dra_diag d;
    dra_buf b;
    (void)state;
    dra_diag_init(&d, NULL);
    dra_buf_init(&b, NULL);
    dra_diag_add(&d, "spec.devices.requests[0].exactly.count", 0, 0,
                 "Invalid value: %d: must be greater than zero", 0);
    dra_diag_add(&d, NULL, 1, 5, "Syntax error: %s", "unexpected token");
    dra_diag_add(&d, "", 0, 0, "plain");
    assert_int_equal(dra_diag_format(&d, &b), DRA_OK);
    assert_string_equal(b.p,
        "spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero\n"
        "1:5: Syntax error: unexpected token\n"
        "plain\n");
    assert_string_equal(dra_diag_first(&d), "Invalid value: 0: must be greater than zero");
    assert_int_equal(dra_diag_add(NULL, "x", 0, 0, "ignored"), DRA_OK);
    d.max = 3;
    dra_diag_add(&d, "x", 0, 0, "dropped");
    assert_int_equal(d.dropped, 1);
    dra_buf_fini(&b);
    dra_diag_fini(&d);
}

/* Runs |fn| with allocation k failing, for k = 0, 1, ... until it runs
 * to completion without a failure; every run must leave no live block. */
static void exercise(dra_mem *mem)
{
    dra_map m;
    dra_buf b;
    dra_diag d;
    dra_arena a;
    dra_arena_init(&a, mem);
    dra_map_init(&m, mem);
    dra_buf_init(&b, mem);
    dra_diag_init(&d, mem);
    for (int i = 0; i < 200; i++) {
        char *k = dra_arena_sprintf(&a, "key%d", i);
        if (k)
            dra_map_put(&m, k, strlen(k), k);
        dra_buf_printf(&b, "%d", i);
        dra_diag_add(&d, "p", 0, 0, "m%d", i);
    }
    dra_diag_format(&d, &b);
    dra_diag_fini(&d);
    dra_buf_fini(&b);
    dra_map_fini(&m);
    dra_arena_fini(&a);
}

static void test_failmalloc(void **state)
{
    (void)state;
    for (long k = 0;; k++) {
        dra_failmem fm;
        dra_failmem_init(&fm, k);
        exercise(&fm.mem);
        assert_int_equal(fm.live, 0);
        if (!fm.failed)
            break;
    }
}

static void test_utf8(void **state)
{
    static const struct {
        const char *s;
        size_t n;      /* expected length, 0 = invalid */
        uint32_t cp;
    } cases[] = {
        {"A", 1, 0x41},
        {"\xC2\x80", 2, 0x80},
        {"\xDF\xBF", 2, 0x7FF},
        {"\xE0\xA0\x80", 3, 0x800},
        {"\xED\x9F\xBF", 3, 0xD7FF},
        {"\xEF\xBF\xBF", 3, 0xFFFF},
        {"\xF0\x90\x80\x80", 4, 0x10000},
        {"\xF4\x8F\xBF\xBF", 4, 0x10FFFF},
        {"\x80", 0, 0},             /* lone continuation */
        {"\xC0\xAF", 0, 0},         /* overlong '/' */
        {"\xC1\xBF", 0, 0},         /* overlong */
        {"\xE0\x9F\xBF", 0, 0},     /* overlong 3-byte */
        {"\xED\xA0\x80", 0, 0},     /* surrogate U+D800 */
        {"\xF0\x8F\xBF\xBF", 0, 0}, /* overlong 4-byte */
        {"\xF4\x90\x80\x80", 0, 0}, /* above U+10FFFF */
        {"\xF5\x80\x80\x80", 0, 0},
        {"\xE2\x82", 0, 0},         /* truncated */
        {"\xE2\x28\xA1", 0, 0},     /* bad continuation */
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t cp = 0xDEAD;
        const unsigned char *s = (const unsigned char *)cases[i].s;
        size_t n = dra_utf8_decode(s, strlen(cases[i].s), &cp);
        assert_int_equal(n, cases[i].n);
        assert_int_equal(cp, cases[i].n ? cases[i].cp : 0xDEAD);
    }
    /* The length bounds the read, not a NUL. */
    uint32_t cp = 0;
    assert_int_equal(dra_utf8_decode((const unsigned char *)"\xC3\xA9", 1, &cp), 0);
    assert_int_equal(dra_utf8_decode((const unsigned char *)"", 0, &cp), 0);
    assert_int_equal(dra_utf8_decode((const unsigned char *)"\xC3\xA9x", 3, &cp), 2);
    assert_int_equal(cp, 0xE9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_path),
        cmocka_unit_test(test_diag),
        cmocka_unit_test(test_failmalloc),
        cmocka_unit_test(test_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
