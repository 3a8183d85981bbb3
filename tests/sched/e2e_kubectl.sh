#!/usr/bin/env bash
# e2e_kubectl.sh: issue 9's scenarios through drad with the real kubectl,
# twice: with drad's own scheduler (pods use default-scheduler), and with
# drad's scheduler off (DRAD_SCHEDULER=off) and dra-scheduler running as
# a separate process over REST against drad's kubeconfig (pods name it in
# spec.schedulerName; drad's claim controller makes the claims, as
# kube-controller-manager would in a real cluster).
#   1. the seed pod is bound to gb200-pod2-f06-node05 with gpu-0 and its
#      claim shows allocated,reserved;
#   2. five pods on the four-GPU node: four bound, the fifth pending with
#      a FailedScheduling event and condition saying the four GPUs are
#      allocated (kubectl describe), then bound once a pod is deleted;
#   3. a pod whose claim asks for more than 200Gi stays pending with an
#      event naming the selector and the memory it read;
#   4. kubectl dra explain pod (dractl through the kubectl plugin name),
#      dractl explain claim, and dractl simulate of one more pod on the
#      live cluster (told why not, nothing written).
# Every process started here is stopped by its pid on exit. Skips (77)
# without kubectl or drad.
set -u
b=${DRA_BUILD_DIR:?}
src=${DRA_SOURCE_DIR:?}
drad=$b/cmd/drad/drad
sched=$b/dra-scheduler
command -v kubectl >/dev/null 2>&1 || { echo "no kubectl: skipped"; exit 77; }
[ -x "$drad" ] || { echo "drad not built: skipped"; exit 77; }
[ -x "$sched" ] || { echo "dra-scheduler not built: skipped"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dra-sched-e2e.XXXXXX")
pids=()
fails=0
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  pids=()
  [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL [$mode]: $*"; fails=$((fails + 1)); }
k() { kubectl --kubeconfig "$kc" "$@"; }

# start_drad DIR [ENV...]: drad on a free port; sets kc.
start_drad() {
  local dir=$1
  shift
  mkdir -p "$dir"
  env "$@" "$drad" --data-dir "$dir/data" --listen 127.0.0.1:0 --nodes none >"$dir/out" 2>"$dir/err" &
  pids+=($!)
  for _ in $(seq 1 400); do
    grep -q 'kubeconfig: ' "$dir/out" 2>/dev/null && break
    sleep 0.05
  done
  kc=$(sed -n 's/.*kubeconfig: //p' "$dir/out")
  [ -s "$kc" ] || { echo "drad did not start:"; cat "$dir/err"; exit 1; }
}

stop_all() {
  cleanup_pids=("${pids[@]}")
  for p in "${cleanup_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${cleanup_pids[@]}"; do wait "$p" 2>/dev/null; done
  pids=()
}

# The pods of this mode: $sn is the schedulerName to add to every pod.
pods_yaml() { # FILE: the file with schedulerName set in every Pod spec
  sed "s/^spec:\$/spec:\n  schedulerName: $sn/" "$1"
}

# wait_node POD: the pod's node once bound (15 s), or nothing.
wait_node() {
  local n
  for _ in $(seq 1 300); do
    n=$(k get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null)
    [ -n "$n" ] && { echo "$n"; return; }
    sleep 0.05
  done
}

# wait_describe POD TEXT: kubectl describe pod shows TEXT (15 s).
wait_describe() {
  for _ in $(seq 1 150); do
    k describe pod "$1" 2>/dev/null | grep -qF -- "$2" && return 0
    sleep 0.1
  done
  return 1
}

node_yaml='apiVersion: v1
kind: Node
metadata:
  name: gb200-pod2-f06-node05
  labels: {kubernetes.io/hostname: gb200-pod2-f06-node05}'

run_mode() {
  mode=$1
  local dir=$tmp/$mode
  if [ "$mode" = drad ]; then
    sn=default-scheduler
    start_drad "$dir"
  else
    sn=dra-scheduler
    start_drad "$dir" DRAD_SCHEDULER=off
    "$sched" --kubeconfig "$kc" --v 0 >"$dir/sched.out" 2>&1 &
    pids+=($!)
  fi

  # 1. the seed
  echo "$node_yaml" | k apply -f - >/dev/null || fail "node"
  k apply -f "$src/examples/resourceslice-gb200.yaml" -f "$src/examples/deviceclass-gpu.yaml" \
    -f "$src/examples/resourceclaimtemplate-single-gpu.yaml" >/dev/null || fail "seed objects"
  pods_yaml "$src/examples/pod-gpu-test.yaml" | k apply -f - >/dev/null || fail "seed pod"
  [ "$(wait_node gpu-test-pod)" = gb200-pod2-f06-node05 ] || fail "seed pod not bound to gb200-pod2-f06-node05"
  claim=$(k get pod gpu-test-pod -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
  case "$claim" in gpu-test-pod-gpu-claim-?????) ;; *) fail "generated claim name '$claim'" ;; esac
  [ "$(k get resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[0].device}')" = gpu-0 ] \
    || fail "seed claim device is not gpu-0"
  state=$(k get resourceclaim "$claim" --no-headers 2>/dev/null | awk '{print $2}')
  [ "$state" = "allocated,reserved" ] || fail "claim state '$state', want allocated,reserved"

  # 2. five pods on four GPUs (the seed pod holds gpu-0: four more pods)
  for i in 1 2 3 4; do
    pods_yaml "$src/examples/pod-gpu-test.yaml" | sed "s/name: gpu-test-pod\$/name: gpu-pod-$i/" |
      k apply -f - >/dev/null || fail "pod $i"
  done
  bound=0 pending=
  for _ in $(seq 1 200); do
    bound=0 pending=
    for p in gpu-test-pod gpu-pod-1 gpu-pod-2 gpu-pod-3 gpu-pod-4; do
      if [ -n "$(k get pod $p -o jsonpath='{.spec.nodeName}')" ]; then bound=$((bound + 1)); else pending=$p; fi
    done
    [ $bound -eq 4 ] && [ -n "$pending" ] && wait_describe "$pending" FailedScheduling && break
    sleep 0.1
  done
  [ $bound -eq 4 ] || fail "$bound pods bound, want 4"
  if [ -n "$pending" ]; then
    wait_describe "$pending" "0/1 nodes are available: 1 cannot allocate all claims." ||
      fail "no FailedScheduling event for $pending"
    wait_describe "$pending" "4 are already allocated" || fail "the event does not say the four GPUs are allocated"
    k get pod "$pending" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}' | grep -q Unschedulable ||
      fail "no PodScheduled=False Unschedulable condition"
    # kubectl finds kubectl-dra on the PATH and runs it as a plugin.
    out=$(PATH="$b:$PATH" KUBECONFIG="$kc" kubectl dra explain pod "$pending" 2>&1)
    case "$out" in *"cannot be scheduled"*"request gpu"*) ;; *) fail "kubectl dra explain: $out" ;; esac
    out=$("$b/dractl" explain claim "$claim" --kubeconfig "$kc" 2>&1)
    case "$out" in *"is allocated on node gb200-pod2-f06-node05 (reserved): for pods gpu-test-pod"*) ;;
      *) fail "dractl explain claim: $out" ;; esac
    # What if one more pod came? Simulated on the live cluster, not written.
    pods_yaml "$src/examples/pod-gpu-test.yaml" | sed "s/name: gpu-test-pod\$/name: what-if/" >"$dir/what-if.yaml"
    out=$("$b/dractl" simulate -f "$dir/what-if.yaml" --kubeconfig "$kc" 2>&1)
    case "$out" in *"pod default/what-if: cannot be scheduled"*"4 are already allocated"*) ;;
      *) fail "dractl simulate on the live cluster: $out" ;; esac
    k get pod what-if >/dev/null 2>&1 && fail "dractl simulate wrote the pod"
    victim=gpu-pod-1
    [ "$pending" = gpu-pod-1 ] && victim=gpu-pod-2
    k delete pod "$victim" --wait=false >/dev/null || fail "delete $victim"
    [ "$(wait_node "$pending")" = gb200-pod2-f06-node05 ] || fail "$pending not bound after $victim was deleted"
  fi

  # 3. more than 200Gi: pending, the event names the selector
  cat <<EOF | k apply -f - >/dev/null || fail "big claim"
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: big, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel:
            expression: "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('200Gi')) > 0"
---
apiVersion: v1
kind: Pod
metadata: {name: big-pod, namespace: default}
spec:
  schedulerName: $sn
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: big}]
EOF
  wait_describe big-pod "selector #0 (memory is 189471Mi, needs more than 200Gi)" ||
    fail "big-pod event does not name the selector"
  [ -z "$(k get pod big-pod -o jsonpath='{.spec.nodeName}')" ] || fail "big-pod got bound"
  stop_all
}

run_mode drad
run_mode rest
[ $fails -eq 0 ] && echo "e2e_kubectl: all checks passed (drad's scheduler, and dra-scheduler over REST)"
exit $((fails > 0))
