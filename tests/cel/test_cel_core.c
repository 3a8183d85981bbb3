/* The CEL language core in the standard environment: literals and
 * escapes, operators and their error rules (overflow, division by zero,
 * heterogeneous numbers), logic with error absorption, macros, optionals,
 * conversions, parse and check errors with carets, cost limits on hostile
 * expressions, and allocation failure. */
#include "dra_test.h"

#include "dra/cel.h"
#include "dra/codec.h"

typedef struct fixture {
    dra_cel_env *env;
    dra_cel_vm *vm;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(dra_cel_env_new_std(NULL, NULL, &f->env), DRA_OK);
    assert_int_equal(dra_cel_env_declare(f->env, "x", "int"), DRA_OK);
    assert_int_equal(dra_cel_env_declare(f->env, "s", "string"), DRA_OK);
    assert_int_equal(dra_cel_env_declare(f->env, "m", "map(string, dyn)"), DRA_OK);
    assert_int_equal(dra_cel_env_declare(f->env, "l", "list(int)"), DRA_OK);
    assert_int_equal(dra_cel_vm_new(NULL, &f->vm), DRA_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dra_cel_vm_free(f->vm);
    dra_cel_env_free(f->env);
    free(f);
    return 0;
}

static const char bindings_json[] =
    "{\"x\": 7, \"s\": \"héllo\", \"m\": {\"a\": 1, \"b\": {\"c\": \"d\"}, \"n\": null},"
    " \"l\": [1, 2, 3]}";

/* Evaluates |expr| with the fixture bindings; the result as a CEL literal,
 * "ERR <message>" for a runtime error, "COMPILE <rc>: <message>" for a
 * compile failure. Caller frees. */
static char *eval(fixture *f, const char *expr, unsigned flags)
{
    dra_arena a;
    dra_doc *b;
    dra_diag d;
    dra_buf out;
    dra_cel_program *p = NULL;
    dra_err rc;
    char *r;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    dra_buf_init(&out, NULL);
    assert_int_equal(dra_doc_parse_json(&a, bindings_json, strlen(bindings_json), &b, NULL),
                     DRA_OK);
    rc = dra_cel_compile_ex(f->env, expr, strlen(expr), flags, &p, &d);
    if (rc) {
        dra_buf_printf(&out, "COMPILE %s: %s", dra_errname(rc),
                       dra_diag_first(&d) ? dra_diag_first(&d) : "");
    } else {
        rc = dra_cel_eval_json(p, f->vm, b, &out, &d);
        if (rc == DRA_EEVAL || rc == DRA_ECOST) {
            dra_buf_reset(&out);
            dra_buf_printf(&out, "ERR %s", dra_diag_first(&d));
        }
    }
    r = strdup(out.p ? out.p : "");
    dra_cel_program_unref(p);
    dra_buf_fini(&out);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return r;
}

typedef struct tcase {
    const char *expr, *want;
} tcase;

static void run_cases(fixture *f, const tcase *cs, size_t n, unsigned flags)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char *got = eval(f, cs[i].expr, flags);
        if (strncmp(got, cs[i].want, strlen(cs[i].want)) != 0 ||
            (strncmp(cs[i].want, "ERR", 3) && strncmp(cs[i].want, "COMPILE", 7) &&
             strcmp(got, cs[i].want))) {
            print_error("%s\n  got:  %s\n  want: %s\n", cs[i].expr, got, cs[i].want);
            bad++;
        }
        free(got);
    }
    if (bad)
        fail_msg("%d case(s) failed", bad);
}

