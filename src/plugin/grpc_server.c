/*
 * plugin/grpc_server.c: a unary gRPC server on the gRPC core C library.
 * One listening address per server (a unix socket or a TCP port), N
 * worker threads that each own a completion queue and serve one call at
 * a time, and a handler that maps (method, request bytes) to (status,
 * response bytes) without seeing gRPC at all. Unknown methods are
 * UNIMPLEMENTED; oversized messages are refused by gRPC itself
 * (RESOURCE_EXHAUSTED) through the receive-size channel argument.
 */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "plugin_int.h"

/* How long a call may take to deliver its request message. */
#define RECV_TIMEOUT_S 120

typedef struct worker {
    plugin_server *srv;
    grpc_completion_queue *cq;
    pthread_t thread;
    int started;
} worker;

struct plugin_server {
    const dra_mem *mem;
    grpc_server *server;
    grpc_completion_queue *shutdown_cq;
    worker *workers;
    int n_workers;
    plugin_rpc_handler handler;
    void *ud;
    atomic_int stopping;
    int port;
};

/* Tags: the address of a per-worker marker, so a worker can tell a new
 * call from a finished batch. Each worker has at most one outstanding
 * operation at a time, so any event on its queue is the one it waits for. */
static void *tag_of(worker *w, int k)
{
    return (char *)w + k;
}

static gpr_timespec forever(void)
{
    return gpr_inf_future(GPR_CLOCK_REALTIME);
}

/* Waits for the one event this worker expects. 1 on success. With
 * |call| set, a request that has not arrived within RECV_TIMEOUT_S is
 * cancelled (a client that connects and sends nothing must not hold a
 * worker forever), and the wait goes on for the now failing batch. */
static int wait_tag_for(worker *w, void *tag, grpc_call *call)
{
    gpr_timespec deadline =
        call ? gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                            gpr_time_from_seconds(RECV_TIMEOUT_S, GPR_TIMESPAN))
             : forever();
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(w->cq, deadline, NULL);
        if (ev.type == GRPC_QUEUE_TIMEOUT) {
            grpc_call_cancel(call, NULL);
            deadline = forever();
            continue;
        }
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            return -1;
        if (ev.type == GRPC_OP_COMPLETE && ev.tag == tag)
            return ev.success ? 1 : 0;
    }
}

static int wait_tag(worker *w, void *tag)
{
    return wait_tag_for(w, tag, NULL);
}

static int read_message(grpc_byte_buffer *bb, dra_buf *into)
{
    grpc_byte_buffer_reader r;
    if (!grpc_byte_buffer_reader_init(&r, bb))
        return 0;
    grpc_slice s = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    int ok = dra_buf_append(into, GRPC_SLICE_START_PTR(s), GRPC_SLICE_LENGTH(s)) == DRA_OK;
    grpc_slice_unref(s);
    return ok;
}

/* Runs the handler for one received request and sends its answer. */
static void answer(worker *w, grpc_call *call, const char *method,
                   grpc_byte_buffer *req)
{
    plugin_server *s = w->srv;
    dra_buf in, out;
    dra_buf_init(&in, s->mem);
    dra_buf_init(&out, s->mem);
    plugin_rpc rpc;
    memset(&rpc, 0, sizeof(rpc));
    rpc.method = method;
    rpc.resp = &out;
    if (!req) {
        rpc.code = DRA_GRPC_INVALID_ARGUMENT;
        snprintf(rpc.msg, sizeof(rpc.msg), "request message missing");
    } else if (!read_message(req, &in)) {
        rpc.code = DRA_GRPC_RESOURCE_EXHAUSTED;
        snprintf(rpc.msg, sizeof(rpc.msg), "out of memory reading the request");
    } else {
        rpc.req = (const uint8_t *)(in.p ? in.p : "");
        rpc.req_len = in.len;
        s->handler(s->ud, &rpc);
    }

    grpc_op ops[3];
    memset(ops, 0, sizeof(ops));
    size_t nops = 0;
    grpc_byte_buffer *resp = NULL;
    grpc_slice details = grpc_slice_from_copied_string(rpc.msg);
    int cancelled = 0;
    if (rpc.code == DRA_GRPC_OK) {
        grpc_slice body = grpc_slice_from_copied_buffer(out.p ? out.p : "", out.len);
        resp = grpc_raw_byte_buffer_create(&body, 1);
        grpc_slice_unref(body);
        ops[nops].op = GRPC_OP_SEND_MESSAGE;
        ops[nops++].data.send_message.send_message = resp;
    }
    ops[nops].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[nops].data.send_status_from_server.status = (grpc_status_code)rpc.code;
    ops[nops++].data.send_status_from_server.status_details = &details;
    ops[nops].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[nops++].data.recv_close_on_server.cancelled = &cancelled;
    if (grpc_call_start_batch(call, ops, nops, tag_of(w, 2), NULL) == GRPC_CALL_OK)
        (void)wait_tag(w, tag_of(w, 2));
    if (resp)
        grpc_byte_buffer_destroy(resp);
    grpc_slice_unref(details);
    dra_buf_fini(&in);
    dra_buf_fini(&out);
}

