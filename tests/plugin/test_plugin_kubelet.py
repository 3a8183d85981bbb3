#!/usr/bin/python3
"""Interop test: python3-grpcio acting as the kubelet against the real
dra-gpu-plugin program on a fake GB200 driver root, with the API server
played by stub_apiserver.py (HTTP/2 over TLS, loopback, killed by pid), or with
--drad PATH by drad (which also validates what the plugin publishes).

Shows: the slice the plugin publishes (pool, nodeName, ownerReference,
generateName, generation); registration (GetInfo, NotifyRegistration-
Status); a claim allocated by `dractl allocate` from that very slice,
prepared over DRA v1, its CDI spec checked against the CDI
specification; a plugin restart, then the same answer over v1beta1 and
unprepare; malformed, oversized and unknown calls get errors and the
plugin keeps serving; the gRPC health check; XID events from the fake
NVML taint the device, fail its prepare and recover; --cleanup removes
the slices. Exit 77 (skip) without grpcio, grpc_tools or openssl."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import grpc
    from grpc_tools import protoc
    import yaml
except ImportError as e:
    print("skip: %s" % e)
    sys.exit(77)
if not shutil.which("openssl"):
    print("skip: no openssl")
    sys.exit(77)

SRC = os.environ.get("DRA_SOURCE_DIR", os.path.dirname(os.path.abspath(__file__)) + "/../..")
BUILD = os.environ["DRA_BUILD_DIR"]
NODE = "gb200-pod2-f06-node05"
PROCS = []


def log(*a):
    print(*a, flush=True)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def wait_for(fn, what, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def channel(target, **kw):
    """A channel with its own subchannel pool: gRPC Python otherwise
    shares connections per address, and the old plugin's dead
    connection would answer the first call after a restart."""
    opts = [("grpc.use_local_subchannel_pool", 1)] + kw.get("options", [])
    return grpc.insecure_channel(target, options=opts)


def start(args, **kw):
    p = subprocess.Popen(args, **kw)
    PROCS.append(p)
    return p


def stop(p, sig=signal.SIGTERM):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in PROCS:
        PROCS.remove(p)
    return p.returncode


# ---- the kubelet's protocol modules, generated from the plugin's .proto files

def load_protos(tmp):
    out = os.path.join(tmp, "pb")
    os.makedirs(out)
    protos = ["dra_v1.proto", "dra_v1beta1.proto", "registration.proto", "health.proto"]
    rc = protoc.main(["protoc", "-I" + SRC + "/src/plugin/proto", "--python_out=" + out,
                      "--grpc_python_out=" + out] + protos)
    check(rc == 0, "protoc failed")
    sys.path.insert(0, out)
    import dra_v1_pb2, dra_v1_pb2_grpc, dra_v1beta1_pb2, dra_v1beta1_pb2_grpc  # noqa
    import registration_pb2, registration_pb2_grpc, health_pb2, health_pb2_grpc  # noqa
    return dict(v1=dra_v1_pb2, v1g=dra_v1_pb2_grpc, b1=dra_v1beta1_pb2, b1g=dra_v1beta1_pb2_grpc,
                reg=registration_pb2, regg=registration_pb2_grpc, h=health_pb2, hg=health_pb2_grpc)


# ---- the API server stand-in

class Api:
    """The API server: the stub (stub_apiserver.py) or drad, each on a
    free loopback port and killed by pid."""

    def __init__(self, tmp, drad=None):
        self.tmp = tmp
        self.token = "t"
        if drad:
            data = tmp + "/drad"
            log_path = tmp + "/drad.log"
            self.proc = start([drad, "--data-dir", data, "--listen", "127.0.0.1:0", "--nodes", "none"],
                              stdout=open(log_path, "w"), stderr=subprocess.STDOUT)

            def served():
                m = re.search(r"serving https://127.0.0.1:(\d+); kubeconfig: (\S+)",
                              open(log_path).read())
                return m and (int(m.group(1)), m.group(2))
            self.port, self.kubeconfig = wait_for(served, "drad", 60)
            self.token = yaml.safe_load(open(self.kubeconfig))["users"][0]["user"]["token"]
            # The plugin's REST client speaks HTTP/2: drad's second port.
            self.plugin_kubeconfig = data + "/kubeconfig-h2"
            return
        cert, key = tmp + "/tls.crt", tmp + "/tls.key"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", cert],
                       check=True, capture_output=True)
        portfile = tmp + "/api.port"
        self.proc = start(["/usr/bin/python3", SRC + "/tests/plugin/stub_apiserver.py", cert, key,
                           portfile])
        self.port = int(wait_for(lambda: os.path.exists(portfile) and open(portfile).read(),
                                 "the stub API server"))
        self.kubeconfig = tmp + "/kubeconfig"
        with open(self.kubeconfig, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: stub\n  cluster:\n"
                    "    server: https://127.0.0.1:%d\n    insecure-skip-tls-verify: true\n"
                    "contexts:\n- name: stub\n  context: {cluster: stub, user: u}\n"
                    "current-context: stub\nusers:\n- name: u\n  user: {token: t}\n" % self.port)
        self.plugin_kubeconfig = self.kubeconfig

    def call(self, method, path, obj=None):
        args = ["curl", "-sk", "-X", method, "-H", "Authorization: Bearer " + self.token,
                "https://127.0.0.1:%d%s" % (self.port, path)]
        if obj is not None:
            args += ["-H", "Content-Type: application/json", "--data-binary", json.dumps(obj)]
        return json.loads(subprocess.run(args, check=True, capture_output=True).stdout)

    def slices(self):
        return self.call("GET", "/apis/resource.k8s.io/v1/resourceslices")["items"]

    def add_claim(self, claim):
        """Creates |claim| and sets its status (the status subresource, as
        the scheduler does); returns its UID."""
        status = claim.pop("status")
        base = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
        made = self.call("POST", base, claim)
        check(made.get("kind") == "ResourceClaim", "create claim: %s" % made)
        made["status"] = status
        done = self.call("PUT", "%s/%s/status" % (base, made["metadata"]["name"]), made)
        check(done.get("status", {}).get("allocation"), "claim status: %s" % done)
        return made["metadata"]["uid"]


# ---- CDI checks (cncf-tags/container-device-interface v1.1.0) ------------------

VERSIONS = ["0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "1.0.0", "1.1.0"]
VENDOR = re.compile(r"^[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
DEVNAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?$")
HOOKS = {"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"}


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def check_edits(e, where, must_have):
    check(isinstance(e, dict), where + ": containerEdits is not a map")
    if must_have:
        check(any(e.get(k) for k in ("env", "deviceNodes", "hooks", "mounts")),
              where + ": device containerEdits must not be empty")
    for kv in e.get("env") or []:
        check("=" in kv and kv.index("=") > 0, where + ": bad env " + kv)
    for n in e.get("deviceNodes") or []:
        check(n.get("path", "").startswith("/"), where + ": deviceNode without path")
        check(n.get("type", "") in ("", "b", "c", "u", "p"), where + ": deviceNode type")
    for m in e.get("mounts") or []:
        check(m.get("hostPath") and m.get("containerPath"), where + ": mount paths")
    for h in e.get("hooks") or []:
        check(h.get("hookName") in HOOKS and h.get("path"), where + ": hook")


def min_version(spec):
    need = "0.3.0"
    edits = [d.get("containerEdits") or {} for d in spec["devices"]]
    edits.append(spec.get("containerEdits") or {})
    if any(not d["name"][0].isalpha() for d in spec["devices"]) or \
            any(n.get("hostPath") for e in edits for n in e.get("deviceNodes") or []):
        need = "0.5.0"
    if any(m.get("type") for e in edits for m in e.get("mounts") or []) and vkey(need) < vkey("0.4.0"):
        need = "0.4.0"
    return need


def check_cdi_spec(path, uid, devices):
    text = open(path).read()
    check(text.startswith("---\n"), "spec does not start with ---")
    spec = yaml.safe_load(text)
    check(spec["cdiVersion"] in VERSIONS, "cdiVersion " + spec["cdiVersion"])
    check(vkey(spec["cdiVersion"]) >= vkey(min_version(spec)), "cdiVersion below its content")
    check(spec["kind"] == "k8s.gpu.nvidia.com/claim", "kind")
    vendor, cls = spec["kind"].split("/")
    check(VENDOR.match(vendor) and VENDOR.match(cls), "kind grammar")
    names = [d["name"] for d in spec["devices"]]
    check(names == ["%s-%s" % (uid, d) for d in devices], "device names %s" % names)
    for d in spec["devices"]:
        check(DEVNAME.match(d["name"]), "device name grammar " + d["name"])
        check_edits(d["containerEdits"], d["name"], True)
    check_edits(spec.get("containerEdits") or {}, "spec", False)
    return spec


def resolve(cdi_dir, ids):
    """Every id must name a device of a spec file in the CDI directory,
    as containerd's InjectDevices needs ("unresolvable CDI devices")."""
    known = set()
    for f in os.listdir(cdi_dir):
        if f.endswith(".yaml") or f.endswith(".json"):
            s = yaml.safe_load(open(os.path.join(cdi_dir, f)))
            for d in s["devices"]:
                known.add("%s=%s" % (s["kind"], d["name"]))
    missing = [i for i in ids if i not in known]
    check(not missing, "unresolvable CDI devices %s" % missing)