static void test_literals(void **state)
{
    static const tcase cs[] = {
        {"0", "0"}, {"-9223372036854775808", "-9223372036854775808"},
        {"9223372036854775807", "9223372036854775807"}, {"0x1F", "31"}, {"1u", "1u"},
        {"0xFFFFFFFFFFFFFFFFu", "18446744073709551615u"}, {"1.5", "1.5"}, {".5", "0.5"},
        {"1e3", "1000.0"}, {"1.5e-3", "0.0015"}, {"-0.0", "-0.0"}, {"true", "true"},
        {"null", "null"}, {"'a\\tb'", "\"a\\tb\""}, {"\"\\u00e9\" == 'é'", "true"},
        {"'\\x41\\101\\U0001F600' == 'AA😀'", "true"}, {"b'\\xff\\000'", "b\"\\xff\\x00\""},
        {"size(b'\\xc3\\xa9')", "2"}, {"size('\\xc3')", "1"}, {"r'\\n' == '\\\\n'", "true"},
        {"'''a\nb''' == \"a\\nb\"", "true"}, {"\"\"\"x\"y\"\"\" == 'x\"y'", "true"},
        {"R\"a\\b\"", "\"a\\\\b\""}, {"br'\\x'", "b\"\\\\x\""},
        {"[1, 'a', [true]]", "[1, \"a\", [true]]"}, {"{'k': 1u}", "{\"k\": 1u}"},
        {"[1, 2,]", "[1, 2]"}, {"{1: 2,}", "{1: 2}"},
        {"9223372036854775808", "COMPILE DRA_EPARSE"}, {"1.", "COMPILE DRA_EPARSE"},
        {"'\\q'", "COMPILE DRA_EPARSE"}, {"'\\ud800'", "COMPILE DRA_EPARSE"},
        {"b'\\u0041'", "COMPILE DRA_EPARSE"}, {"'abc", "COMPILE DRA_EPARSE"},
        {"'a\nb'", "COMPILE DRA_EPARSE"}, {"0x", "COMPILE DRA_EPARSE"},
        {"18446744073709551616u", "COMPILE DRA_EPARSE"}, {"1 // comment\n + 1", "2"},
    };
    run_cases(*state, cs, sizeof cs / sizeof cs[0], 0);
}

static void test_arithmetic(void **state)
{
    static const tcase cs[] = {
        {"1 + 2 * 3 - 4 / 2 % 3", "5"}, {"-5 / 2", "-2"}, {"-5 % 2", "-1"}, {"43 % -5", "3"},
        {"-42 % -5", "-2"}, {"9223372036854775807 + 1", "ERR return error for overflow"},
        {"-9223372036854775808 - 1", "ERR return error for overflow"},
        {"-(-9223372036854775808)", "ERR return error for overflow"},
        {"-9223372036854775808 / -1", "ERR return error for overflow"},
        {"-9223372036854775808 % -1", "ERR return error for overflow"},
        {"4611686018427387904 * 2", "ERR return error for overflow"},
        {"1 / 0", "ERR division by zero"}, {"1 % 0", "ERR modulus by zero"},
        {"0u - 1u", "ERR return error for overflow"},
        {"18446744073709551615u + 1u", "ERR return error for overflow"},
        {"5u / 0u", "ERR division by zero"}, {"7u % 4u", "3u"}, {"1.0 / 0.0", "double(\"+Inf\")"},
        {"0.1 + 0.2", "0.30000000000000004"}, {"-(1.5)", "-1.5"}, {"1 + 1u", "COMPILE DRA_ETYPE"},
        {"dyn(1) + 1u", "ERR no such overload"}, {"-(1u)", "COMPILE DRA_ETYPE"},
        {"'ab' + 'cd'", "\"abcd\""}, {"b'a' + b'b'", "b\"ab\""}, {"[1] + [2, 3]", "[1, 2, 3]"},
        {"x * 2", "14"}, {"l[1] + l[2]", "5"},
    };
    run_cases(*state, cs, sizeof cs / sizeof cs[0], 0);
}

