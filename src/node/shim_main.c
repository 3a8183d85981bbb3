/*
 * shim_main.c: the dra-shim program (see shim.c): one per running
 * container, started by the node agent's runtime, outliving drad.
 */
#include <stdio.h>
#include <string.h>

#include "node_int.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "run") == 0)
        return node_shim_run(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "init") == 0)
        return node_shim_init(argc, argv);
    fprintf(stderr, "usage: dra-shim run DIR SYNCFD\n"
                    "       dra-shim init ERRFD CFGFD CWD -- COMMAND [ARG...]\n"
                    "dra-shim is started by drad's node agent; it is not meant to be run by hand.\n");
    return 2;
}
