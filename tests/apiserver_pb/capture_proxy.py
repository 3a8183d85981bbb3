#!/usr/bin/env python3
"""capture_proxy.py UPSTREAM CAFILE TOKENFILE OUTDIR: a plain-HTTP proxy on a free
loopback port in front of drad's HTTPS endpoint, recording every request
(method, path, Content-Type, Accept and the exact body bytes) under OUTDIR
as NNN.txt + NNN.body, so the protobuf bodies kubectl sends can be kept
as test data. It adds the bearer token itself: kubectl sends no
credentials to a plain-HTTP server. Prints "port N" when listening; ends on SIGTERM. A tool for
making tests/apiserver_pb/data/, not part of any test."""
import http.client
import http.server
import os
import signal
import ssl
import sys
import threading
import urllib.parse

upstream, cafile, tokenfile, outdir = sys.argv[1:5]
with open(tokenfile) as tf:
    token = tf.read().strip()
up = urllib.parse.urlsplit(upstream)
ctx = ssl.create_default_context(cafile=cafile)
lock = threading.Lock()
seq = [0]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, body):
        with lock:
            seq[0] += 1
            n = seq[0]
        base = os.path.join(outdir, "%03d" % n)
        with open(base + ".txt", "w") as f:
            f.write("%s %s\nContent-Type: %s\nAccept: %s\n" % (
                self.command, self.path, self.headers.get("Content-Type", ""),
                self.headers.get("Accept", "")))
        if body:
            with open(base + ".body", "wb") as f:
                f.write(body)

    def relay(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        self.record(body)
        c = http.client.HTTPSConnection(up.hostname, up.port, context=ctx, timeout=60)
        hdrs = {k: v for k, v in self.headers.items()
                if k.lower() not in ("host", "connection", "content-length")}
        hdrs["Authorization"] = "Bearer " + token
        c.request(self.command, self.path, body=body or None, headers=hdrs)
        r = c.getresponse()
        self.send_response_only(r.status, r.reason)
        for k, v in r.getheaders():
            if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        while True:
            chunk = r.read1(65536)
            if not chunk:
                break
            self.wfile.write(chunk)
            self.wfile.flush()
        self.close_connection = True
        c.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = relay


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=srv.shutdown).start())
print("port %d" % srv.server_address[1], flush=True)
srv.serve_forever()
