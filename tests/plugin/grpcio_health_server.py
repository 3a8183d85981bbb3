#!/usr/bin/python3
"""grpcio_health_server.py SOCKET: a python3-grpcio server of
grpc.health.v1.Health/Check on unix:SOCKET, for test_plugin_client: an
independent gRPC implementation answering the nghttp2 client. The
requested service name picks the answer:
  ""      SERVING
  big3    SERVING plus a 3 MiB unknown field (flow control, many frames)
  big5    a 5 MiB answer (over the client's 4 MiB limit)
  fail    FAILED_PRECONDITION with a message needing percent-encoding
  hold    sleeps 30 s (the client's deadline passes first)
  die     kill -9 of this process while the call is in flight
Creates SOCKET.ready once it serves. Exits 77 where grpcio is missing."""
import os
import signal
import sys
import time
from concurrent import futures

try:
    import grpc
except ImportError:
    sys.exit(77)

SERVING = b"\x08\x01"


def unknown_field(n):
    """Field 15, wire type 2, |n| bytes: skipped by any protobuf decoder."""
    out = bytearray(b"\x7a")
    v = n
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out) + b"x" * n


def service_name(req):
    # HealthCheckRequest: field 1 (service), one length byte here.
    if len(req) >= 2 and req[0] == 0x0A:
        return req[2 : 2 + req[1]].decode()
    return ""


def check(req, context):
    svc = service_name(req)
    if svc == "big3":
        return SERVING + unknown_field(3 << 20)
    if svc == "big5":
        return SERVING + unknown_field(5 << 20)
    if svc == "fail":
        context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not now: 100% \u00e9")
    if svc == "hold":
        time.sleep(30)
    if svc == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    return SERVING


def main():
    sock = sys.argv[1]
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=4),
        options=[("grpc.max_send_message_length", -1)],
    )
    handler = grpc.method_handlers_generic_handler(
        "grpc.health.v1.Health",
        {"Check": grpc.unary_unary_rpc_method_handler(check)},
    )
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port("unix:" + sock)
    server.start()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    # The socket exists from add_insecure_port on, before the server
    # accepts: the test waits for this file instead.
    with open(sock + ".ready", "w"):
        pass
    server.wait_for_termination()


if __name__ == "__main__":
    main()
