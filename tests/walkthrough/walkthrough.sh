#!/bin/bash
# walkthrough.sh DRAD SOURCE_DIR: the seed walkthrough with the real
# kubectl against `drad` started with no node flags (the seed's two GB200
# nodes on the fake NVML, a dra-gpu-plugin child each):
#  - the slices (one per node, NAME NODE DRIVER POOL AGE), the chart's
#    DeviceClasses, the nodes Ready;
#  - examples/resourceclaimtemplate-single-gpu.yaml and
#    examples/pod-gpu-test.yaml applied: the pod Running on node05, its
#    claim allocated,reserved with gpu-0, describe showing the allocation,
#    node selector and reservedFor, the log naming GPU-137d7996-... and
#    "GPU allocation successful.", logs -f following;
#  - deletion: the CDI spec goes, the checkpoint drops the claim, the
#    claim is deallocated and deleted;
#  - nine one-GPU pods on eight GPUs: eight run (no UUID twice), one stays
#    Pending with the scheduler's explanation and runs once another pod is
#    deleted;
#  - a two-GPU pod sees exactly its two GPUs (nvidia-smi -L);
#  - drad stops cleanly (exit 0) and leaves nothing running or listening.
# Skips (77) without kubectl or where bwrap cannot create namespaces.
. "$(dirname "$0")/lib.sh"
cd "$W_SRC" || exit 1

NODE5=gb200-pod2-f06-node05
NODE6=gb200-pod2-f06-node06
UUID0=GPU-137d7996-cb8e-7683-e47d-9c99e6f49eb5

w_log "drad with no node flags"
w_start
expect "one ready line" 1 "$(wc -l <"$W_TMP/drad.out")"

# ---- what the driver installed ------------------------------------------------
out=$(kubectl get resourceslice 2>&1 | squeeze)
expect "get resourceslice: header" "NAME NODE DRIVER POOL AGE" "$(echo "$out" | head -1)"
rows=$(echo "$out" | tail -n +2 | sed -E 's/-gpu\.nvidia\.com-[a-z0-9]{5} /-gpu.nvidia.com-xxxxx /')
expect "get resourceslice: one slice per node" \
    "$NODE5-gpu.nvidia.com-xxxxx $NODE5 gpu.nvidia.com $NODE5 <age>
$NODE6-gpu.nvidia.com-xxxxx $NODE6 gpu.nvidia.com $NODE6 <age>" "$rows"
out=$(kubectl get deviceclass -o name 2>&1)
expect "get deviceclass: the chart's classes" \
    "deviceclass.resource.k8s.io/gpu.nvidia.com
deviceclass.resource.k8s.io/mig.nvidia.com
deviceclass.resource.k8s.io/vfio.gpu.nvidia.com" "$out"
out=$(kubectl get nodes --no-headers 2>&1 | awk '{print $1, $2}')
expect "get nodes: both Ready" "$NODE5 Ready
$NODE6 Ready" "$out"
out=$(kubectl get resourceslice -o jsonpath='{range .items[*]}{.spec.nodeName} {.spec.devices[0].name} {.spec.devices[0].attributes.uuid.string} {.spec.devices[0].capacity.memory.value}{"\n"}{end}' | sort | head -1)
expect "node05's gpu-0" "$NODE5 gpu-0 $UUID0 189471Mi" "$out"

