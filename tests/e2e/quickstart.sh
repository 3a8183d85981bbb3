#!/bin/bash
# quickstart.sh DRAD SOURCE_DIR: the seed walkthrough as a user runs it.
# drad starts with its defaults (the seed's two simulated GB200 nodes, the
# GPU plugin publishing their slices, the scheduler, the claim controller),
# then the first installed kubectl (what `kubectl` runs):
#   1. get nodes, get resourceslice, get deviceclass;
#   2. apply the template and pod examples;
#   3. wait for the pod to be Ready, read its GPU through kubectl logs;
#   4. see its claim allocated,reserved (get, describe) and the pod's
#      Scheduled event;
#   5. delete the pod: its claim goes with it.
# Skips (77) when no kubectl is installed. See docs/e2e.md.
set -u
. "$(dirname "$0")/lib.sh"
drad=$1
src=$2

e2e_init quick
mapfile -t KUBECTLS < <(e2e_kubectls)
[ ${#KUBECTLS[@]} -gt 0 ] || e2e_skip "no kubectl installed"
K=${KUBECTLS[0]}
T=$E2E_TMP
E2E_OUT=$T/out
e2e_start_drad "$drad"

kc() {
    "$K" --cache-dir "$T/cache" "$@" >"$E2E_OUT" 2>&1
    RC=$?
}
norm() {
    sed -E 's/ +/ /g; s/ +$//; s/(^| )[0-9]+(s|m|m[0-9]+s)( |$)/\1<age>\3/g' "$E2E_OUT"
}
has() { grep -Eq -- "$1" "$E2E_OUT"; }
ok_has() { [ "$RC" = 0 ] && has "$1"; }
out_is() { [ "$RC" = 0 ] && [ "$(cat "$E2E_OUT")" = "$1" ]; }
# poll SECONDS REGEX KUBECTL-ARGS...: repeats the command until its output
# has a matching line (a hang guard, not a timing assertion).
poll() {
    local lim=$(($1 * 4)) re=$2 i=0
    shift 2
    while :; do
        kc "$@"
        [ "$RC" = 0 ] && has "$re" && return 0
        i=$((i + 1))
        [ $i -ge $lim ] && return 1
        sleep 0.25
    done
}

N5=gb200-pod2-f06-node05
N6=gb200-pod2-f06-node06
echo "== $K against drad with its default simulated nodes"

# 1. The cluster as drad starts it.
poll 60 "^$N6 +Ready " get nodes && has "^$N5 +Ready " && pass nodes-ready \
    || fail nodes-ready "$(e2e_show)"
kc get nodes -o wide
check nodes-wide has "^$N5 +Ready +<none> +[0-9a-z]+ +v[0-9.]+ +[0-9.]+ +<none> +.+ +[a-z]+://"
poll 60 "^$N6-gpu\.nvidia\.com-[a-z0-9]{5} +$N6 +gpu\.nvidia\.com +$N6 +" get resourceslices \
    && has "^$N5-gpu\.nvidia\.com-[a-z0-9]{5} +$N5 +gpu\.nvidia\.com +$N5 +" \
    && pass slices-published || fail slices-published "$(e2e_show)"
kc get resourceslices -o 'jsonpath={range .items[*]}{.spec.nodeName} {.metadata.ownerReferences[0].kind} {.spec.devices[0].attributes.productName.string}{"\n"}{end}'
check slices-owned-by-nodes out_is "$N5 Node NVIDIA GB200
$N6 Node NVIDIA GB200"
kc get deviceclass gpu.nvidia.com -o 'jsonpath={.spec.selectors[0].cel.expression}'
check deviceclass-installed ok_has "device.driver == 'gpu.nvidia.com'"

# 2. The user's objects.
kc apply -f "$src/examples/resourceclaimtemplate-single-gpu.yaml" -f "$src/examples/pod-gpu-test.yaml"
check apply out_is "resourceclaimtemplate.resource.k8s.io/single-gpu created
pod/gpu-test-pod created"

# 3. The pod runs on one of the nodes and sees its GPU.
kc wait --for=condition=Ready pod/gpu-test-pod --timeout=120s
check pod-ready out_is "pod/gpu-test-pod condition met"
kc get pods -o wide
cp "$E2E_OUT" "$T/pods"
pod_running() {
    [ "$RC" = 0 ] && norm | grep -Eq '^gpu-test-pod 1/1 Running 0 <age> [0-9.]+ gb200-pod2-f06-node0[56] <none> <none>$'
}
check pod-running pod_running
kc logs gpu-test-pod
check logs ok_has '^GPU 0: NVIDIA GB200 \(UUID: GPU-[0-9a-f-]{36}\)$'
check logs-success has '^GPU allocation successful\.$'

# 4. Its claim, made from the template, allocated and reserved for it.
kc get resourceclaims
check claim-state ok_has '^gpu-test-pod-gpu-claim-[bcdfghjklmnpqrstvwxz2456789]{5} +allocated,reserved +'
CLAIM=$(grep -Eo '^gpu-test-pod-gpu-claim-[a-z0-9]{5}' "$E2E_OUT")
kc describe resourceclaim "$CLAIM"
check describe-claim ok_has '^ +Driver: +gpu\.nvidia\.com$'
check describe-claim-reserved has '^ +Name: +gpu-test-pod$'
kc get resourceclaim "$CLAIM" -o 'jsonpath={.status.allocation.devices.results[0].pool} {.spec.devices.requests[0].exactly.deviceClassName}'
NODE=$(sed -n 's/^gpu-test-pod .* \(gb200-pod2-f06-node0[56]\) .*/\1/p' "$T/pods")
check claim-on-pod-node out_is "$NODE gpu.nvidia.com"
kc describe pod gpu-test-pod
check describe-pod-scheduled ok_has "^  Normal +Scheduled +[0-9a-z]+ +[a-z-]+ +Successfully assigned default/gpu-test-pod to $NODE$"

# 5. Deleting the pod releases its claim, which the controller deletes.
# (The seed container's `sleep 3600` outlives SIGTERM, so the default 30 s
# grace period would be spent waiting: a short one instead.)
kc delete -f "$src/examples/pod-gpu-test.yaml" --grace-period=3
check delete-pod out_is 'pod "gpu-test-pod" deleted'
kc wait --for=delete "resourceclaim/$CLAIM" --timeout=60s
kc get resourceclaim "$CLAIM"
check claim-gone has "resourceclaims.resource.k8s.io \"$CLAIM\" not found$"
kc delete -f "$src/examples/resourceclaimtemplate-single-gpu.yaml"
check delete-template out_is 'resourceclaimtemplate.resource.k8s.io "single-gpu" deleted'

e2e_stop_drad || fail drad-exit "drad did not stop cleanly: $(cat "$E2E_TMP/drad.err")"
e2e_finish
