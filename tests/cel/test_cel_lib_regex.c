/* Tests for the RE2-over-PCRE2 layer (src/cel/lib_regex.c): Go's syntax
 * errors, rejection of non-RE2 constructs, RE2 semantics PCRE2 would read
 * differently, resource limits on hostile patterns, allocation failure. */
#include <time.h>

#include "dra_test.h"

#include "cel/lib_regex.h"

static int search(const char *pat, const char *s, long *m0, long *m1)
{
    lib_re *re = NULL;
    lib_re_md *md = NULL;
    long ov[4] = {-9, -9, -9, -9};
    int r;
    dra_buf why;
    dra_buf_init(&why, NULL);
    if (lib_re_compile(NULL, pat, strlen(pat), &re, &why) != DRA_OK)
        fail_msg("compile %s: %s", pat, why.p ? why.p : "?");
    assert_int_equal(lib_re_md_new(NULL, &md), DRA_OK);
    r = lib_re_search(re, md, s, strlen(s), 0, 0, ov, 4, &why);
    if (m0)
        *m0 = ov[0];
    if (m1)
        *m1 = ov[1];
    lib_re_md_free(md);
    lib_re_free(re);
    dra_buf_fini(&why);
    return r;
}

static void test_errors(void **state)
{
    static const struct {
        const char *pat, *msg;
    } cases[] = {
        {"[", "error parsing regexp: missing closing ]: `[`"},
        {"a[bc", "error parsing regexp: missing closing ]: `[bc`"},
        {"(a", "error parsing regexp: missing closing ): `(a`"},
        {"a)", "error parsing regexp: unexpected ): `a)`"},
        {"*a", "error parsing regexp: missing argument to repetition operator: `*`"},
        {"a**", "error parsing regexp: invalid nested repetition operator: `**`"},
        {"a*+", "error parsing regexp: invalid nested repetition operator: `*+`"},
        {"a++", "error parsing regexp: invalid nested repetition operator: `++`"},
        {"a{2}{3}", "error parsing regexp: invalid nested repetition operator: `{2}{3}`"},
        {"a{2,1}", "error parsing regexp: invalid repeat count: `{2,1}`"},
        {"a{1001}", "error parsing regexp: invalid repeat count: `{1001}`"},
        {"(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"},
        {"\\8", "error parsing regexp: invalid escape sequence: `\\8`"},
        {"\\q", "error parsing regexp: invalid escape sequence: `\\q`"},
        {"\\k<a>", "error parsing regexp: invalid escape sequence: `\\k`"},
        {"\\Z", "error parsing regexp: invalid escape sequence: `\\Z`"},
        {"\\C", "error parsing regexp: invalid escape sequence: `\\C`"},
        {"a\\", "error parsing regexp: trailing backslash at end of expression: ``"},
        {"(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"},
        {"(?!a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?!`"},
        {"(?<=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?<`"},
        {"(?>a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?>`"},
        {"(?x)a", "error parsing regexp: invalid or unsupported Perl syntax: `(?x`"},
        {"(?#c)", "error parsing regexp: invalid or unsupported Perl syntax: `(?#`"},
        {"(?R)", "error parsing regexp: invalid or unsupported Perl syntax: `(?R`"},
        {"(?)", "error parsing regexp: invalid or unsupported Perl syntax: `(?)`"},
        {"(?P<>a)", "error parsing regexp: invalid named capture: `(?P<>`"},
        {"(?P<a-b>x)", "error parsing regexp: invalid named capture: `(?P<a-b>`"},
        {"[z-a]", "error parsing regexp: invalid character class range: `z-a`"},
        {"[[:foo:]]", "error parsing regexp: invalid character class range: `[:foo:]`"},
        {"\\x{110000}", "error parsing regexp: invalid escape sequence: `\\x{110000}`"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lib_re *re = NULL;
        dra_buf why;
        dra_buf_init(&why, NULL);
        if (lib_re_compile(NULL, cases[i].pat, strlen(cases[i].pat), &re, &why) !=
            DRA_EPARSE)
            fail_msg("%s: compiled", cases[i].pat);
        assert_null(re);
        assert_string_equal(why.p, cases[i].msg);
        dra_buf_fini(&why);
    }
}

static void test_semantics(void **state)
{
    static const struct {
        const char *pat, *s;
        int match;
        long m0, m1;
    } cases[] = {
        {"a.c", "xxabc", 1, 2, 5},
        {"^abc$", "abc\n", 0, 0, 0},        /* $ is end of text */
        {"(?m)^abc$", "abc\n", 1, 0, 3},
        {"a.c", "a\nc", 0, 0, 0},           /* . excludes \n */
        {"(?s)a.c", "a\nc", 1, 0, 3},
        {"\\s", "\v", 0, 0, 0},              /* RE2 \s has no \v */
        {"[\\s]", "\v", 0, 0, 0},
        {"[\\S]", "\v", 1, 0, 1},
        {"\\S", "\v", 1, 0, 1},
        {"\\v", "\v", 1, 0, 1},
        {"\\d+", "ab١٢3", 1, 6, 7},        /* \d is ASCII only */
        {"\\101", "A", 1, 0, 1},            /* octal */
        {"\\x41\\x{42}", "AB", 1, 0, 2},
        {"a{,2}", "a{,2}", 1, 0, 5},         /* not a repeat in RE2 */
        {"a{2}", "aaa", 1, 0, 2},
        {"x{2,}", "xxxx", 1, 0, 4},
        {"[]a]+", "]a]", 1, 0, 3},
        {"[^]a]", "]ab", 1, 2, 3},
        {"[a-]+", "-a-", 1, 0, 3},
        {"[[]", "[", 1, 0, 1},
        {"[[:alpha:]]+", "12ab3", 1, 2, 4},
        {"[[:^digit:]]", "1a", 1, 1, 2},
        {"\\pL+", "1日本2", 1, 1, 7},
        {"\\p{Greek}", "aβ", 1, 1, 3},
        {"(?i)straße", "STRAßE", 1, 0, 7},
        {"(?P<n>a)(?<m>b)", "ab", 1, 0, 2},
        {"a*?b", "aab", 1, 0, 3},
        {"(?U)a+", "aaa", 1, 0, 1},
        {"\\Qa.b\\E", "a.b", 1, 0, 3},
        {"\\Qa.b\\E", "axb", 0, 0, 0},
        {"\\Qab\\E+", "abbb", 1, 0, 4},
        {"#", "a#", 1, 1, 2},
        {"a b", "a b", 1, 0, 3},
        {"\\.", "a.", 1, 1, 2},
        {"日", "本日", 1, 3, 6},
        {"", "abc", 1, 0, 0},
        {"a|", "b", 1, 0, 0},
        {"^0000:0[0-9]:", "0000:03:00.0", 1, 0, 8},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long m0, m1;
        int r = search(cases[i].pat, cases[i].s, &m0, &m1);
        if (r != cases[i].match)
            fail_msg("%s on %s: got %d", cases[i].pat, cases[i].s, r);
        if (r == 1 && (m0 != cases[i].m0 || m1 != cases[i].m1))
            fail_msg("%s on %s: [%ld,%ld)", cases[i].pat, cases[i].s, m0, m1);
    }
}

static void test_hostile(void **state)
{
    static const char *const pats[] = {"(a*)*b", "(a|a)*b", "(a+)+b",
                                       "(.*a){12}", "(a|aa)*c", "((a*)*)*b"};
    size_t n = 100000;
    char *s = malloc(n + 1);
    (void)state;
    memset(s, 'a', n);
    s[n] = '\0';
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
        lib_re *re = NULL;
        lib_re_md *md = NULL;
        long ov[2];
        dra_buf why;
        clock_t t0 = clock();
        int r;
        dra_buf_init(&why, NULL);
        assert_int_equal(lib_re_compile(NULL, pats[i], strlen(pats[i]), &re, &why), DRA_OK);
        assert_int_equal(lib_re_md_new(NULL, &md), DRA_OK);
        r = lib_re_search(re, md, s, n, 0, 0, ov, 2, &why);
        /* A match, no match, or a limit error: but fast. */
        assert_true(r == 0 || r == 1 || (r == -1 && why.p &&
                                         strstr(why.p, "resource limit")));
        assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0);
        lib_re_md_free(md);
        lib_re_free(re);
        dra_buf_fini(&why);
    }
    free(s);
}