static void test_comparisons(void **state)
{
    static const tcase cs[] = {
        {"1 == 1", "true"}, {"dyn(1) == 1u", "true"}, {"dyn(1) == 1.0", "true"},
        {"dyn(1u) == -1", "false"}, {"1 < 2u", "true"}, {"-1 < 0u", "true"},
        {"2.5 > 2", "true"}, {"18446744073709551615u > 9223372036854775807", "true"},
        {"'a' < 'b'", "true"}, {"'é' > 'z'", "true"}, {"b'a' < b'b'", "true"},
        {"false < true", "true"}, {"0.0/0.0 == 0.0/0.0", "false"}, {"0.0/0.0 < 1.0", "false"},
        {"[1, 2] == [1, 2]", "true"}, {"[1, 'a'] == [1, 'b']", "false"},
        {"{'a': 1, 'b': 2} == {'b': 2, 'a': 1}", "true"}, {"dyn([1]) == dyn([1.0])", "true"},
        {"null == null", "true"}, {"dyn(null) == 0", "false"}, {"dyn('a') == 1", "false"},
        {"1 == 1.0", "COMPILE DRA_ETYPE"}, {"[1] < [2]", "COMPILE DRA_ETYPE"},
        {"1 in [1, 2]", "true"}, {"dyn(2.0) in [1, 2]", "true"}, {"'a' in {'a': 1}", "true"},
        {"'z' in m", "false"}, {"3 in l", "true"}, {"type(1) == int", "true"},
        {"type(1u) == uint", "true"}, {"type('a') == string", "true"},
        {"type(int) == type", "true"}, {"type([]) == list", "true"}, {"type({}) == map", "true"},
        {"type(null) == null_type", "true"}, {"type(1) == type(1u)", "false"},
    };
    run_cases(*state, cs, sizeof cs / sizeof cs[0], 0);
}

static void test_logic(void **state)
{
    static const tcase cs[] = {
        {"true && false", "false"}, {"false && (1 / 0 == 1)", "false"},
        {"(1 / 0 == 1) && false", "false"}, {"(1 / 0 == 1) || true", "true"},
        {"true || (1 / 0 == 1)", "true"}, {"true && (1 / 0 == 1)", "ERR division by zero"},
        {"(1 / 0 == 1) || false", "ERR division by zero"}, {"!true", "false"},
        {"true ? 1 : 2", "1"}, {"false ? 1 / 0 : 2", "2"}, {"1 > 2 || 3 > 2 && !false", "true"},
        {"dyn('cows') ? 1 : 2", "ERR no such overload"}, {"dyn(32) && false", "false"},
        {"dyn(32) || true", "true"}, {"dyn(32) && true", "ERR no such overload"},
        {"true ? (true ? 1 : 2) : 3", "1"}, {"false ? 1 : true ? 2 : 3", "2"},
        {"true ? true ? 1 : 2 : 3", "COMPILE DRA_EPARSE"},
    };
    run_cases(*state, cs, sizeof cs / sizeof cs[0], 0);
}

static void test_fields_and_index(void **state)
{
    static const tcase cs[] = {
        {"m.a", "1"}, {"m['b'].c", "\"d\""}, {"m.zz", "ERR no such key: zz"},
        {"m['b']['q']", "ERR no such key: q"}, {"has(m.a)", "true"}, {"has(m.zz)", "false"},
        {"has(m.b.c)", "true"}, {"has(m['b'].c)", "true"}, {"m.n == null", "true"},
        {"l[0]", "1"}, {"l[3]", "ERR index '3' out of range in list size '3'"},
        {"[1][dyn(0.5)]", "ERR unsupported index value 0.5 in list"},
        {"[1][dyn('a')]", "ERR unsupported index type 'string' in list"}, {"l[-1]", "ERR"},
        {"[1, 2][1u]", "2"}, {"{1: 'a'}[1u]", "\"a\""}, {"{1: 'a'}[dyn(1.0)]", "\"a\""},
        {"{'a': 1, 'a': 2}", "ERR Failed with repeated key"}, {"size(s)", "5"},
        {"s.size()", "5"}, {"size(m)", "3"}, {"size(l)", "3"},
        {"1.a", "COMPILE DRA_ETYPE"}, {"m.namespace", "ERR no such key: namespace"},
    };
    run_cases(*state, cs, sizeof cs / sizeof cs[0], 0);
}

