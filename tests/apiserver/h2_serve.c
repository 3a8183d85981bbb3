/* A store, an API server and its HTTP/2 front end on 127.0.0.1 for the
 * curl and kubectl script test (h2_curl_kubectl.sh): serves from the
 * directory argv[1] (state.db, pki/), prints "PORT\n" once listening,
 * and stops cleanly on SIGTERM or SIGINT. Test-only. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dra/apiserver.h"
#include "dra/store.h"

static int serve(const char *dir, dra_diag *d)
{
    char path[1024];
    dra_store *store = NULL;
    dra_apiserver *srv = NULL;
    dra_apiserver_creds cr;
    dra_apiserver_h2 *h2 = NULL;
    dra_apiserver_opts o;
    dra_apiserver_http_opts ho;
    sigset_t set;
    int sig, rc = 1;
    memset(&cr, 0, sizeof cr);
    snprintf(path, sizeof path, "%s/state.db", dir);
    if (dra_store_open(path, NULL, NULL, &store, d))
        return 1;
    memset(&o, 0, sizeof o);
    o.store = store;
    if (dra_apiserver_new(&o, NULL, &srv, d))
        goto out;
    snprintf(path, sizeof path, "%s/pki", dir);
    mkdir(path, 0700);
    if (dra_apiserver_creds_load(path, NULL, &cr, d))
        goto out;
    memset(&ho, 0, sizeof ho);
    ho.host = "127.0.0.1";
    ho.creds = &cr;
    /* Signals are taken by sigwait below, not by the server's threads. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (dra_apiserver_h2_start(srv, &ho, &h2, d))
        goto out;
    printf("%d\n", dra_apiserver_h2_port(h2));
    fflush(stdout);
    sigwait(&set, &sig);
    rc = 0;
out:
    dra_apiserver_h2_stop(h2);
    dra_apiserver_creds_fini(&cr);
    dra_apiserver_free(srv);
    dra_store_close(store);
    return rc;
}

int main(int argc, char **argv)
{
    dra_diag d;
    int rc;
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    dra_diag_init(&d, NULL);
    rc = serve(argv[1], &d);
    if (rc)
        fprintf(stderr, "%s: %s\n", argv[0],
                dra_diag_first(&d) ? dra_diag_first(&d) : "failed");
    dra_diag_fini(&d);
    return rc;
}
