/* libFuzzer target: the gRPC client connection (src/plugin/h2_client.c)
 * on whatever a server sends: the input is the server's side of the
 * connection (SETTINGS, HEADERS, DATA with message prefixes, trailers,
 * resets, GOAWAY, PINGs, window updates), written into a socketpair and
 * then closed, while the client makes a unary call with a 64-byte
 * answer limit and, when the connection is still usable, checks it for
 * reuse and makes a second call. No input may crash, leak or hang (the
 * end of the input ends every call). Seeds (corpus/plugin_h2c): the
 * plugin's own h2 server answering an echo, an error status and an
 * answer over the limit. */
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plugin/plugin_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return 0;
    /* What fits in the socket's buffer; the rest is cut off. */
    (void)fcntl(sv[1], F_SETFL, O_NONBLOCK);
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(sv[1], data + off, size - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    shutdown(sv[1], SHUT_WR);
    plugin_h2c *c;
    if (plugin_h2c_adopt(sv[0], "fuzz", "localhost", NULL, &c) != DRA_OK) {
        close(sv[1]);
        return 0;
    }
    dra_buf resp;
    dra_buf_init(&resp, NULL);
    dra_plugin_rpc_status st;
    int64_t deadline = plugin_now_ms() + 5000;
    plugin_h2c_call(c, "/test.Echo/Echo", (const uint8_t *)"hello", 5, deadline, 64, &resp,
                    &st);
    if (plugin_h2c_usable(c) && plugin_h2c_alive(c))
        plugin_h2c_call(c, "/test.Echo/Echo", NULL, 0, deadline, 64, &resp, &st);
    (void)plugin_h2c_refused(c);
    dra_buf_fini(&resp);
    plugin_h2c_free(c);
    close(sv[1]);
    return 0;
}