static void test_macros(void **state)
{
    static const tcase cs[] = {
        {"l.all(i, i > 0)", "true"}, {"l.exists(i, i == 2)", "true"},
        {"l.exists_one(i, i > 1)", "false"}, {"l.map(i, i * i)", "[1, 4, 9]"},
        {"l.map(i, i > 1, i * 10)", "[20, 30]"}, {"l.filter(i, i % 2 == 1)", "[1, 3]"},
        {"m.all(k, k != '')", "true"}, {"{'a': 1}.map(k, k + k)", "[\"aa\"]"},
        {"[0, 1].exists(i, 1 / i == 1)", "true"}, {"[0, 1].all(i, 1 / i == 1)", "ERR division by zero"},
        {"[1, 0].all(i, 1 / i == 5)", "false"}, {"[0].exists_one(i, 1 / i == 1)", "ERR"},
        {"cel.bind(y, x + 1, y * y)", "64"}, {"[[1, 2], [3]].map(a, a.map(b, b + 1))", "[[2, 3], [4]]"},
        {"[1, 2].all(x, x > 0)", "true"}, {"l.all(i, j, i < j)", "true"},
        {"l.transformList(i, v, v * i)", "[0, 2, 6]"}, {"1.all(i, true)", "COMPILE DRA_ETYPE"},
        {"dyn(1).all(i, true)", "ERR"}, {"has(1)", "COMPILE DRA_EPARSE"},
        {"[1, 2, 3].map(x, [x]).exists(y, y == [2])", "true"},
    };
    run_cases(*state, cs, sizeof cs / sizeof cs[0], 0);
}

static void test_conversions(void **state)
{
    static const tcase cs[] = {
        {"int('123')", "123"}, {"int('-9223372036854775808')", "-9223372036854775808"},
        {"int('9223372036854775808')", "ERR"}, {"int(1.9)", "1"}, {"int(-1.9)", "-1"},
        {"int(9223372036854775807.0)", "ERR"}, {"int(18446744073709551615u)", "ERR"},
        {"uint(-1)", "ERR"}, {"uint(1.5)", "1u"}, {"uint('42')", "42u"},
        {"double('1e3')", "1000.0"}, {"double('1e400')", "ERR"}, {"double('0x10')", "ERR"},
        {"double(' 1')", "ERR"}, {"double('1e-400')", "0.0"},
        {"double('1_000')", "1000.0"}, {"double('1__0')", "ERR"}, {"int('1_000')", "ERR"}, {"uint(-0.1)", "ERR"}, {"double(1u)", "1.0"}, {"string(1.5)", "\"1.5\""},
        {"string(123.456e10)", "\"1.23456e+12\""}, {"string(-0.0045)", "\"-0.0045\""},
        {"string(b'\\xff')", "ERR"}, {"string(b'ab')", "\"ab\""}, {"bytes('é')", "b\"\\xc3\\xa9\""},
        {"bool('true')", "true"}, {"bool('TRUE')", "true"}, {"bool('yes')", "ERR"},
        {"string(true)", "\"true\""}, {"dyn(1)", "1"}, {"string(18446744073709551615u)",
        "\"18446744073709551615\""},
    };
    run_cases(*state, cs, sizeof cs / sizeof cs[0], 0);
}

