#!/usr/bin/env python3
"""A small HTTPS stand-in for a Kubernetes API server, for the REST
transport's tests (tests/kube/run_rest.sh starts it on a free loopback
port and kills it by pid).

It serves GET/LIST (limit/continue)/POST/PUT/PATCH (merge)/DELETE and
pods/NAME/binding for a few resources kept in memory, with one
resourceVersion counter and a change history for watches (chunked
newline-delimited events, bookmarks, ERROR 410 for compacted versions,
HTTP 410 on request, headers held back on request). Requests need a bearer token listed in DIR/tokens
(re-read on every request) or a client certificate signed by DIR/ca.crt.
Debug endpoints (authenticated): GET /debug/log (every request seen),
POST /debug/expire (end every watch with ERROR 410 and forget history),
GET /debug/slow?ms=N (answers after N ms).
"""
import argparse
import gzip
import json
import os
import ssl
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

KINDS = {
    "pods": ("Pod", "v1"),
    "nodes": ("Node", "v1"),
    "events": ("Event", "v1"),
    "resourceclaims": ("ResourceClaim", "resource.k8s.io/v1"),
    "resourceslices": ("ResourceSlice", "resource.k8s.io/v1"),
}


class Store:
    def __init__(self):
        self.lock = threading.Condition()
        self.rv = 100
        self.objs = {}       # (resource, ns, name) -> object
        self.history = []    # (rv, type, resource, ns, object)
        self.compacted = 0   # versions <= this are gone
        self.expire_gen = 0
        self.log = []

    def bump(self):
        self.rv += 1
        return str(self.rv)

    def record(self, typ, res, ns, obj):
        self.history.append((int(obj["metadata"]["resourceVersion"]), typ,
                             res, ns, json.loads(json.dumps(obj))))
        self.lock.notify_all()


STORE = Store()
ARGS = None


def merge(dst, patch):
    if not isinstance(patch, dict):
        return patch
    if not isinstance(dst, dict):
        dst = {}
    for k, v in patch.items():
        if v is None:
            dst.pop(k, None)
        else:
            dst[k] = merge(dst.get(k), v)
    return dst


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message, "reason": reason,
            "code": code}


