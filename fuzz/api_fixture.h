/* fuzz/api_fixture.h: the store and API server the apiserver fuzzers
 * share across inputs, in a temporary directory removed at exit. A
 * fuzzer target is one file, so this is a header of static functions. */
#ifndef DRA_FUZZ_API_FIXTURE_H
#define DRA_FUZZ_API_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/apiserver.h"
#include "dra/store.h"

typedef struct fuzz_api {
    dra_store *store;
    dra_apiserver *srv;
    char dir[64];
} fuzz_api;

/* Opens a store under /tmp/dra-fuzz-|tag|-XXXXXX and a server over it
 * with |o| (its store filled in here); aborts on failure. */
static void fuzz_api_open(fuzz_api *f, const char *tag, dra_apiserver_opts *o)
{
    char db[128];
    dra_store_opts so;
    snprintf(f->dir, sizeof f->dir, "/tmp/dra-fuzz-%s-XXXXXX", tag);
    if (!mkdtemp(f->dir))
        abort();
    snprintf(db, sizeof db, "%s/state.db", f->dir);
    memset(&so, 0, sizeof so);
    /* No fsync: durability is not what is fuzzed, speed is needed. */
    so.unsafe_nosync = 1;
    so.history_min_bytes = 1u << 20;
    so.history_max_events = 4096;
    if (dra_store_open(db, &so, NULL, &f->store, NULL))
        abort();
    o->store = f->store;
    if (dra_apiserver_new(o, NULL, &f->srv, NULL))
        abort();
}

static void fuzz_api_close(fuzz_api *f)
{
    char cmd[128];
    dra_apiserver_free(f->srv);
    dra_store_close(f->store);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd))
        fprintf(stderr, "could not remove %s\n", f->dir);
}

#endif