static void test_strings_and_optionals(void **state)
{
    static const tcase cs[] = {
        {"'hello'.contains('ell')", "true"}, {"'hello'.startsWith('he')", "true"},
        {"'hello'.endsWith('lo')", "true"}, {"'hello'.matches('^h.l+o$')", "true"},
        {"matches('abc', 'b')", "true"}, {"'a'.matches('(')", "ERR"},
        {"'aaa'.matches('(a)\\\\1')", "ERR"}, {"optional.of(1).value()", "1"},
        {"optional.none().hasValue()", "false"}, {"optional.none().orValue(5)", "5"},
        {"m.?zz.orValue('none')", "\"none\""}, {"m.?b.c.value()", "\"d\""},
        {"m[?'a'].value()", "1"}, {"[1, ?optional.none(), ?optional.of(2)]", "[1, 2]"},
        {"{?'a': optional.of(1), ?'b': optional.none()}", "{\"a\": 1}"},
        {"optional.of(1).optMap(v, v + 1).value()", "2"},
        {"optional.none().value()", "ERR"}, {"l[?5].hasValue()", "false"},
    };
    run_cases(*state, cs, sizeof cs / sizeof cs[0], 0);
}

static void test_check_errors(void **state)
{
    fixture *f = *state;
    char *got = eval(f, "x + 'a'", 0);
    assert_string_equal(got, "COMPILE DRA_ETYPE: ERROR: <input>:1:3: found no matching overload "
                             "for '_+_' applied to '(int, string)'\n | x + 'a'\n | ..^");
    free(got);
    got = eval(f, "y", 0);
    assert_string_equal(got, "COMPILE DRA_ETYPE: ERROR: <input>:1:1: undeclared reference to "
                             "'y' (in container '')\n | y\n | ^");
    free(got);
    got = eval(f, "s.nosuch()", 0);
    assert_true(strstr(got, "undeclared reference to 'nosuch'") != NULL);
    free(got);
    got = eval(f, "[1, 2].map(1, 2)", 0);
    assert_true(strstr(got, "DRA_EPARSE") != NULL);
    free(got);
    got = eval(f, "(1 + ", 0);
    assert_string_equal(got, "COMPILE DRA_EPARSE: ERROR: <input>:1:6: Syntax error: unexpected "
                             "end of input\n | (1 + \n | .....^");
    free(got);
    /* Unchecked: names resolve at run time. */
    got = eval(f, "zz || true", DRA_CEL_DISABLE_CHECK);
    assert_string_equal(got, "true");
    free(got);
    got = eval(f, "zz", DRA_CEL_DISABLE_CHECK);
    assert_string_equal(got, "ERR no such attribute");
    free(got);
    got = eval(f, "has(m.a)", DRA_CEL_DISABLE_MACROS);
    assert_true(strstr(got, "COMPILE") != NULL);
    free(got);
}

static void test_nesting_limits(void **state)
{
    fixture *f = *state;
    dra_buf b;
    char *got;
    /* cel-spec requires at least 12 levels of nesting and 32 repetitions. */
    dra_buf_init(&b, NULL);
    for (int i = 0; i < 24; i++)
        dra_buf_puts(&b, "[");
    for (int i = 0; i < 24; i++)
        dra_buf_puts(&b, "]");
    got = eval(f, b.p, 0);
    assert_true(strncmp(got, "[[[", 3) == 0);
    free(got);
    dra_buf_reset(&b);
    for (int i = 0; i < 2000; i++)
        dra_buf_puts(&b, "(");
    dra_buf_puts(&b, "1");
    for (int i = 0; i < 2000; i++)
        dra_buf_puts(&b, ")");
    got = eval(f, b.p, 0);
    assert_true(strstr(got, "recursion limit") != NULL);
    free(got);
    dra_buf_reset(&b);
    dra_buf_puts(&b, "1");
    for (int i = 0; i < 100; i++)
        dra_buf_puts(&b, " + 1");
    got = eval(f, b.p, 0);
    assert_string_equal(got, "101");
    free(got);
    /* A chain as long as the input allows builds a tree that deep; the
     * parser stops it at the recursion limit instead. */
    for (int i = 0; i < 2000; i++)
        dra_buf_puts(&b, " + 1");
    got = eval(f, b.p, 0);
    assert_true(strstr(got, "recursion limit") != NULL);
    free(got);
    dra_buf_reset(&b);
    for (int i = 0; i < 5000; i++)
        dra_buf_puts(&b, "-");
    dra_buf_puts(&b, "1");
    got = eval(f, b.p, 0);
    assert_true(strcmp(got, "1") == 0 || strstr(got, "limit") != NULL);
    free(got);
    dra_buf_fini(&b);
}

