#!/bin/bash
# bench_walk.sh [BUILD-DIR] [PODS]: the walkthrough's figures (issue 11
# point 7), with the real kubectl against drad with its default nodes:
#  - cold start: from exec of drad on a fresh data directory to its ready
#    line (nodes registered, both plugins registered and their slices
#    published), and the same on the existing directory (warm);
#  - the seed pod: from the start of `kubectl apply -f` (template and pod)
#    to a watcher seeing the pod Running, and from the watcher seeing it
#    ADDED to seeing it Running (the cluster's part, without kubectl's
#    start-up and discovery);
#  - PODS (100) seed-like pods one after another (apply, Running, delete
#    without waiting): p50, p99 and max of both measures.
# Starts and stops its own drad (by pid) under /tmp. Prints figures;
# asserts nothing.
set -u
build=${1:-build}
pods=${2:-100}
drad=$build/cmd/drad/drad
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d /tmp/dra-bench-walk.XXXXXX)
pid=
wpid=
export HOME=$dir/home KUBECONFIG=$dir/data/kubeconfig
mkdir -p "$HOME"
cleanup() {
    [ -n "$wpid" ] && kill "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
    if [ -n "$pid" ]; then
        kubectl delete pods --all --grace-period=1 --wait=true >/dev/null 2>&1
        kill -TERM "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    fi
    for f in "$dir"/data/nodes/*/containers/*/state; do
        [ -f "$f" ] && [ "$(sed -n 's/^status=//p' "$f")" = running ] && kill -KILL "$(sed -n 's/^pid=//p' "$f")" 2>/dev/null
    done
    # Kubelet directories moved to a short path (a long data directory).
    for l in "$dir"/data/nodes/*/kubelet; do
        [ -L "$l" ] && rm -rf "$(dirname "$(readlink "$l")")"
    done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now_ms() { local t=$EPOCHREALTIME; echo $(( ${t%.*} * 1000 + 10#${t#*.} / 1000 )); }

# start: drad on $dir/data; sets ready_ms (exec to the ready line).
start() {
    rm -f "$dir/fifo"
    mkfifo "$dir/fifo"
    local t0 line
    t0=$(now_ms)
    "$drad" --data-dir "$dir/data" --listen 127.0.0.1:0 >"$dir/fifo" 2>>"$dir/err" &
    pid=$!
    read -r line <"$dir/fifo" || { echo "drad exited:"; cat "$dir/err"; exit 1; }
    ready_ms=$(( $(now_ms) - t0 ))
}
stop() { kill -TERM "$pid"; wait "$pid" 2>/dev/null; pid=; }

pct() { # pct P: the P-th percentile of the numbers on stdin
    sort -n | awk -v p="$1" '{v[NR]=$1} END {i=int((NR*p+99)/100); if (i<1) i=1; print v[i]}'
}

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
cold=""
for i in 1 2 3 4 5; do
    rm -rf "$dir/data"
    start
    cold="$cold $ready_ms"
    stop
done
warm=""
for i in 1 2 3; do
    start
    warm="$warm $ready_ms"
    stop
done
echo "cold start to Ready nodes with published slices (ms, 5 runs):$cold"
echo "warm start on the same data directory (ms, 3 runs):$warm"

start
# One watcher stamps every pod event as it arrives.
kubectl get pods -w --output-watch-events \
    -o jsonpath='{.type} {.object.metadata.name} {.object.status.phase}{"\n"}' 2>/dev/null \
    > >(while read -r ty name ph; do echo "$(now_ms) $ty $name $ph"; done >"$dir/events") &
wpid=$!
sleep 1
kubectl apply -f "$src/examples/resourceclaimtemplate-single-gpu.yaml" >/dev/null

seen() { # seen NAME TYPE-OR-PHASE: the first time stamp, or empty
    awk -v n="$1" -v w="$2" '$3 == n && ($2 == w || $4 == w) {print $1; exit}' "$dir/events"
}
run_pod() { # run_pod NAME: applies it, waits for Running; prints "e2e_ms server_ms"
    local t0 tr ta i=0
    sed "s/name: gpu-test-pod/name: $1/" "$src/examples/pod-gpu-test.yaml" >"$dir/pod.yaml"
    t0=$(now_ms)
    kubectl apply -f "$dir/pod.yaml" >/dev/null
    while [ -z "$(seen "$1" Running)" ]; do
        i=$((i + 1))
        [ $i -gt 6000 ] && { echo "$1 not Running after 60 s" >&2; return 1; }
        sleep 0.01
    done
    tr=$(seen "$1" Running)
    ta=$(seen "$1" ADDED)
    echo "$((tr - t0)) $((tr - ta))"
}

read -r e2e srv < <(run_pod gpu-test-pod)
echo "seed pod: kubectl apply -> Running ${e2e} ms; ADDED -> Running ${srv} ms"
kubectl delete pod gpu-test-pod --grace-period=1 --wait=false >/dev/null

: >"$dir/lat"
for i in $(seq 1 "$pods"); do
    run_pod "bench-$i" >>"$dir/lat" || break
    kubectl delete pod "bench-$i" --grace-period=1 --wait=false >/dev/null
done
n=$(wc -l <"$dir/lat")
echo "$n seed-like pods one after another (ms):"
echo "  kubectl apply -> Running: p50 $(cut -d' ' -f1 "$dir/lat" | pct 50), p99 $(cut -d' ' -f1 "$dir/lat" | pct 99), max $(cut -d' ' -f1 "$dir/lat" | pct 100)"
echo "  ADDED -> Running:         p50 $(cut -d' ' -f2 "$dir/lat" | pct 50), p99 $(cut -d' ' -f2 "$dir/lat" | pct 99), max $(cut -d' ' -f2 "$dir/lat" | pct 100)"
echo "  kubectl apply alone (no watch) for comparison: $( t0=$(now_ms); kubectl apply -f "$src/examples/resourceclaimtemplate-single-gpu.yaml" >/dev/null; echo $(( $(now_ms) - t0 )) ) ms"
