#!/usr/bin/python3
"""A small stand-in for kube-apiserver, for the plugin's interop tests
until drad runs: an in-memory object store behind HTTPS on a free
loopback port (HTTP/2, as the plugin's client speaks it; python3-h2),
speaking just enough of the REST API for a kubelet
plugin: GET/LIST (with the resourceslice field selectors spec.nodeName
and spec.driver, and limit/continue ignored), POST (generateName), PUT
(resourceVersion preconditions, 409 Conflict), DELETE, /version, and
Status errors. Usage: stub_apiserver.py CERT KEY PORTFILE; the bound
port is written to PORTFILE once it listens."""

import json
import random
import socketserver
import ssl
import string
import sys
import threading
import uuid
from urllib.parse import parse_qs, urlparse

import h2.config
import h2.connection
import h2.events

LOCK = threading.Lock()
STORE = {}  # collection path -> {name: object}
RV = [1]

KINDS = {
    "nodes": ("v1", "Node"),
    "resourceslices": ("resource.k8s.io/v1", "ResourceSlice"),
    "resourceclaims": ("resource.k8s.io/v1", "ResourceClaim"),
    "deviceclasses": ("resource.k8s.io/v1", "DeviceClass"),
}


def status(code, reason, message):
    return code, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                  "status": "Failure", "message": message, "reason": reason,
                  "code": code}


def split(path):
    """(collection path, resource, name or None)."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return None, None, None
    if parts[0] == "api":
        base = parts[:2]
        rest = parts[2:]
    elif parts[0] == "apis":
        base = parts[:3]
        rest = parts[3:]
    else:
        return None, None, None
    if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) >= 3:
        base = base + rest[:3]
        rest = rest[3:]
    elif rest:
        base = base + rest[:1]
        rest = rest[1:]
    else:
        return None, None, None
    resource = base[-1]
    name = rest[0] if rest else None
    return "/" + "/".join(base), resource, name


def matches(obj, selector):
    if not selector:
        return True
    for term in selector.split(","):
        key, _, want = term.partition("=")
        cur = obj
        for k in key.split("."):
            cur = cur.get(k) if isinstance(cur, dict) else None
        if cur != want:
            return False
    return True


def bump(obj):
    RV[0] += 1
    obj.setdefault("metadata", {})["resourceVersion"] = str(RV[0])


def handle(method, url, body):
    u = urlparse(url)
    if u.path == "/version":
        return 200, {"major": "1", "minor": "35", "gitVersion": "v1.35.0"}
    coll, resource, name = split(u.path)
    if coll is None or resource not in KINDS:
        return status(404, "NotFound", "the server could not find the requested resource")
    api_version, kind = KINDS[resource]
    with LOCK:
        items = STORE.setdefault(coll, {})
        if method == "GET" and name is None:
            q = parse_qs(u.query)
            sel = q.get("fieldSelector", [""])[0]
            objs = [o for o in items.values() if matches(o, sel)]
            return 200, {"kind": kind + "List", "apiVersion": api_version,
                         "metadata": {"resourceVersion": str(RV[0])}, "items": objs}
        if method == "GET":
            if name not in items:
                return status(404, "NotFound", '%s "%s" not found' % (resource, name))
            return 200, items[name]
        if method == "POST":
            obj = json.loads(body)
            meta = obj.setdefault("metadata", {})
            if not meta.get("name"):
                gen = meta.get("generateName")
                if not gen:
                    return status(422, "Invalid", "name or generateName is required")
                meta["name"] = gen + "".join(random.choice(string.ascii_lowercase + string.digits)
                                             for _ in range(5))
            if meta["name"] in items:
                return status(409, "AlreadyExists", '%s "%s" already exists' % (resource, meta["name"]))
            meta.setdefault("uid", str(uuid.uuid4()))
            obj.setdefault("apiVersion", api_version)
            obj.setdefault("kind", kind)
            bump(obj)
            items[meta["name"]] = obj
            return 201, obj
        if method == "PUT":
            obj = json.loads(body)
            old = items.get(name)
            if old is None:
                return status(404, "NotFound", '%s "%s" not found' % (resource, name))
            rv = obj.get("metadata", {}).get("resourceVersion")
            if rv and rv != old["metadata"]["resourceVersion"]:
                return status(409, "Conflict", "the object has been modified; please apply "
                              "your changes to the latest version and try again")
            obj["metadata"]["uid"] = old["metadata"]["uid"]
            bump(obj)
            items[name] = obj
            return 200, obj
        if method == "DELETE":
            if name not in items:
                return status(404, "NotFound", '%s "%s" not found' % (resource, name))
            return 200, items.pop(name)
    return status(405, "MethodNotAllowed", "method not allowed")


class Handler(socketserver.BaseRequestHandler):
    """One HTTP/2 connection (python3-h2 does the framing), as the plugin's
    REST client speaks only HTTP/2; requests are answered in order."""

    def handle(self):
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        conn.initiate_connection()
        sock = self.request
        sock.sendall(conn.data_to_send())
        reqs = {}  # stream id -> [headers, body]
        while True:
            try:
                data = sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            for ev in conn.receive_data(data):
                if isinstance(ev, h2.events.RequestReceived):
                    reqs[ev.stream_id] = [dict(ev.headers), b""]
                elif isinstance(ev, h2.events.DataReceived):
                    reqs[ev.stream_id][1] += ev.data
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, h2.events.StreamEnded):
                    hdrs, body = reqs.pop(ev.stream_id)
                    self.answer(conn, ev.stream_id, hdrs, body)
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    return
            sock.sendall(conn.data_to_send())

    def answer(self, conn, sid, hdrs, body):
        code, obj = handle(hdrs[b":method"].decode(), hdrs[b":path"].decode(), body)
        data = json.dumps(obj).encode()
        conn.send_headers(sid, [(":status", str(code)), ("content-type", "application/json"),
                                ("content-length", str(len(data)))])
        # Within the peer's window (the plugin's answers are small).
        for i in range(0, len(data), 16384):
            conn.send_data(sid, data[i:i + 16384], end_stream=i + 16384 >= len(data))
        if not data:
            conn.end_stream(sid)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True

    def __init__(self, ctx):
        super().__init__(("127.0.0.1", 0), Handler)
        self.ctx = ctx

    def get_request(self):
        sock, addr = self.socket.accept()
        return self.ctx.wrap_socket(sock, server_side=True), addr


def main():
    cert, key, portfile = sys.argv[1:4]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["h2"])
    srv = Server(ctx)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


if __name__ == "__main__":
    main()
