/*
 * dra-gpu-plugin: the NVIDIA GPU DRA kubelet plugin (driver
 * gpu.nvidia.com), with the flags, environment variables and defaults
 * of NVIDIA's gpu-kubelet-plugin so that its DaemonSet settings carry
 * over. Parses the command line, connects to the API server (kubeconfig
 * or in-cluster), runs the plugin until SIGHUP/SIGINT/SIGTERM/SIGQUIT.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "dra/kube.h"
#include "dra/plugin.h"

#define PROG "dra-gpu-plugin"

typedef struct flag {
    const char *name;  /* without dashes */
    const char *alias; /* or NULL */
    const char *env;   /* first environment variable */
    const char *env2;  /* second one, or NULL */
    const char *def;   /* default, or NULL */
    const char *usage;
    int is_bool;
    const char *value; /* resolved */
} flag;

/* ORDER flags: indices used by run() below. */
enum {
    F_NODE_NAME, F_NAMESPACE, F_CDI_ROOT, F_DRIVER_ROOT, F_CTR_DRIVER_ROOT, F_HOOK,
    F_IMAGE, F_REGISTRAR, F_PLUGINS, F_HEALTH_PORT, F_HEALTH_ADDR, F_XIDS, F_GATES,
    F_KUBECONFIG, F_QPS, F_BURST, F_VERBOSITY, F_REMOVE_ON_EXIT, F_CLEANUP, F_N
};

static flag flags[F_N] = {
    {"node-name", NULL, "NODE_NAME", NULL, NULL, "The name of the node to be worked on.", 0, NULL},
    {"namespace", NULL, "NAMESPACE", NULL, "default", "The namespace used for the custom resources.", 0, NULL},
    {"cdi-root", NULL, "CDI_ROOT", NULL, "/etc/cdi",
     "Absolute path to the directory where CDI files will be generated.", 0, NULL},
    {"nvidia-driver-root", "host_driver-root", "NVIDIA_DRIVER_ROOT", "HOST_DRIVER_ROOT", "/",
     "the root path for the NVIDIA driver installation on the host (typical values are '/' "
     "or '/run/nvidia/driver')", 0, NULL},
    {"container-driver-root", NULL, "DRIVER_ROOT_CTR_PATH", NULL, NULL,
     "the path where the NVIDIA driver root is mounted in the container (default "
     "/driver-root when it exists, else the --nvidia-driver-root)", 0, NULL},
    {"nvidia-cdi-hook-path", NULL, "NVIDIA_CDI_HOOK_PATH", NULL, NULL,
     "Absolute path to the nvidia-cdi-hook executable in the host file system.", 0, NULL},
    {"image-name", NULL, "IMAGE_NAME", NULL, NULL,
     "The full image name (accepted for NVIDIA compatibility; MPS daemons run as "
     "processes here).", 0, NULL},
    {"kubelet-registrar-directory-path", NULL, "KUBELET_REGISTRAR_DIRECTORY_PATH", NULL,
     "/var/lib/kubelet/plugins_registry",
     "Absolute path to the directory where kubelet stores plugin registrations.", 0, NULL},
    {"kubelet-plugins-directory-path", NULL, "KUBELET_PLUGINS_DIRECTORY_PATH", NULL,
     "/var/lib/kubelet/plugins", "Absolute path to the directory where kubelet stores plugin data.",
     0, NULL},
    {"healthcheck-port", NULL, "HEALTHCHECK_PORT", NULL, "-1",
     "Port to start a gRPC healthcheck service. When positive, a literal port number. When "
     "zero, a random port is allocated. When negative, the healthcheck service is disabled.", 0,
     NULL},
    {"healthcheck-address", NULL, "HEALTHCHECK_ADDRESS", NULL, "",
     "Address the healthcheck service listens on (default: all interfaces).", 0, NULL},
    {"additional-xids-to-ignore", NULL, "ADDITIONAL_XIDS_TO_IGNORE", NULL, "",
     "A comma-separated list of additional XIDs to ignore.", 0, NULL},
    {"feature-gates", NULL, "FEATURE_GATES", NULL, "",
     "A set of key=value pairs that describe feature gates (TimeSlicingSettings, MPSSupport, "
     "PassthroughSupport, DynamicMIG, NVMLDeviceHealthCheck, DRADeviceTaints, ...).", 0, NULL},
    {"kubeconfig", NULL, "KUBECONFIG", NULL, NULL,
     "Absolute path to the KUBECONFIG file. Either this flag or the KUBECONFIG env variable "
     "need to be set if the driver is being run out of cluster.", 0, NULL},
    {"kube-api-qps", NULL, "KUBE_API_QPS", NULL, "5",
     "QPS to use while communicating with the Kubernetes apiserver.", 0, NULL},
    {"kube-api-burst", NULL, "KUBE_API_BURST", NULL, "10",
     "Burst to use while communicating with the Kubernetes apiserver.", 0, NULL},
    {"v", NULL, "LOG_VERBOSITY", NULL, "0", "Log verbosity (accepted; logging is terse).", 0, NULL},
    {"remove-slices-on-exit", NULL, "REMOVE_SLICES_ON_EXIT", NULL, "false",
     "Delete this node's ResourceSlices when stopping (uninstall).", 1, NULL},
    {"cleanup", NULL, NULL, NULL, "false",
     "Delete this node's ResourceSlices, then exit (uninstall).", 1, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: %s [flags]\n\n%s implements a DRA driver plugin for NVIDIA GPUs.\n\n",
            PROG, PROG);
    for (int i = 0; i < F_N; i++) {
        fprintf(f, "  --%s%s%s%s\n        %s", flags[i].name, flags[i].alias ? ", --" : "",
                flags[i].alias ? flags[i].alias : "", flags[i].is_bool ? "" : " value",
                flags[i].usage);
        if (flags[i].def && *flags[i].def)
            fprintf(f, " (default: %s)", flags[i].def);
        if (flags[i].env)
            fprintf(f, " [$%s%s%s]", flags[i].env, flags[i].env2 ? ", $" : "",
                    flags[i].env2 ? flags[i].env2 : "");
        fputc('\n', f);
    }
}

