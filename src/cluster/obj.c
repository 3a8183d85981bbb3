/*
 * obj.c: small readers of object documents (metadata.name and friends,
 * dotted string paths) and the clock and sleep this layer needs for
 * events, retries and backoff.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cluster_int.h"

static const char *str_of(const dra_doc *v)
{
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

static const char *meta(const dra_doc *obj, const char *key)
{
    return str_of(dra_doc_get(dra_doc_get(obj, "metadata"), key));
}

const char *dra_obj_name(const dra_doc *obj) { return meta(obj, "name"); }
const char *dra_obj_namespace(const dra_doc *obj)
{
    return meta(obj, "namespace");
}
const char *dra_obj_uid(const dra_doc *obj) { return meta(obj, "uid"); }
const char *dra_obj_rv(const dra_doc *obj)
{
    return meta(obj, "resourceVersion");
}

const char *dra_obj_str(const dra_doc *obj, const char *dotted)
{
    if (!obj || !dotted || !*dotted)
        return NULL;
    return str_of(dra_doc_at(obj, dotted));
}

uint64_t cluster_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cluster_rfc3339(uint64_t ns, char *buf, size_t size)
{
    time_t s = (time_t)(ns / 1000000000u);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void cluster_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