# ---- the test ------------------------------------------------------------------

def run(tmp, drad):
    pb = load_protos(tmp)
    root, cdi = tmp + "/root", tmp + "/cdi"
    reg_dir, plug_dir = tmp + "/plugins_registry", tmp + "/plugins"
    subprocess.run([BUILD + "/dra-fake-driver-root", "--root", root], check=True)
    api = Api(tmp, drad)
    api.call("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                        "metadata": {"name": NODE}})
    node_uid = api.call("GET", "/api/v1/nodes/" + NODE)["metadata"]["uid"]
    env = dict(os.environ, NODE_NAME=NODE, CDI_ROOT=cdi, NVIDIA_DRIVER_ROOT=root,
               FEATURE_GATES="NVMLDeviceHealthCheck=true")
    env.pop("DRA_FAKE_NVML_CONFIG", None)
    env["DRA_FAKE_NVML_DEV_ROOT"] = root + "/dev"
    # Under the valgrind pass the plugin runs inside memcheck too.
    launcher = os.environ.get("DRA_TEST_LAUNCHER", "").split()
    args = launcher + [BUILD + "/dra-gpu-plugin", "--kubeconfig", api.plugin_kubeconfig,
            "--kubelet-registrar-directory-path", reg_dir,
            "--kubelet-plugins-directory-path", plug_dir,
            "--healthcheck-port", "0", "--healthcheck-address", "127.0.0.1"]
    errlog = open(tmp + "/plugin.log", "w")
    plugin = start(args, env=env, stderr=errlog)
    reg_sock = reg_dir + "/gpu.nvidia.com-reg.sock"
    dra_sock = plug_dir + "/gpu.nvidia.com/dra.sock"
    wait_for(lambda: os.path.exists(reg_sock), "the registration socket", 120)

    # The published slice.
    sl = wait_for(lambda: api.slices(), "a ResourceSlice", 60)
    check(len(sl) == 1, "one slice")
    s = sl[0]
    check(s["spec"]["driver"] == "gpu.nvidia.com" and s["spec"]["nodeName"] == NODE, "driver/node")
    check(s["spec"]["pool"]["name"] == NODE and s["spec"]["pool"]["resourceSliceCount"] == 1, "pool")
    check(s["metadata"]["generateName"] == NODE + "-gpu.nvidia.com-", "generateName")
    check(s["metadata"]["ownerReferences"][0]["kind"] == "Node" and
          s["metadata"]["ownerReferences"][0]["uid"] == node_uid, "ownerReference")
    names = sorted(d["name"] for d in s["spec"]["devices"])
    check(names == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"], "devices %s" % names)
    gen0 = s["spec"]["pool"]["generation"]
    log("published", s["metadata"]["name"], "generation", gen0)

    # Registration, as the kubelet's plugin watcher does it.
    reg = pb["regg"].RegistrationStub(channel("unix:" + reg_sock))
    info = reg.GetInfo(pb["reg"].InfoRequest(), timeout=10)
    check(info.type == "DRAPlugin" and info.name == "gpu.nvidia.com", "PluginInfo")
    check(info.endpoint == dra_sock, "endpoint " + info.endpoint)
    check(list(info.supported_versions) == ["v1.DRAPlugin", "v1beta1.DRAPlugin"], "versions")
    reg.NotifyRegistrationStatus(pb["reg"].RegistrationStatus(plugin_registered=True), timeout=10)
    try:
        reg.NotifyRegistrationStatus(pb["reg"].RegistrationStatus(plugin_registered=False,
                                                                  error="no"), timeout=10)
        check(False, "a failed registration must be an error")
    except grpc.RpcError as e:
        check("failed registration process: no" in e.details(), e.details())

    # A claim allocated by dractl from the published slice.
    with open(tmp + "/alloc.yaml", "w") as f:
        f.write(yaml.safe_dump(s) + "---\n" + open(SRC + "/examples/deviceclass-gpu.yaml").read() +
                "\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: "
                "{name: gpu-claim, namespace: default}\nspec:\n  devices:\n    requests:\n"
                "    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com}\n")
    out = subprocess.run([BUILD + "/dractl", "allocate", "-f", tmp + "/alloc.yaml"], check=True,
                         capture_output=True, text=True).stdout
    claim = [d for d in yaml.safe_load_all(out) if d and d.get("kind") == "ResourceClaim"][0]
    claim["metadata"] = {"name": "gpu-claim", "namespace": "default"}
    dev = claim["status"]["allocation"]["devices"]["results"][0]["device"]
    uid = api.add_claim(json.loads(json.dumps(claim)))
    log("dractl allocated", dev)

    v1 = pb["v1g"].DRAPluginStub(channel("unix:" + dra_sock))
    creq = pb["v1"].Claim(namespace="default", uid=uid, name="gpu-claim")
    resp = v1.NodePrepareResources(pb["v1"].NodePrepareResourcesRequest(claims=[creq]), timeout=45)
    r = resp.claims[uid]
    check(r.error == "", "prepare error: " + r.error)
    check(len(r.devices) == 1 and r.devices[0].device_name == dev and
          r.devices[0].pool_name == NODE and list(r.devices[0].request_names) == ["gpu"], "devices")
    ids = list(r.devices[0].cdi_device_ids)
    check(ids == ["k8s.gpu.nvidia.com/claim=%s-%s" % (uid, dev)], "cdi ids %s" % ids)
    spec_path = cdi + "/k8s.gpu.nvidia.com-claim_%s.yaml" % uid
    spec = check_cdi_spec(spec_path, uid, [dev])
    if os.environ.get("DRA_TEST_VERBOSE"):
        log(open(spec_path).read())
    resolve(cdi, ids)
    edits = spec["containerEdits"]
    check(any(m["containerPath"] == "/usr/bin/nvidia-smi" for m in edits["mounts"]), "nvidia-smi")
    check(any(m["containerPath"].endswith("/libnvidia-ml.so.1") for m in edits["mounts"]), "NVML")
    check(not any("DRA_FAKE_NVML" in e for e in edits.get("env", [])), "no fake env")
    node0 = spec["devices"][0]["containerEdits"]["deviceNodes"][0]
    minor = dev.split("-")[1]
    check(node0["path"] == "/dev/nvidia" + minor and node0["hostPath"] == root + "/dev/nvidia" + minor
          and node0.get("type") == "c" and node0.get("major") == 195
          and node0.get("minor") == int(minor), "device node %s" % node0)
    log("prepared; CDI spec ok:", os.path.basename(spec_path), spec["cdiVersion"])

    # Restart between prepare and unprepare.
    check(stop(plugin) == 0, "plugin exit status")
    plugin = start(args, env=env, stderr=errlog)
    wait_for(lambda: os.path.exists(reg_sock) and os.path.exists(dra_sock), "the restarted plugin",
             120)
    b1 = pb["b1g"].DRAPluginStub(channel("unix:" + dra_sock))
    bclaim = pb["b1"].Claim(namespace="default", uid=uid, name="gpu-claim")
    resp = b1.NodePrepareResources(pb["b1"].NodePrepareResourcesRequest(claims=[bclaim]), timeout=45)
    check(list(resp.claims[uid].devices[0].cdi_device_ids) == ids, "same answer after restart")
    uresp = v1.NodeUnprepareResources(pb["v1"].NodeUnprepareResourcesRequest(claims=[creq]),
                                      timeout=45)
    check(uresp.claims[uid].error == "", "unprepare error")
    check(not os.path.exists(spec_path), "CDI spec removed")
    uresp = v1.NodeUnprepareResources(pb["v1"].NodeUnprepareResourcesRequest(claims=[creq]),
                                      timeout=45)
    check(uid in uresp.claims and uresp.claims[uid].error == "", "unprepare twice")
    log("restart, v1beta1 prepare, unprepare: ok")

    # A claim the API server does not have fails the whole call.
    try:
        v1.NodePrepareResources(pb["v1"].NodePrepareResourcesRequest(
            claims=[pb["v1"].Claim(namespace="default", uid="x", name="nope")]), timeout=45)
        check(False, "missing claim must fail the call")
    except grpc.RpcError as e:
        check("retrieve claim default/nope" in e.details(), e.details())

    # Malformed, oversized and unknown calls.
    ch = channel("unix:" + dra_sock, options=[("grpc.max_send_message_length", 64 << 20)])
    raw = ch.unary_unary("/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
                         request_serializer=None, response_deserializer=None)
    for bad in (b"\x0a\x05\x0a\x01", b"\x0a\x03\x0a\x01\xff", b"\xff\xff\xff"):
        try:
            raw(bad, timeout=10)
            check(False, "malformed request accepted")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.INVALID_ARGUMENT, "malformed: %s" % e.code())
    try:
        raw(b"\x0a\x80\x80\x80\x03" + b"\x1a\xfa\xff\xff\x02" + b"x" * (5 << 20), timeout=20)
        check(False, "oversized request accepted")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, "oversized: %s" % e.code())
    try:
        ch.unary_unary("/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/Nope")(b"", timeout=10)
        check(False, "unknown method accepted")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.UNIMPLEMENTED, "unknown: %s" % e.code())
    check(plugin.poll() is None, "plugin still running")
    log("malformed / oversized / unknown: errors, plugin alive")

    # The health port.
    def health_port():
        found = re.findall(r"health port (\d+)", open(tmp + "/plugin.log").read())
        return found[-1] if found else None
    port = int(wait_for(health_port, "the health port"))
    hs = pb["hg"].HealthStub(channel("127.0.0.1:%d" % port))
    for svc in ("", "liveness"):
        r = hs.Check(pb["h"].HealthCheckRequest(service=svc), timeout=10)
        check(r.status == pb["h"].HealthCheckResponse.SERVING, "health %r" % svc)
    try:
        hs.Check(pb["h"].HealthCheckRequest(service="other"), timeout=10)
        check(False, "unknown health service")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.NOT_FOUND, "health other: %s" % e.code())
    log("health check: SERVING")

    # Device health: an XID from the fake NVML taints gpu-1.
    events = root + "/usr/lib/x86_64-linux-gnu/dra-fake-nvml.events"
    with open(events, "a") as f:
        f.write("xid gpu-1 79 reset\n")

    def tainted():
        for d in api.slices()[0]["spec"]["devices"]:
            if d["name"] == "gpu-1" and d.get("taints"):
                return d["taints"]
        return None
    t = wait_for(tainted, "the XID taint", 60)
    check(t[0]["key"] == "gpu.nvidia.com/xid" and t[0]["value"] == "79" and
          t[0]["effect"] == "NoSchedule", "taint %s" % t)
    gen1 = api.slices()[0]["spec"]["pool"]["generation"]
    check(gen1 > gen0, "generation bumped")
    claim2 = json.loads(json.dumps(claim))
    claim2["metadata"] = {"name": "c2", "namespace": "default"}
    claim2["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-1"
    uid2 = api.add_claim(claim2)
    c2 = pb["v1"].Claim(namespace="default", uid=uid2, name="c2")
    r = v1.NodePrepareResources(pb["v1"].NodePrepareResourcesRequest(claims=[c2]), timeout=45)
    check("requested device is not healthy: gpu-1" in r.claims[uid2].error, r.claims[uid2].error)
    with open(events, "a") as f:
        f.write("clear gpu-1\n")
    wait_for(lambda: not tainted(), "recovery", 60)
    r = v1.NodePrepareResources(pb["v1"].NodePrepareResourcesRequest(claims=[c2]), timeout=45)
    check(r.claims[uid2].error == "", r.claims[uid2].error)
    log("XID taint, refused prepare, recovery: ok")

    # Uninstall: --cleanup removes this node's slices.
    check(stop(plugin) == 0, "plugin exit status")
    subprocess.run(args + ["--cleanup"], env=env, check=True, stderr=errlog, timeout=120)
    check(api.slices() == [], "slices removed")
    log("cleanup: slices removed")


def main():
    # --drad PATH: drad is the API server instead of the stub.
    drad = sys.argv[sys.argv.index("--drad") + 1] if "--drad" in sys.argv else None
    tmp = tempfile.mkdtemp(prefix="dra-plugin-kubelet-")
    ok = False
    try:
        run(tmp, drad)
        ok = True
    finally:
        for p in list(PROCS):
            stop(p, signal.SIGKILL if p.poll() is None else signal.SIGTERM)
        for f in ("plugin.log", "drad.log"):
            if not ok and os.path.exists(tmp + "/" + f):
                sys.stderr.write("--- %s ---\n%s" % (f, open(tmp + "/" + f).read()))
        shutil.rmtree(tmp, ignore_errors=True)
    log("PASS")


if __name__ == "__main__":
    main()