# ---- the seed pod -------------------------------------------------------------
out=$(kubectl apply -f examples/resourceclaimtemplate-single-gpu.yaml -f examples/pod-gpu-test.yaml 2>&1)
expect "apply the template and the pod" "resourceclaimtemplate.resource.k8s.io/single-gpu created
pod/gpu-test-pod created" "$out"
w_wait "gpu-test-pod Running" 60 is_phase gpu-test-pod Running
out=$(kubectl get pod gpu-test-pod -o wide 2>&1 | squeeze)
expect "get pod -o wide" "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES
gpu-test-pod 1/1 Running 0 <age> 127.0.0.1 $NODE5 <none> <none>" "$out"
out=$(kubectl get resourceclaim 2>&1 | squeeze | sed -E 's/gpu-claim-[a-z0-9]{5} /gpu-claim-xxxxx /')
expect "get resourceclaim: allocated,reserved" "NAME STATE AGE
gpu-test-pod-gpu-claim-xxxxx allocated,reserved <age>" "$out"
claim=$(kubectl get resourceclaim -o jsonpath='{.items[0].metadata.name}')
claim_uid=$(kubectl get resourceclaim "$claim" -o jsonpath='{.metadata.uid}')
pod_uid=$(kubectl get pod gpu-test-pod -o jsonpath='{.metadata.uid}')
kubectl describe resourceclaim "$claim" >"$W_TMP/describe" 2>&1
# describe_has PATTERN: the description, lines joined with '|' and runs
# of spaces squeezed, matches PATTERN.
describe_has() { sed -E 's/  +/ /g' "$W_TMP/describe" | tr '\n' '|' | grep -q -- "$1"; }
check "describe: allocation gpu-0 on node05" describe_has "Results:| Device: gpu-0| Driver: gpu.nvidia.com| Pool: $NODE5| Request: gpu"
check "describe: node selector" describe_has "Match Fields:| Key: metadata.name| Operator: In| Values:| $NODE5"
check "describe: reserved for the pod" describe_has "Reserved For:| Name: gpu-test-pod| Resource: pods| UID: $pod_uid"

