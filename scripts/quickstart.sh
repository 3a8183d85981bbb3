#!/bin/sh
# scripts/quickstart.sh: the seed walkthrough in one command, from a
# fresh clone on Debian 12 (as root, or a user with sudo):
#   1. installs the Debian packages (scripts/deps.sh);
#   2. builds drad and what it starts (Release, in build/);
#   3. starts drad in the background on a fresh data directory: the API
#      server, the scheduler and controllers, and the seed's two GB200
#      nodes, each a node agent with a dra-gpu-plugin child on the fake
#      NVIDIA driver;
#   4. runs the walkthrough with kubectl: the ResourceSlices and
#      DeviceClasses, the template and pod of examples/ applied, the pod
#      Running on gb200-pod2-f06-node05, its claim allocated,reserved;
#   5. prints the seed pod's log (the GPU it sees) and stops drad.
# kubectl is taken from PATH; where there is none (Debian has no kubectl
# package) the official release binary is downloaded from dl.k8s.io into
# build/kubectl and checked against its published SHA-256.
# Environment: QUICKSTART_KEEP=1 leaves drad running and prints how to
# use and stop it; KUBECTL_VERSION picks the downloaded version.
set -eu
cd "$(dirname "$0")/.."
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "installing packages (scripts/deps.sh)"
scripts/deps.sh

say "building drad"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target drad

KUBECTL=$(command -v kubectl || true)
if [ -z "$KUBECTL" ]; then
    v=${KUBECTL_VERSION:-v1.34.2}
    arch=$(dpkg --print-architecture)
    say "downloading kubectl $v ($arch) from dl.k8s.io"
    curl -fsSLo build/kubectl "https://dl.k8s.io/release/$v/bin/linux/$arch/kubectl"
    curl -fsSLo build/kubectl.sha256 "https://dl.k8s.io/release/$v/bin/linux/$arch/kubectl.sha256"
    echo "$(cat build/kubectl.sha256)  build/kubectl" | sha256sum --check --quiet
    chmod +x build/kubectl
    KUBECTL=$PWD/build/kubectl
fi
k() { "$KUBECTL" "$@"; }

# A short path: the nodes' gRPC sockets live under it (108-byte limit).
data=$(mktemp -d /tmp/dra-qs.XXXXXX)
pid=
stop() {
    [ -n "$pid" ] || return 0
    k delete pod gpu-test-pod --ignore-not-found --grace-period=1 >/dev/null 2>&1 || true
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
    # Kubelet directories drad moved to a short path, if it had to.
    for l in "$data"/data/nodes/*/kubelet; do
        [ -L "$l" ] && rm -rf "$(dirname "$(readlink "$l")")"
    done
    rm -rf "$data"
}

say "starting drad (data in $data, log in $data/drad.log)"
build/cmd/drad/drad --data-dir "$data/data" --listen 127.0.0.1:0 >"$data/ready" 2>"$data/drad.log" &
pid=$!
# On any failure drad is stopped; QUICKSTART_KEEP keeps it only on success.
trap stop EXIT INT TERM
i=0
until grep -q 'kubeconfig: ' "$data/ready" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cat "$data/drad.log"; exit 1; }
    i=$((i + 1))
    [ $i -lt 1200 ] || { echo "drad not ready after 60 s"; cat "$data/drad.log"; exit 1; }
    sleep 0.05
done
cat "$data/ready"
export KUBECONFIG="$data/data/kubeconfig"
export HOME="${HOME:-/root}"

say "kubectl get resourceslice"
k get resourceslice
say "kubectl get deviceclass"
k get deviceclass
say "kubectl apply -f examples/resourceclaimtemplate-single-gpu.yaml -f examples/pod-gpu-test.yaml"
k apply -f examples/resourceclaimtemplate-single-gpu.yaml -f examples/pod-gpu-test.yaml
k wait --for=jsonpath='{.status.phase}'=Running pod/gpu-test-pod --timeout=60s >/dev/null
say "kubectl get pod gpu-test-pod -o wide"
k get pod gpu-test-pod -o wide
say "kubectl get resourceclaim"
k get resourceclaim
i=0
until k logs gpu-test-pod 2>/dev/null | grep -q successful; do
    i=$((i + 1))
    [ $i -lt 100 ] || break
    sleep 0.1
done
say "kubectl logs gpu-test-pod"
k logs gpu-test-pod

if [ -n "${QUICKSTART_KEEP:-}" ]; then
    say "drad keeps running (pid $pid)"
    echo "export KUBECONFIG=$KUBECONFIG"
    echo "stop it with: kill $pid   (its data: $data)"
    pid=
else
    say "stopping drad"
    stop
    echo "done"
fi
