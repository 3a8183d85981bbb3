/* A store in a fresh temporary directory, for the store's tests. */
#ifndef DRA_TEST_STORE_FIXTURE_H
#define DRA_TEST_STORE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "dra_test.h"
#include "dra/store.h"

typedef struct tdir {
    char dir[256];
    char db[300];
} tdir;

static void tdir_make(tdir *t)
{
    snprintf(t->dir, sizeof t->dir, "/tmp/dra-store-XXXXXX");
    assert_non_null(mkdtemp(t->dir));
    snprintf(t->db, sizeof t->db, "%s/state.db", t->dir);
}

static void tdir_rm(tdir *t)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
    assert_int_equal(system(cmd), 0);
}

static dra_store *open_store(const tdir *t, const dra_store_opts *o)
{
    dra_store *s = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_err e = dra_store_open(t->db, o, NULL, &s, &d);
    if (e)
        fail_msg("open: %s: %s", dra_strerror(e),
                 dra_diag_first(&d) ? dra_diag_first(&d) : "");
    dra_diag_fini(&d);
    return s;
}

#endif
