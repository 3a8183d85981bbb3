#!/bin/bash
# capture.sh DRAD KUBECTL OUTDIR: runs the kubectl commands the e2e tests
# use through capture_proxy.py in front of a fresh drad (--nodes none, a
# temporary data directory, stopped by pid) and writes, per command, the
# method, path and Content-Type of every request to OUTDIR/summary.txt and
# the raw bodies to OUTDIR/NNN.body. A tool: it made data/ and the report
# of which commands send protobuf; no test runs it.
set -u
drad=$1 kubectl=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pbcap.XXXXXX")
mkdir -p "$out"
dpid= ppid=
cleanup() {
  [ -n "$ppid" ] && kill -TERM "$ppid" 2>/dev/null && wait "$ppid" 2>/dev/null
  [ -n "$dpid" ] && kill -TERM "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
"$drad" --data-dir "$tmp/d" --listen 127.0.0.1:0 --nodes none >"$tmp/out" 2>"$tmp/err" &
dpid=$!
for _ in $(seq 200); do grep -q kubeconfig: "$tmp/out" && break; sleep 0.05; done
url=$(sed -n 's/.*serving \(https:[^;]*\);.*/\1/p' "$tmp/out")
python3 "$here/capture_proxy.py" "$url" "$tmp/d/ca.crt" "$tmp/d/token" "$out" >"$tmp/pout" &
ppid=$!
for _ in $(seq 100); do grep -q port "$tmp/pout" && break; sleep 0.05; done
port=$(sed -n 's/port //p' "$tmp/pout")
cat >"$tmp/kc" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:$port"}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
KC
export KUBECONFIG=$tmp/kc
k() { "$kubectl" "$@" >>"$tmp/log" 2>&1; }
mark() { curl -s -o /dev/null "http://127.0.0.1:$port/__mark__/$1"; }
mark create-namespace; k create namespace pbx
mark create-namespace-dry; k create namespace pby --dry-run=server
mark create-namespace-save-config; k create namespace pbs --save-config
mark label-ns; k label namespace pbx a=b
mark annotate-ns; k annotate namespace pbx c=d
mark apply-seed; k apply -f "$src/examples/seed.yaml"
mark get-ns; k get namespace pbx -o yaml
mark describe-pod; k describe pod gpu-test-pod
mark describe-claim; k describe resourceclaims
mark patch-claim; k patch resourceclaimtemplate single-gpu --type=merge -p '{"metadata":{"labels":{"x":"one"}}}'
mark replace; "$kubectl" get resourceclaimtemplate single-gpu -o yaml >"$tmp/rct.yaml" 2>>"$tmp/log"; k replace -f "$tmp/rct.yaml"
mark edit; KUBE_EDITOR="sed -i -e s/x:\\ one/x:\\ two/" k edit resourceclaimtemplate single-gpu
mark create-f-ns; printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: pbf}\n' >"$tmp/ns.yaml"; k create -f "$tmp/ns.yaml"
mark wait; k wait --for=delete pod/nonexistent --timeout=1s
mark run; k run pbpod --image=busybox --restart=Never
mark delete-pod; k delete pod pbpod --wait=false
mark delete-pod-grace; k delete pod gpu-test-pod --grace-period=0 --force
mark delete-f; k delete -f "$src/examples/resourceclaimtemplate-single-gpu.yaml"
mark delete-all; k delete resourceclaims --all --wait=false
mark delete-ns; k delete namespace pbx --wait=false
mark create-ns2; k create namespace pbz --dry-run=client -o yaml
mark end
echo "drad: $url" >"$out/summary.txt"
for t in "$out"/*.txt; do
  [ "$t" = "$out/summary.txt" ] && continue
  b=${t%.txt}.body
  printf '%s %s %s\n' "$(basename "${t%.txt}")" "$(head -1 "$t")" \
    "$(sed -n 's/^Content-Type: //p' "$t")$( [ -f "$b" ] && echo " ($(wc -c <"$b") bytes)")" >>"$out/summary.txt"
done
cat "$tmp/log" >"$out/kubectl.log"