static void test_cost_limits(void **state)
{
    fixture *f = *state;
    dra_buf b;
    char *got;
    const char *r100 = "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,"
                       "26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49]";
    /* Nested exists over big lists. */
    dra_buf_init(&b, NULL);
    dra_buf_printf(&b, "%s.exists(a, %s.exists(b, %s.exists(c, %s.exists(d, a + b + c + d < 0))))",
                   r100, r100, r100, r100);
    got = eval(f, b.p, 0);
    assert_string_equal(got, "ERR actual cost limit exceeded");
    free(got);
    /* String growth by repeated doubling. */
    dra_buf_reset(&b);
    dra_buf_puts(&b, "cel.bind(a, 'xxxxxxxxxxxxxxxx', ");
    for (int i = 0; i < 40; i++)
        dra_buf_printf(&b, "cel.bind(a, a + a, ");
    dra_buf_puts(&b, "size(a))");
    for (int i = 0; i < 40; i++)
        dra_buf_putc(&b, ')');
    got = eval(f, b.p, 0);
    assert_string_equal(got, "ERR actual cost limit exceeded");
    free(got);
    /* List growth stops on the memory bound, not on the host. */
    dra_buf_reset(&b);
    dra_buf_puts(&b, "cel.bind(a, [1, 2, 3, 4, 5, 6, 7, 8], ");
    for (int i = 0; i < 60; i++)
        dra_buf_printf(&b, "cel.bind(a, a + a, ");
    dra_buf_puts(&b, "size(a))");
    for (int i = 0; i < 60; i++)
        dra_buf_putc(&b, ')');
    got = eval(f, b.p, 0);
    assert_true(strncmp(got, "ERR", 3) == 0);
    free(got);
    dra_buf_fini(&b);
}

static void test_failmalloc(void **state)
{
    const char *e = "[1, 2, 3].map(i, string(i) + 'x').exists(v, v.startsWith('2')) && "
                    "{'a': [1.5]}.a[0] > 1 && optional.of('q').orValue('') == 'q'";
    (void)state;
    for (long n = 0; n < 5000; n++) {
        dra_failmem fm;
        dra_cel_env *env = NULL;
        dra_cel_program *p = NULL;
        dra_cel_vm *vm = NULL;
        dra_buf out;
        dra_err rc;
        dra_failmem_init(&fm, n);
        dra_buf_init(&out, NULL);
        rc = dra_cel_env_new_std(&fm.mem, NULL, &env);
        if (!rc)
            rc = dra_cel_compile(env, e, strlen(e), &p, NULL);
        if (!rc)
            rc = dra_cel_vm_new(&fm.mem, &vm);
        if (!rc)
            rc = dra_cel_eval_json(p, vm, NULL, &out, NULL);
        dra_cel_program_unref(p);
        dra_cel_vm_free(vm);
        dra_cel_env_free(env);
        assert_int_equal(fm.live, 0);
        if (!fm.failed) {
            assert_int_equal(rc, DRA_OK);
            assert_string_equal(out.p, "true");
            dra_buf_fini(&out);
            return;
        }
        dra_buf_fini(&out);
        if (rc != DRA_ENOMEM && rc != DRA_EEVAL)
            fail_msg("allocation %ld: %s", n, dra_errname(rc));
    }
    fail_msg("failmalloc loop did not finish");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals),      cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_comparisons),   cmocka_unit_test(test_logic),
        cmocka_unit_test(test_fields_and_index), cmocka_unit_test(test_macros),
        cmocka_unit_test(test_conversions),   cmocka_unit_test(test_strings_and_optionals),
        cmocka_unit_test(test_check_errors),  cmocka_unit_test(test_nesting_limits),
        cmocka_unit_test(test_cost_limits),   cmocka_unit_test(test_failmalloc),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