/* Receives the request of a new call, answers it, releases the call. */
static void serve_call(worker *w, grpc_call *call, const grpc_call_details *det)
{
    char method[256];
    size_t mlen = GRPC_SLICE_LENGTH(det->method);
    if (mlen >= sizeof(method))
        mlen = sizeof(method) - 1;
    memcpy(method, GRPC_SLICE_START_PTR(det->method), mlen);
    method[mlen] = '\0';

    grpc_byte_buffer *req = NULL;
    grpc_op ops[2];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_RECV_MESSAGE;
    ops[1].data.recv_message.recv_message = &req;
    if (grpc_call_start_batch(call, ops, 2, tag_of(w, 1), NULL) == GRPC_CALL_OK &&
        wait_tag_for(w, tag_of(w, 1), call) == 1)
        answer(w, call, method, req);
    if (req)
        grpc_byte_buffer_destroy(req);
    grpc_call_unref(call);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    plugin_server *s = w->srv;
    for (;;) {
        grpc_call *call = NULL;
        grpc_call_details det;
        grpc_metadata_array md;
        grpc_call_details_init(&det);
        grpc_metadata_array_init(&md);
        int r = -1;
        if (!atomic_load(&s->stopping) &&
            grpc_server_request_call(s->server, &call, &det, &md, w->cq, w->cq,
                                     tag_of(w, 0)) == GRPC_CALL_OK)
            r = wait_tag(w, tag_of(w, 0));
        if (r == 1 && call)
            serve_call(w, call, &det);
        grpc_call_details_destroy(&det);
        grpc_metadata_array_destroy(&md);
        if (r != 1) {
            /* The server is shutting down: drain until the queue is shut. */
            while (grpc_completion_queue_next(w->cq, forever(), NULL).type !=
                   GRPC_QUEUE_SHUTDOWN)
                ;
            return NULL;
        }
    }
}

/* Destroys the server, then every queue (shut down and drained first):
 * queues outlive the server that was registered with them. */
static void server_destroy(plugin_server *s)
{
    if (!s)
        return;
    if (s->server)
        grpc_server_destroy(s->server);
    for (int i = 0; s->workers && i < s->n_workers; i++)
        if (s->workers[i].cq) {
            grpc_completion_queue_shutdown(s->workers[i].cq);
            while (grpc_completion_queue_next(s->workers[i].cq, forever(), NULL).type !=
                   GRPC_QUEUE_SHUTDOWN)
                ;
            grpc_completion_queue_destroy(s->workers[i].cq);
        }
    if (s->shutdown_cq)
        grpc_completion_queue_destroy(s->shutdown_cq);
    dra_free(s->mem, s->workers);
    dra_free(s->mem, s);
    grpc_shutdown();
}

dra_err plugin_server_start(const plugin_server_opts *o, plugin_server **out,
                            char *err, size_t errcap)
{
    *out = NULL;
    grpc_init();
    plugin_server *s = dra_calloc(o->mem, 1, sizeof(*s));
    if (!s) {
        grpc_shutdown();
        return DRA_ENOMEM;
    }
    s->mem = o->mem;
    s->handler = o->handler;
    s->ud = o->ud;
    s->n_workers = o->workers > 0 ? o->workers : 1;
    atomic_init(&s->stopping, 0);
    s->workers = dra_calloc(o->mem, (size_t)s->n_workers, sizeof(worker));
    if (!s->workers) {
        server_destroy(s);
        return DRA_ENOMEM;
    }
    grpc_arg args[2];
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = (int)o->max_message;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].value.integer = (int)o->max_message;
    grpc_channel_args cargs = {2, args};
    s->server = grpc_server_create(&cargs, NULL);
    s->shutdown_cq = grpc_completion_queue_create_for_pluck(NULL);
    for (int i = 0; i < s->n_workers; i++) {
        s->workers[i].srv = s;
        s->workers[i].cq = grpc_completion_queue_create_for_next(NULL);
        grpc_server_register_completion_queue(s->server, s->workers[i].cq, NULL);
    }
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    s->port = grpc_server_add_http2_port(s->server, o->address, creds);
    grpc_server_credentials_release(creds);
    if (s->port <= 0) {
        snprintf(err, errcap, "cannot listen on %s", o->address);
        server_destroy(s);
        return DRA_EIO;
    }
    grpc_server_start(s->server);
    for (int i = 0; i < s->n_workers; i++) {
        if (pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]) != 0) {
            snprintf(err, errcap, "cannot start a server thread");
            *out = s;
            plugin_server_stop(s);
            *out = NULL;
            return DRA_EIO;
        }
        s->workers[i].started = 1;
    }
    *out = s;
    return DRA_OK;
}

int plugin_server_port(const plugin_server *s)
{
    return s ? s->port : -1;
}

void plugin_server_stop(plugin_server *s)
{
    if (!s)
        return;
    atomic_store(&s->stopping, 1);
    grpc_server_shutdown_and_notify(s->server, s->shutdown_cq, s);
    grpc_server_cancel_all_calls(s->server);
    (void)grpc_completion_queue_pluck(s->shutdown_cq, s, forever(), NULL);
    grpc_completion_queue_shutdown(s->shutdown_cq);
    (void)grpc_completion_queue_pluck(s->shutdown_cq, NULL, forever(), NULL);
    /* Pending call requests have now failed; shutting the queues ends
     * each worker's drain loop. */
    for (int i = 0; i < s->n_workers; i++)
        grpc_completion_queue_shutdown(s->workers[i].cq);
    for (int i = 0; i < s->n_workers; i++)
        if (s->workers[i].started)
            pthread_join(s->workers[i].thread, NULL);
    server_destroy(s);
}