def parse_path(path):
    """(resource, ns, name, sub) or None."""
    seg = [s for s in path.split("/") if s]
    if seg[:2] == ["api", "v1"]:
        rest = seg[2:]
    elif len(seg) >= 3 and seg[0] == "apis":
        rest = seg[3:]
    else:
        return None
    ns = ""
    if len(rest) >= 2 and rest[0] == "namespaces" and rest[2:3]:
        ns, rest = rest[1], rest[2:]
    if not rest or rest[0] not in KINDS:
        return None
    return (rest[0], ns, rest[1] if len(rest) > 1 else "",
            rest[2] if len(rest) > 2 else "")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    # ---- plumbing --------------------------------------------------------
    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n).decode() if n else ""

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        gz = "gzip" in (self.headers.get("Accept-Encoding") or "")
        if gz:
            data = gzip.compress(data)
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        if gz:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        return gz

    def auth(self):
        h = self.headers.get("Authorization") or ""
        try:
            with open(os.path.join(ARGS.dir, "tokens")) as f:
                tokens = set(f.read().split())
        except OSError:
            tokens = set()
        if h.startswith("Bearer ") and h[7:] in tokens:
            return "token:" + h[7:]
        cert = self.connection.getpeercert() if hasattr(
            self.connection, "getpeercert") else None
        if cert:
            cn = [v for rdn in cert.get("subject", ()) for (k, v) in rdn
                  if k == "commonName"]
            return "cert:" + (cn[0] if cn else "?")
        return None

    def handle_any(self, method):
        url = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query).items()}
        body = self.body() if method in ("POST", "PUT", "PATCH",
                                         "DELETE") else ""
        who = self.auth()
        entry = {"method": method, "path": url.path, "query": url.query,
                 "ctype": self.headers.get("Content-Type"),
                 "accept": self.headers.get("Accept"),
                 "ua": self.headers.get("User-Agent"),
                 "ae": self.headers.get("Accept-Encoding"),
                 "port": self.client_address[1], "who": who, "body": body}
        with STORE.lock:
            STORE.log.append(entry)
        if not who:
            return self.send_json(401, status(401, "Unauthorized",
                                              "Unauthorized"))
        if url.path == "/debug/log":
            with STORE.lock:
                log = list(STORE.log)
            return self.send_json(200, log)
        if url.path == "/debug/slow":
            time.sleep(int(q.get("ms", "1000")) / 1000.0)
            return self.send_json(200, {"slept": True})
        if url.path == "/debug/expire" and method == "POST":
            with STORE.lock:
                STORE.compacted = STORE.rv
                STORE.expire_gen += 1
                STORE.lock.notify_all()
            return self.send_json(200, {"compacted": STORE.compacted})
        p = parse_path(url.path)
        if not p:
            self.send_response(404)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "18")
            self.end_headers()
            self.wfile.write(b"404 page not found")
            return
        res, ns, name, sub = p
        if method == "GET" and not name and q.get("watch") == "true":
            return self.watch(res, ns, q)
        with STORE.lock:
            code, obj = self.rest(method, res, ns, name, sub, q, body)
        entry["gzip"] = self.send_json(code, obj)

    # ---- REST -------------------------------------------------------------
    def rest(self, method, res, ns, name, sub, q, body):
        kind, av = KINDS[res]
        key = (res, ns, name)
        gr = res if av == "v1" else res + "." + av.split("/")[0]
        if method == "GET" and not name:
            items = sorted((o for (r, n, _), o in STORE.objs.items()
                            if r == res and (not ns or n == ns)),
                           key=lambda o: o["metadata"]["name"])
            start = 0
            if q.get("continue"):
                if q["continue"] == "expired":
                    return 410, status(410, "Expired",
                                       "The provided continue parameter is "
                                       "too old")
                start = int(q["continue"])
            limit = int(q.get("limit", "0"))
            md = {"resourceVersion": str(STORE.rv)}
            page = items[start:start + limit] if limit else items[start:]
            if limit and start + limit < len(items):
                md["continue"] = str(start + limit)
            return 200, {"kind": kind + "List", "apiVersion": av,
                         "metadata": md,
                         "items": [{k: v for k, v in o.items()
                                    if k not in ("kind", "apiVersion")}
                                   for o in page]}
        if method == "POST" and sub == "binding":
            pod = STORE.objs.get(("pods", ns, name))
            if not pod:
                return 404, status(404, "NotFound",
                                   'pods "%s" not found' % name)
            b = json.loads(body)
            pod.setdefault("spec", {})["nodeName"] = b["target"]["name"]
            pod["metadata"]["resourceVersion"] = STORE.bump()
            STORE.record("MODIFIED", res, ns, pod)
            return 201, {"kind": "Status", "apiVersion": "v1",
                         "status": "Success", "code": 201}
        if method == "POST":
            try:
                obj = json.loads(body)
            except ValueError as e:
                return 400, status(400, "BadRequest", str(e))
            md = obj.setdefault("metadata", {})
            key = (res, ns, md.get("name", ""))
            if key in STORE.objs:
                return 409, status(409, "AlreadyExists",
                                   '%s "%s" already exists' % (gr, key[2]))
            md["uid"] = str(uuid.uuid4())
            md["resourceVersion"] = STORE.bump()
            if ns:
                md["namespace"] = ns
            obj["kind"], obj["apiVersion"] = kind, av
            STORE.objs[key] = obj
            STORE.record("ADDED", res, ns, obj)
            return 201, obj
        cur = STORE.objs.get(key)
        if not cur:
            return 404, status(404, "NotFound",
                               '%s "%s" not found' % (gr, name))
        if method == "GET":
            return 200, cur
        if method == "PUT":
            obj = json.loads(body)
            rv = obj.get("metadata", {}).get("resourceVersion")
            if rv and rv != cur["metadata"]["resourceVersion"]:
                return 409, status(
                    409, "Conflict",
                    'Operation cannot be fulfilled on %s "%s": the object has '
                    "been modified; please apply your changes to the latest "
                    "version and try again" % (gr, name))
            obj["metadata"]["uid"] = cur["metadata"]["uid"]
            obj["metadata"]["resourceVersion"] = STORE.bump()
            obj["kind"], obj["apiVersion"] = kind, av
            STORE.objs[key] = obj
            STORE.record("MODIFIED", res, ns, obj)
            return 200, obj
        if method == "PATCH":
            ct = self.headers.get("Content-Type") or ""
            if ct not in ("application/merge-patch+json",
                          "application/strategic-merge-patch+json"):
                return 415, status(415, "UnsupportedMediaType",
                                   "the body of the request was in an "
                                   "unknown format")
            obj = merge(cur, json.loads(body))
            obj["metadata"]["resourceVersion"] = STORE.bump()
            STORE.objs[key] = obj
            STORE.record("MODIFIED", res, ns, obj)
            return 200, obj
        if method == "DELETE":
            del STORE.objs[key]
            cur["metadata"]["resourceVersion"] = STORE.bump()
            STORE.record("DELETED", res, ns, cur)
            return 200, cur
        return 405, status(405, "MethodNotAllowed", "not allowed")

    # ---- watch --------------------------------------------------------------
    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def send_event(self, typ, obj, split):
        line = (json.dumps({"type": typ, "object": obj}) + "\n").encode()
        if split:
            # One event across two chunks, a little apart: the client
            # must reassemble lines from arbitrary pieces.
            self.chunk(line[:len(line) // 2])
            time.sleep(0.02)
            self.chunk(line[len(line) // 2:])
        else:
            self.chunk(line)

    def watch(self, res, ns, q):
        rv = q.get("resourceVersion", "")
        split = q.get("fieldSelector") == "stub=split"
        if rv == "gone-http":
            return self.send_json(410, status(410, "Gone", "gone"))
        if rv.startswith("late"):
            # Headers held back past the client's request timeout.
            time.sleep(3.0)
            if rv == "late-gone":
                return self.send_json(410, status(410, "Gone", "late gone"))
            rv = ""
        # (a late "" watch then lists like any other)
        kind, av = KINDS[res]
        timeout = float(q.get("timeoutSeconds", "60"))
        deadline = time.time() + timeout
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            with STORE.lock:
                gen = STORE.expire_gen
                if rv in ("", "0"):
                    pending = [("ADDED", dict(o)) for (r, n, _), o in
                               sorted(STORE.objs.items())
                               if r == res and (not ns or n == ns)]
                    pos = len(STORE.history)
                elif int(rv) < STORE.compacted:
                    pending = [("ERROR", status(
                        410, "Expired", "too old resource version: %s (%d)"
                        % (rv, STORE.compacted)))]
                    pos = None
                else:
                    pending = []
                    pos = next((i for i, h in enumerate(STORE.history)
                                if h[0] > int(rv)), len(STORE.history))
                if q.get("allowWatchBookmarks") == "true" and pos is not None:
                    pending.append(("BOOKMARK", {
                        "kind": kind, "apiVersion": av,
                        "metadata": {"resourceVersion": str(STORE.rv)}}))
            for typ, obj in pending:
                self.send_event(typ, obj, split)
            while pos is not None and time.time() < deadline:
                with STORE.lock:
                    if STORE.expire_gen != gen:
                        out = [("ERROR", status(
                            410, "Expired", "too old resource version"))]
                        pos = None
                    else:
                        out = [(t, o) for (_, t, r, n, o) in
                               STORE.history[pos:]
                               if r == res and (not ns or n == ns)]
                        pos = len(STORE.history)
                        if not out:
                            STORE.lock.wait(0.1)
                for typ, obj in out:
                    self.send_event(typ, obj, split)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass
        self.close_connection = True

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_DELETE(self):
        self.handle_any("DELETE")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def get_request(self):
        sock, addr = self.socket.accept()
        # The handshake happens in the handler's thread, on first read.
        return self.ctx.wrap_socket(sock, server_side=True,
                                    do_handshake_on_connect=False), addr

    def handle_error(self, request, client_address):
        pass  # handshake failures of the bad-CA tests are expected


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port-file", required=True)
    ARGS = ap.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(ARGS.dir, "server.crt"),
                        os.path.join(ARGS.dir, "server.key"))
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.load_verify_locations(os.path.join(ARGS.dir, "ca.crt"))
    srv = Server(("127.0.0.1", 0), Handler)
    srv.ctx = ctx
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
