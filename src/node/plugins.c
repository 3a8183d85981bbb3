/*
 * plugins.c: the kubelet's plugin watcher and DRA plugin registry for
 * one node. Sockets appearing in the registration directory are asked
 * for their PluginInfo (pluginregistration.Registration/GetInfo); DRA
 * plugins get a client on their endpoint and are told they are
 * registered (NotifyRegistrationStatus). A socket that goes away, or is
 * replaced by a new one (a restarted plugin), unregisters the old entry.
 * inotify wakes the agent's loop; every wake-up rescans the directory,
 * so nothing depends on seeing every event.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node_int.h"

int node_plugins_init(dra_node *n)
{
    int fd;
    if (!n->o.registrar_dir)
        return -1;
    if (node_mkdirs(n->o.registrar_dir) != 0)
        return -1;
    fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd >= 0 && inotify_add_watch(fd, n->o.registrar_dir, IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM |
                                                                 IN_ATTRIB) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void node_plugins_on_inotify(dra_node *n, int fd)
{
    char buf[4096];
    (void)n;
    while (read(fd, buf, sizeof buf) > 0)
        ;
}

static void plugin_free(dra_node *n, node_plugin *p)
{
    if (!p)
        return;
    dra_plugin_client_free(p->client);
    dra_free(n->mem, p->driver);
    dra_free(n->mem, p->endpoint);
    dra_free(n->mem, p->service);
    dra_free(n->mem, p->reg_path);
    dra_free(n->mem, p);
}

/* Unlinks |p| from the list; frees it unless a caller holds it. Called
 * with n->mu held. */
static void plugin_remove(dra_node *n, node_plugin *p)
{
    for (node_plugin **pp = &n->plugins; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    p->removed = 1;
    if (p->refs == 0)
        plugin_free(n, p);
}

void node_plugins_fini(dra_node *n)
{
    pthread_mutex_lock(&n->mu);
    while (n->plugins)
        plugin_remove(n, n->plugins);
    pthread_mutex_unlock(&n->mu);
}

node_plugin *node_plugin_get(dra_node *n, const char *driver)
{
    node_plugin *p;
    pthread_mutex_lock(&n->mu);
    for (p = n->plugins; p && strcmp(p->driver, driver) != 0; p = p->next)
        ;
    if (p)
        p->refs++;
    pthread_mutex_unlock(&n->mu);
    return p;
}

void node_plugin_put(dra_node *n, node_plugin *p)
{
    pthread_mutex_lock(&n->mu);
    if (--p->refs == 0 && p->removed)
        plugin_free(n, p);
    pthread_mutex_unlock(&n->mu);
}

/* The first version in the plugin's list that this agent speaks (the
 * kubelet takes the plugin's order). */
static const char *pick_service(const dra_plugin_info *info)
{
    for (size_t i = 0; i < info->n_supported_versions; i++) {
        const char *v = info->supported_versions[i];
        if (strcmp(v, DRA_PLUGIN_SERVICE_V1) == 0 || strcmp(v, DRA_PLUGIN_SERVICE_V1BETA1) == 0)
            return v;
    }
    return NULL;
}

/* Asks the socket at |path| who it is and registers it. Failures leave
 * it unregistered; the next scan tries again. */
static void try_register(dra_node *n, const char *path, uint64_t ino, int64_t ctime)
{
    dra_plugin_client *reg = NULL;
    dra_plugin_info info;
    dra_plugin_rpc_status rs;
    node_plugin *p = NULL, *old;
    const char *svc;
    char why[600];
    dra_arena a;
    dra_arena_init(&a, n->mem);
    memset(&info, 0, sizeof info);
    if (dra_plugin_client_new(path, n->mem, &reg) != DRA_OK ||
        dra_plugin_client_get_info(reg, 2000, &a, &info, &rs) != DRA_OK)
        goto done;
    if (!info.type || strcmp(info.type, DRA_PLUGIN_TYPE_DRA) != 0)
        goto done; /* CSI or device plugins are not ours to register */
    why[0] = '\0';
    if (!info.name || !info.name[0])
        node_errf(why, sizeof why, "plugin name is empty");
    else if (!info.endpoint || info.endpoint[0] != '/')
        node_errf(why, sizeof why, "plugin endpoint %s is not an absolute socket path",
                 info.endpoint ? info.endpoint : "\"\"");
    else if (!(svc = pick_service(&info)))
        node_errf(why, sizeof why, "none of the versions supported by the plugin is supported by drad's node agent "
                                  "(v1.DRAPlugin, v1beta1.DRAPlugin)");
    if (why[0]) {
        dra_plugin_client_notify_registration(reg, 0, why, 2000, &rs);
        goto done;
    }
    if (!(p = dra_calloc(n->mem, 1, sizeof *p)) || !(p->driver = dra_strdup(n->mem, info.name)) ||
        !(p->endpoint = dra_strdup(n->mem, info.endpoint)) || !(p->service = dra_strdup(n->mem, svc)) ||
        !(p->reg_path = dra_strdup(n->mem, path)) || dra_plugin_client_new(p->endpoint, n->mem, &p->client)) {
        plugin_free(n, p);
        goto done;
    }
    p->reg_ino = ino;
    p->reg_ctime = ctime;
    pthread_mutex_lock(&n->mu);
    /* A restarted plugin replaces the earlier registration of its driver. */
    for (old = n->plugins; old && strcmp(old->driver, p->driver) != 0; old = old->next)
        ;
    if (old)
        plugin_remove(n, old);
    p->next = n->plugins;
    n->plugins = p;
    n->plugin_gen++;
    pthread_cond_broadcast(&n->plugin_cv);
    pthread_mutex_unlock(&n->mu);
    dra_plugin_client_notify_registration(reg, 1, NULL, 2000, &rs);
    /* Pods waiting for this driver retry now, not after their backoff. */
    node_pods_wake_all(n);
done:
    dra_plugin_client_free(reg);
    dra_arena_fini(&a);
}

/* The socket's identity: 0 when |path| is not a socket. */
static int sock_id(const char *path, uint64_t *ino, int64_t *ctime)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
        return 0;
    *ino = (uint64_t)st.st_ino;
    *ctime = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
    return 1;
}

