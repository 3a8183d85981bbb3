/* The allocator scenario table: every .yaml file in tests/data/alloc (see
 * alloc_table.c for the format), through the API adapter and the real CEL
 * engine. */
#include <dirent.h>

#include "dra_test.h"

#include "alloc_table.h"

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static void test_table(void **state)
{
    const char *dir = DRA_TEST_DATA "/alloc";
    char *files[256];
    size_t nf = 0, count = 0;
    int failed = 0;
    struct dirent *e;
    DIR *dp = opendir(dir);
    (void)state;
    assert_non_null(dp);
    while ((e = readdir(dp)) && nf < 256) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".yaml") == 0) {
            files[nf] = malloc(strlen(dir) + l + 2);
            sprintf(files[nf++], "%s/%s", dir, e->d_name);
        }
    }
    closedir(dp);
    qsort(files, nf, sizeof *files, cmp_str);
    for (size_t i = 0; i < nf; i++) {
        failed += alloc_table_run_file(files[i], &count);
        free(files[i]);
    }
    print_message("%zu scenarios, %d failed\n", count, failed);
    assert_int_equal(failed, 0);
    assert_true(count >= 80);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
