/* h2_nocurl: a program holding only the config loader and the HTTP/2
 * transport, as the GPU plugin will. Its ldd output must not name
 * libcurl (test_kube_h2_nocurl); run, it makes a cluster (no dial) from
 * an in-memory config and frees it. */
#include <stdio.h>

#include "dra/kube.h"

int main(void)
{
    dra_kube_config cfg;
    dra_cluster *c = NULL;
    dra_err err;
    dra_kube_config_init(&cfg, NULL);
    cfg.server = "https://127.0.0.1:1";
    cfg.insecure = 1;
    err = dra_kube_h2_cluster_new(&cfg, NULL, &c, NULL);
    dra_cluster_free(c);
    dra_kube_config_fini(&cfg);
    if (err) {
        fprintf(stderr, "h2_nocurl: %s\n", dra_strerror(err));
        return 1;
    }
    return 0;
}