static void test_failmalloc(void **state)
{
    (void)state;
    for (long k = 0;; k++) {
        dra_failmem fm;
        lib_re *re = NULL;
        lib_re_md *md = NULL;
        dra_err e;
        dra_failmem_init(&fm, k);
        e = lib_re_compile(&fm.mem, "(a|b)+[c-e]\\d", 13, &re, NULL);
        if (e == DRA_OK)
            e = lib_re_md_new(&fm.mem, &md);
        if (e == DRA_OK) {
            /* The interpreter (no JIT, e.g. under valgrind) allocates its
             * frame vector on the first search: that can fail too. */
            long ov[2];
            int r = lib_re_search(re, md, "xxabd1", 6, 0, 0, ov, 2, NULL);
            lib_re_md_free(md);
            lib_re_free(re);
            assert_int_equal(fm.live, 0);
            if (r == -1 && fm.failed)
                continue;
            assert_int_equal(r, 1);
            assert_int_equal(ov[0], 2);
            break;
        }
        assert_int_equal(e, DRA_ENOMEM);
        lib_re_free(re);
        assert_int_equal(fm.live, 0);
        assert_true(k < 1000);
    }
}

/* Random patterns over RE2's metacharacters: the translator either rejects
 * them with a message or hands PCRE2 something it compiles (or rejects
 * with a message); searches stay in bounds. ASan/UBSan check the rest. */