static flag *find_flag(const char *name, size_t len)
{
    for (int i = 0; i < F_N; i++) {
        const char *names[2] = {flags[i].name, flags[i].alias};
        for (int k = 0; k < 2; k++)
            if (names[k] && strlen(names[k]) == len && strncmp(names[k], name, len) == 0)
                return &flags[i];
    }
    return NULL;
}

static int is_true(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcmp(v, "t"));
}

/* Command line first, then the environment, then the default. */
static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--version")) {
            printf("%s version 0.1.0 (driver %s)\n", PROG, DRA_PLUGIN_DRIVER);
            exit(0);
        }
        if (a[0] != '-') {
            fprintf(stderr, "%s: arguments not supported: %s\n", PROG, a);
            return -1;
        }
        a += a[1] == '-' ? 2 : 1;
        const char *eq = strchr(a, '=');
        flag *f = find_flag(a, eq ? (size_t)(eq - a) : strlen(a));
        if (!f) {
            fprintf(stderr, "%s: flag provided but not defined: -%s\n", PROG, a);
            return -1;
        }
        if (eq)
            f->value = eq + 1;
        else if (f->is_bool)
            f->value = "true";
        else if (i + 1 < argc)
            f->value = argv[++i];
        else {
            fprintf(stderr, "%s: flag needs an argument: -%s\n", PROG, a);
            return -1;
        }
    }
    for (int i = 0; i < F_N; i++) {
        if (flags[i].value)
            continue;
        const char *e = flags[i].env ? getenv(flags[i].env) : NULL;
        if ((!e || !*e) && flags[i].env2)
            e = getenv(flags[i].env2);
        flags[i].value = e && *e ? e : flags[i].def;
    }
    return 0;
}

static void log_line(void *ud, const char *msg)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char t[32];
    strftime(t, sizeof(t), "%H:%M:%S", &tm);
    fprintf(stderr, "%s.%06ld %s: %s\n", t, ts.tv_nsec / 1000, PROG, msg);
}

static int fail_diag(const char *what, dra_err e, const dra_diag *d)
{
    fprintf(stderr, "%s: %s: %s\n", PROG, what,
            dra_diag_first(d) ? dra_diag_first(d) : dra_strerror(e));
    return 1;
}

/* The API server: --kubeconfig / $KUBECONFIG, else in-cluster, else
 * ~/.kube/config (kubectl's order), over HTTP/2 as client-go speaks to
 * kube-apiserver (drad serves it on the port of DIR/kubeconfig-h2). */