seed_log() { [ "$(kubectl logs gpu-test-pod 2>&1)" = "GPU 0: NVIDIA GB200 (UUID: $UUID0)
GPU allocation successful." ]; }
w_wait "the seed pod's log" 30 seed_log && pass "kubectl logs gpu-test-pod"

kubectl logs -f gpu-test-pod >"$W_TMP/follow" 2>&1 &
fpid=$!
w_bg $fpid
w_wait "logs -f prints the log" 20 grep -q successful "$W_TMP/follow"
sleep 1
check "logs -f still follows" kill -0 $fpid
kill -TERM $fpid 2>/dev/null
wait $fpid 2>/dev/null
expect "logs -f output" "GPU 0: NVIDIA GB200 (UUID: $UUID0)
GPU allocation successful." "$(cat "$W_TMP/follow")"

cdi=$W_DATA/nodes/$NODE5/cdi/k8s.gpu.nvidia.com-claim_$claim_uid.yaml
cp=$W_DATA/nodes/$NODE5/kubelet/plugins/gpu.nvidia.com/checkpoint.json
check "prepared: the CDI spec exists" test -f "$cdi"
check "prepared: the checkpoint has the claim" grep -q "\"$claim_uid\".*PrepareCompleted" "$cp"
out=$(kubectl delete pod gpu-test-pod --grace-period=1 2>&1)
expect "delete pod" 'pod "gpu-test-pod" deleted' "$out"
check "unprepared: the CDI spec is gone" test ! -e "$cdi"
check "unprepared: the checkpoint dropped the claim" sh -c "! grep -q '$claim_uid' '$cp'"
no_claims() { [ "$(kubectl get resourceclaim -o name 2>&1)" = "" ]; }
w_wait "the claim is deleted" 30 no_claims && pass "the claim is deallocated and deleted"

# ---- nine one-GPU pods on eight GPUs ---------------------------------------------
w_log "nine one-GPU pods"
for i in 1 2 3 4 5 6 7 8 9; do
    w_pod_yaml "gpu-pod-$i" single-gpu "nvidia-smi -L; sleep 3600"
    echo ---
done >"$W_TMP/nine.yaml"
kubectl apply -f "$W_TMP/nine.yaml" >/dev/null 2>&1
count_phase() { kubectl get pods -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c "^$1$"; }
eight_one() { [ "$(count_phase Running)" = 8 ] && [ "$(count_phase Pending)" = 1 ]; }
w_wait "eight Running, one Pending" 120 eight_one && pass "nine pods: eight Running, one Pending"
pending=$(kubectl get pods --field-selector=status.phase=Pending -o jsonpath='{.items[0].metadata.name}')
kubectl describe pod "$pending" >"$W_TMP/describe" 2>&1
check "the Pending pod explains why (describe)" grep -E -q 'FailedScheduling .*0/2 nodes are available' "$W_TMP/describe"
grep FailedScheduling "$W_TMP/describe" | head -1 | sed -E 's/  +/ /g'
all_logged() {
    for p in $(kubectl get pods --field-selector=status.phase=Running -o name); do
        kubectl logs "$p" 2>/dev/null | grep -q '^GPU 0' || return 1
    done
}
w_wait "every running pod logged its GPU" 60 all_logged
uuids=$(for p in $(kubectl get pods --field-selector=status.phase=Running -o name); do kubectl logs "$p"; done)
expect "each running pod sees one GPU" 8 "$(echo "$uuids" | grep -c '^GPU 0: NVIDIA GB200')"
expect "no GPU handed out twice" 8 "$(echo "$uuids" | sed -n 's/.*UUID: \(GPU-[^)]*\)).*/\1/p' | sort -u | wc -l)"
victim=$(kubectl get pods --field-selector=status.phase=Running -o jsonpath='{.items[0].metadata.name}')
kubectl delete pod "$victim" --grace-period=1 >/dev/null 2>&1
w_wait "$pending runs after $victim is deleted" 120 is_phase "$pending" Running && pass "the Pending pod runs once another is deleted"
kubectl delete pods --all --grace-period=1 >/dev/null 2>&1
w_wait "all pods gone" 60 sh -c '[ -z "$(kubectl get pods -o name)" ]'

# ---- a two-GPU pod ------------------------------------------------------------------
w_log "a two-GPU pod"
cat >"$W_TMP/two.yaml" <<'EOF'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: two-gpus
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
EOF
w_pod_yaml two-gpu-pod two-gpus "nvidia-smi -L; sleep 3600" >>"$W_TMP/two.yaml.pod"
{ echo ---; cat "$W_TMP/two.yaml.pod"; } >>"$W_TMP/two.yaml"
kubectl apply -f "$W_TMP/two.yaml" >/dev/null 2>&1
w_wait "two-gpu-pod Running" 60 is_phase two-gpu-pod Running
two_logged() { [ "$(kubectl logs two-gpu-pod 2>/dev/null | wc -l)" -ge 2 ]; }
w_wait "two-gpu-pod's log" 30 two_logged
log=$(kubectl logs two-gpu-pod 2>&1)
node=$(kubectl get pod two-gpu-pod -o jsonpath='{.spec.nodeName}')
devs=$(kubectl get resourceclaim -o jsonpath='{range .items[0].status.allocation.devices.results[*]}{.device}{"\n"}{end}')
want=$(for dev in $devs; do
    kubectl get resourceslice --field-selector "spec.nodeName=$node" \
        -o jsonpath="{.items[0].spec.devices[?(@.name==\"$dev\")].attributes.uuid.string}"
    echo
done | sort)
got=$(echo "$log" | sed -n 's/^GPU [01]: NVIDIA GB200 (UUID: \(GPU-[^)]*\))$/\1/p' | sort)
expect "the two-GPU pod's claim has two devices" 2 "$(echo "$devs" | wc -w)"
expect "the two-GPU pod sees two GPUs, as GPU 0 and GPU 1" "GPU 0|GPU 1" "$(echo "$log" | cut -c1-5 | paste -sd'|')"
expect "the two-GPU pod sees exactly its two GPUs" "$want" "$got"
kubectl delete pod two-gpu-pod --grace-period=1 >/dev/null 2>&1

# ---- a clean stop ------------------------------------------------------------------
w_log "stop"
w_stop
expect "drad exits 0 on SIGTERM" 0 $?
w_nothing_left
w_finish