/* Unregisters plugins whose registration socket is gone or replaced. */
static void drop_missing(dra_node *n)
{
    pthread_mutex_lock(&n->mu);
    for (node_plugin *p = n->plugins, *next; p; p = next) {
        uint64_t ino;
        int64_t ct;
        next = p->next;
        if (!sock_id(p->reg_path, &ino, &ct) || ino != p->reg_ino || ct != p->reg_ctime)
            plugin_remove(n, p);
    }
    pthread_mutex_unlock(&n->mu);
}

static int registered(dra_node *n, const char *path)
{
    int found = 0;
    pthread_mutex_lock(&n->mu);
    for (node_plugin *p = n->plugins; p && !found; p = p->next)
        found = strcmp(p->reg_path, path) == 0;
    pthread_mutex_unlock(&n->mu);
    return found;
}

/* A plugin whose registration socket still exists but which no longer
 * answers (killed, its socket left behind) keeps its entry: calls to it
 * fail with UNAVAILABLE until it comes back and re-registers. */
void node_plugins_scan(dra_node *n)
{
    DIR *dp;
    struct dirent *de;
    if (!n->o.registrar_dir)
        return;
    drop_missing(n);
    if (!(dp = opendir(n->o.registrar_dir)))
        return;
    while ((de = readdir(dp)) != NULL) {
        char path[4096];
        uint64_t ino;
        int64_t ct;
        if (de->d_name[0] == '.')
            continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", n->o.registrar_dir, de->d_name) >= sizeof path)
            continue;
        if (sock_id(path, &ino, &ct) && !registered(n, path))
            try_register(n, path, ino, ct);
    }
    closedir(dp);
}