static dra_err connect_cluster(dra_cluster **out, dra_diag *d)
{
    dra_kube_config cfg;
    const char *path = flags[F_KUBECONFIG].value;
    dra_err e;
    if (!path && getenv("KUBERNETES_SERVICE_HOST"))
        e = dra_kube_config_in_cluster(&cfg, NULL, NULL, d);
    else
        e = dra_kube_config_load(&cfg, path, NULL, NULL, d);
    if (e == DRA_OK) {
        cfg.qps = atof(flags[F_QPS].value);
        cfg.burst = atoi(flags[F_BURST].value);
        e = dra_kube_h2_cluster_new(&cfg, NULL, out, d);
    }
    dra_kube_config_fini(&cfg);
    return e;
}

static int run(void)
{
    dra_plugin_opts o;
    dra_plugin_opts_default(&o);
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (!flags[F_NODE_NAME].value || !*flags[F_NODE_NAME].value) {
        fprintf(stderr, "%s: Required flag \"node-name\" not set\n", PROG);
        return 1;
    }
    dra_err e = dra_plugin_gates_parse(&o.gates, flags[F_GATES].value, &d);
    if (e != DRA_OK)
        return fail_diag("invalid --feature-gates", e, &d);
    char *end;
    long port = strtol(flags[F_HEALTH_PORT].value, &end, 10);
    if (*end || port > 65535) {
        fprintf(stderr, "%s: invalid value \"%s\" for flag -healthcheck-port\n", PROG,
                flags[F_HEALTH_PORT].value);
        return 1;
    }
    o.node_name = flags[F_NODE_NAME].value;
    o.namespace_ = flags[F_NAMESPACE].value;
    o.cdi_root = flags[F_CDI_ROOT].value;
    o.nvidia_driver_root = flags[F_DRIVER_ROOT].value;
    o.container_driver_root = flags[F_CTR_DRIVER_ROOT].value;
    o.nvidia_cdi_hook_path = flags[F_HOOK].value;
    o.registrar_dir = flags[F_REGISTRAR].value;
    o.plugins_dir = flags[F_PLUGINS].value;
    o.healthcheck_port = (int)port;
    o.healthcheck_host = flags[F_HEALTH_ADDR].value;
    o.additional_xids_to_ignore = flags[F_XIDS].value;
    o.log = log_line;
    /* A test hook, not a flag: see dra_plugin_opts.prepare_delay_ms. */
    if (getenv("DRA_GPU_PLUGIN_PREPARE_DELAY_MS"))
        o.prepare_delay_ms = atoi(getenv("DRA_GPU_PLUGIN_PREPARE_DELAY_MS"));

    dra_cluster *cluster = NULL;
    if ((e = connect_cluster(&cluster, &d)) != DRA_OK)
        return fail_diag("create client", e, &d);
    o.cluster = cluster;

    /* Signals go to this thread only: block them before any thread starts. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGQUIT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    dra_plugin *p = NULL;
    int rc = 0;
    e = dra_plugin_new(&o, NULL, &p, &d);
    if (e != DRA_OK) {
        rc = fail_diag("error creating driver", e, &d);
    } else if (is_true(flags[F_CLEANUP].value)) {
        e = dra_plugin_remove_slices(p, &d);
        if (e != DRA_OK)
            rc = fail_diag("cleanup", e, &d);
        else
            log_line(NULL, "removed this node's ResourceSlices");
    } else if ((e = dra_plugin_start(p, &d)) != DRA_OK) {
        rc = fail_diag("error starting driver", e, &d);
    } else {
        char msg[160];
        snprintf(msg, sizeof(msg), "serving node %s (health port %d)", o.node_name,
                 dra_plugin_healthcheck_port(p));
        log_line(NULL, msg);
        int sig = 0;
        sigwait(&sigs, &sig);
        snprintf(msg, sizeof(msg), "signal %d: shutting down", sig);
        log_line(NULL, msg);
        dra_plugin_stop(p);
        if (is_true(flags[F_REMOVE_ON_EXIT].value) && dra_plugin_remove_slices(p, &d) != DRA_OK)
            rc = fail_diag("remove slices", DRA_EIO, &d);
    }
    dra_plugin_free(p);
    dra_cluster_free(cluster);
    dra_diag_fini(&d);
    return rc;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) != 0)
        return 2;
    return run();
}
