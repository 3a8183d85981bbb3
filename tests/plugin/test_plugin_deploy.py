#!/usr/bin/python3
"""deploy/ renders with `kubectl kustomize` and says what the chart
says: the three GPU DeviceClasses with NVIDIA's exact selectors (and
extendedResourceName on gpu.nvidia.com), which dractl validates; the
DaemonSet's environment, mounts, probes and service account; RBAC for
slices, claims and nodes; every environment variable the DaemonSet sets
is one dra-gpu-plugin reads; the components for resources.gpus.enabled,
resources.computeDomains.enabled ("not implemented"), nvidiaDriverRoot
and feature gates. Exit 77 (skip) without kubectl."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SRC = os.environ.get("DRA_SOURCE_DIR", os.path.dirname(os.path.abspath(__file__)) + "/../..")
BUILD = os.environ.get("DRA_BUILD_DIR", "")
KUBECTL = shutil.which("kubectl")
if not KUBECTL:
    print("skip: no kubectl")
    sys.exit(77)

SELECTORS = {
    "gpu.nvidia.com": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    "mig.nvidia.com": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    "vfio.gpu.nvidia.com": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'",
    "compute-domain-daemon.nvidia.com": "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == 'daemon'",
    "compute-domain-default-channel.nvidia.com": "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == 'channel' && device.attributes['compute-domain.nvidia.com'].id == 0",
}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def render(path):
    out = subprocess.run([KUBECTL, "kustomize", path], check=True, capture_output=True,
                         text=True).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def overlay(tmp, components):
    d = tempfile.mkdtemp(dir=tmp)
    base = os.path.relpath(SRC + "/deploy", d)
    with open(d + "/kustomization.yaml", "w") as f:
        f.write("resources:\n- %s\ncomponents:\n" % base)
        for c in components:
            f.write("- %s/components/%s\n" % (base, c))
    return render(d)


def by_kind(objs, kind):
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def check_classes(objs, names):
    classes = by_kind(objs, "DeviceClass")
    check(sorted(classes) == sorted(names), "DeviceClasses %s" % sorted(classes))
    for n, c in classes.items():
        check(c["apiVersion"] == "resource.k8s.io/v1", n + " apiVersion")
        check(c["spec"]["selectors"] == [{"cel": {"expression": SELECTORS[n]}}], n + " selector")
        want = "nvidia.com/gpu" if n == "gpu.nvidia.com" else None
        check(c["spec"].get("extendedResourceName") == want, n + " extendedResourceName")


def env_of(ds):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in
            ds["spec"]["template"]["spec"]["containers"][0]["env"]}


def runtime_packages():
    """The packages the Dockerfile's last stage installs."""
    text = open(SRC + "/deploy/Dockerfile").read()
    last = text[text.rindex("\nFROM "):]
    m = re.search(r"apt-get install[^\n]*\\\n(.*?)&&", last, re.S)
    check(m is not None, "no apt-get install in the Dockerfile's runtime stage")
    return set(m.group(1).replace("\\", " ").split())


def check_runtime_image(binary):
    """Every library the program links directly comes from a package the
    runtime stage installs (or libc6 and libgcc-s1, which debian:12-slim
    has), so the image cannot drift from the build (the image itself is
    not built here)."""
    pkgs = runtime_packages() | {"libc6", "libgcc-s1"}
    dyn = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True,
                         check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    check(needed, "readelf found no NEEDED entries")
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    for lib in needed:
        m = re.search(re.escape(lib) + r" => (\S+)", ldd)
        check(m is not None, "ldd does not resolve " + lib)
        owner = subprocess.run(["dpkg", "-S", os.path.realpath(m.group(1))], capture_output=True,
                               text=True)
        if owner.returncode != 0:  # a path dpkg knows under another name
            owner = subprocess.run(["dpkg", "-S", m.group(1)], capture_output=True, text=True)
        check(owner.returncode == 0, "no package owns " + m.group(1))
        pkg = owner.stdout.split(":")[0]
        check(pkg in pkgs, "%s (%s) is not installed by deploy/Dockerfile's runtime stage"
              % (lib, pkg))


