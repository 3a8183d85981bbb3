/* Differential test: our JSON decoder against jansson (the JSON library
 * the project ships with) on thousands of mutated DRA documents. Both
 * must accept and reject the same texts, and accepted texts must decode
 * to the same values. Known, intended differences are skipped: integers
 * beyond int64 (jansson refuses them, we keep their text) and nesting
 * between our limit (256) and jansson's (2048). */
#include <jansson.h>
#include <math.h>

#include "dra_test.h"
#include "dra/codec.h"

static int same(const dra_doc *d, json_t *j)
{
    switch (d->kind) {
    case DRA_DOC_NULL:
        return json_is_null(j);
    case DRA_DOC_BOOL:
        return json_is_boolean(j) && !d->u.b == !json_is_true(j);
    case DRA_DOC_INT:
        return json_is_integer(j) && json_integer_value(j) == d->u.i;
    case DRA_DOC_FLOAT:
        return json_is_real(j) && json_real_value(j) == d->u.f.f;
    case DRA_DOC_STRING:
        return json_is_string(j) && json_string_length(j) == d->u.str.len &&
               memcmp(json_string_value(j), d->u.str.s, d->u.str.len) == 0;
    case DRA_DOC_LIST:
        if (!json_is_array(j) || json_array_size(j) != d->u.list.n)
            return 0;
        for (size_t i = 0; i < d->u.list.n; i++)
            if (!same(d->u.list.items[i], json_array_get(j, i)))
                return 0;
        return 1;
    case DRA_DOC_MAP: {
        size_t i = 0;
        const char *key;
        json_t *v;
        if (!json_is_object(j) || json_object_size(j) != d->u.map.n)
            return 0;
        /* jansson iterates in insertion order: member order must agree. */
        json_object_foreach(j, key, v) {
            if (strcmp(key, d->u.map.m[i].key) != 0 || !same(d->u.map.m[i].val, v))
                return 0;
            i++;
        }
        return 1;
    }
    }
    return 0;
}

/* Our decoder accepted a number jansson cannot hold. */
static int has_big_int(const dra_doc *d)
{
    switch (d->kind) {
    case DRA_DOC_FLOAT:
        return d->u.f.num && !strpbrk(d->u.f.num, ".eE");
    case DRA_DOC_LIST:
        for (size_t i = 0; i < d->u.list.n; i++)
            if (has_big_int(d->u.list.items[i]))
                return 1;
        return 0;
    case DRA_DOC_MAP:
        for (size_t i = 0; i < d->u.map.n; i++)
            if (has_big_int(d->u.map.m[i].val))
                return 1;
        return 0;
    default:
        return 0;
    }
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char pieces[][8] = {
    "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\ud800", "0", "-", "1e", ".",
    "e+", "true", "nul", "\xc3", "\xa9", "\xff", " ", "\n", "\t", "\x01", "9999999",
};

static void mutate(char *buf, size_t *len, size_t cap)
{
    int n = 1 + (int)(next() % 4);
    for (int k = 0; k < n && *len > 0; k++) {
        size_t at = next() % *len;
        switch (next() % 3) {
        case 0: /* delete a few bytes */
        {
            size_t del = 1 + next() % 3;
            if (at + del > *len)
                del = *len - at;
            memmove(buf + at, buf + at + del, *len - at - del);
            *len -= del;
            break;
        }
        case 1: /* insert a JSON-ish piece */
        {
            const char *p = pieces[next() % (sizeof pieces / sizeof pieces[0])];
            size_t pl = strlen(p);
            if (*len + pl >= cap)
                break;
            memmove(buf + at + pl, buf + at, *len - at);
            memcpy(buf + at, p, pl);
            *len += pl;
            break;
        }
        default: /* overwrite one byte */
            buf[at] = (char)(next() & 0xFF);
        }
    }
}

static void test_differential(void **state)
{
    static const char *const files[] = {"resourceslice.json", "resourceclaim.json", "style.json"};
    long agree_ok = 0, agree_err = 0, skipped = 0;
    (void)state;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[512], *seed, *buf;
        size_t seedlen;
        snprintf(path, sizeof path, "%s/codec/%s", DRA_TEST_DATA, files[f]);
        seed = dra_test_slurp(path, &seedlen);
        buf = malloc(seedlen + 256);
        assert_non_null(buf);
        for (int round = 0; round < 4000; round++) {
            size_t len = seedlen;
            dra_arena a;
            dra_doc *d = NULL;
            json_t *j;
            json_error_t jerr;
            dra_err err;
            memcpy(buf, seed, seedlen);
            if (round)
                mutate(buf, &len, seedlen + 256);
            dra_arena_init(&a, NULL);
            err = dra_doc_parse_json(&a, buf, len, &d, NULL);
            j = json_loadb(buf, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
                           &jerr);
            if (err == DRA_OK && has_big_int(d)) {
                skipped++;
            } else if (err == DRA_OK) {
                if (!j)
                    fail_msg("%s round %d: jansson rejects (%s) what we accept:\n%.*s", files[f],
                             round, jerr.text, (int)len, buf);
                if (!same(d, j))
                    fail_msg("%s round %d: values differ:\n%.*s", files[f], round, (int)len, buf);
                agree_ok++;
            } else {
                if (j)
                    fail_msg("%s round %d: we reject (%s) what jansson accepts:\n%.*s", files[f],
                             round, dra_errname(err), (int)len, buf);
                agree_err++;
            }
            json_decref(j);
            dra_arena_fini(&a);
        }
        free(buf);
        free(seed);
    }
    print_message("jansson agrees: %ld accepted, %ld rejected, %ld big-int skips\n", agree_ok,
                  agree_err, skipped);
    assert_true(agree_ok > 100 && agree_err > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