static void test_random_patterns(void **state)
{
    static const char *const atoms[] = {
        "a", "b", ".", "*", "+", "?", "{", "}", "{2}", "{1,3}", "{,2}", "(", ")", "(?:",
        "(?i)", "(?P<n>", "(?=", "[", "]", "[^", "-", "^", "$", "|", "\\", "\\d", "\\s",
        "\\S", "\\b", "\\x4", "\\x{1F600}", "\\1", "\\p{Greek}", "\\pL", "\\Q", "\\E",
        "[:alpha:]", "\\0", "\\777", "\xc3\xa9", "\\z", "\\A", ":", ",", "0", "9",
        "\xff", "\xc3", "\\\xc3", "[\xe6\x97"};
    uint32_t seed = 7;
    int compiled = 0;
    lib_re_md *md = NULL;
    (void)state;
    assert_int_equal(lib_re_md_new(NULL, &md), DRA_OK);
    for (int round = 0; round < 20000; round++) {
        char pat[128];
        size_t n = 0;
        int k;
        lib_re *re = NULL;
        dra_buf why;
        dra_err e;
        seed = seed * 1103515245u + 12345u;
        k = 1 + (int)((seed >> 16) % 8);
        for (int j = 0; j < k; j++) {
            const char *a;
            seed = seed * 1103515245u + 12345u;
            a = atoms[(seed >> 16) % (sizeof atoms / sizeof atoms[0])];
            if (n + strlen(a) >= sizeof pat)
                break;
            memcpy(pat + n, a, strlen(a));
            n += strlen(a);
        }
        dra_buf_init(&why, NULL);
        e = lib_re_compile(NULL, pat, n, &re, &why);
        if (e == DRA_OK) {
            long ov[4];
            compiled++;
            (void)lib_re_search(re, md, "ab\xc3\xa9 a1-]b", 10, 0, 0, ov, 4, NULL);
            (void)lib_re_search(re, md, "ab\xc3\xa9 a1-]b", 10, 2, 1, ov, 4, NULL);
        } else {
            assert_int_equal(e, DRA_EPARSE);
            assert_non_null(why.p);
            assert_true(strncmp(why.p, "error parsing regexp: ", 22) == 0);
        }
        lib_re_free(re);
        dra_buf_fini(&why);
    }
    assert_true(compiled > 1000);
    lib_re_md_free(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_semantics),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_failmalloc),
        cmocka_unit_test(test_random_patterns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