def main():
    tmp = tempfile.mkdtemp(prefix="dra-deploy-")
    try:
        base = render(SRC + "/deploy")
        check_classes(base, ["gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com"])
        ds = by_kind(base, "DaemonSet")["nvidia-dra-driver-gpu-kubelet-plugin"]
        check(ds["metadata"]["namespace"] == "nvidia-dra-driver-gpu", "namespace")
        spec = ds["spec"]["template"]["spec"]
        check(spec["serviceAccountName"] == "nvidia-dra-driver-gpu-service-account-kubeletplugin",
              "service account")
        check(spec["priorityClassName"] == "system-node-critical", "priority")
        c = spec["containers"][0]
        env = env_of(ds)
        check(env["CDI_ROOT"] == "/var/run/cdi" and env["NVIDIA_DRIVER_ROOT"] == "/" and
              env["HEALTHCHECK_PORT"] == "51516" and env["NVIDIA_VISIBLE_DEVICES"] == "void",
              "env %s" % env)
        check(env["NODE_NAME"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}, "NODE_NAME")
        check(c["startupProbe"]["grpc"] == {"port": 51516, "service": "liveness"}, "probe")
        check(c["securityContext"]["privileged"] is True, "privileged")
        mounts = {m["name"]: m for m in c["volumeMounts"]}
        check(mounts["plugins"]["mountPropagation"] == "Bidirectional", "plugins propagation")
        check(mounts["driver-root"]["mountPath"] == "/driver-root" and
              mounts["driver-root"]["mountPropagation"] == "HostToContainer", "driver-root")
        check(mounts["cdi"]["mountPath"] == "/var/run/cdi", "cdi mount")
        vols = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"]}
        check(vols == {"plugins-registry": "/var/lib/kubelet/plugins_registry",
                       "plugins": "/var/lib/kubelet/plugins", "cdi": "/var/run/cdi",
                       "driver-root": "/"}, "volumes %s" % vols)
        role = by_kind(base, "ClusterRole")["nvidia-dra-driver-gpu-clusterrole-kubeletplugin"]
        rules = {(r["apiGroups"][0], r["resources"][0]): set(r["verbs"]) for r in role["rules"]}
        check({"create", "update", "delete", "get", "list"} <= rules[("resource.k8s.io",
                                                                         "resourceslices")], "slices")
        check("get" in rules[("resource.k8s.io", "resourceclaims")], "claims")
        check("get" in rules[("", "nodes")], "nodes")

        # Every variable the DaemonSet sets is one the program reads
        # (the two NVIDIA_* runtime variables are for the container runtime).
        if BUILD and os.path.exists(BUILD + "/dra-gpu-plugin"):
            help_text = subprocess.run([BUILD + "/dra-gpu-plugin", "--help"], capture_output=True,
                                       text=True).stdout
            for name in env:
                if name in ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_MIG_CONFIG_DEVICES"):
                    continue
                check("$" + name in help_text, "dra-gpu-plugin does not read " + name)
        if BUILD and os.path.exists(BUILD + "/dractl"):
            for n in ("deviceclass-gpu.yaml", "deviceclass-mig.yaml", "deviceclass-vfio-gpu.yaml"):
                subprocess.run([BUILD + "/dractl", "validate", "-f", SRC + "/deploy/" + n],
                               check=True, capture_output=True)

        objs = overlay(tmp, ["no-gpus"])
        check(not by_kind(objs, "DaemonSet") and not by_kind(objs, "DeviceClass"), "no-gpus")
        objs = overlay(tmp, ["compute-domains"])
        check_classes(objs, list(SELECTORS))
        ds = by_kind(objs, "DaemonSet")["nvidia-dra-driver-gpu-kubelet-plugin"]
        check(ds["metadata"]["annotations"]["dra-gpu-plugin/compute-domains"] == "not implemented",
              "compute domains say not implemented")
        objs = overlay(tmp, ["gpu-operator-driver-root", "feature-gates-example"])
        ds = by_kind(objs, "DaemonSet")["nvidia-dra-driver-gpu-kubelet-plugin"]
        env = env_of(ds)
        check(env["NVIDIA_DRIVER_ROOT"] == "/run/nvidia/driver", "driver root env")
        vols = {v["name"]: v["hostPath"]["path"] for v in ds["spec"]["template"]["spec"]["volumes"]}
        check(vols["driver-root"] == "/run/nvidia/driver", "driver root volume")
        check("TimeSlicingSettings=true" in env["FEATURE_GATES"], "feature gates")
        check(os.path.exists(SRC + "/deploy/Dockerfile"), "Dockerfile")
        if BUILD and os.path.exists(BUILD + "/dra-gpu-plugin"):
            check_runtime_image(BUILD + "/dra-gpu-plugin")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
