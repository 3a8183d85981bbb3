#!/usr/bin/env bash
# dractl's scheduler-backed commands offline: simulate on the seed (the
# pod gets gpu-0), on five pods for four GPUs (the fifth is explained,
# naming the request), a claim no device fits (the selector and the
# value it read), exit codes; cel eval with the Kubernetes libraries
# without --device; the kubectl-dra name.
set -u
b=${DRA_BUILD_DIR:?}
src=${DRA_SOURCE_DIR:?}
dractl=$b/dractl
fail=0
check() { # description, expected substring, actual
  case "$3" in
    *"$2"*) ;;
    *) echo "FAIL: $1: expected '$2' in:"; echo "$3"; fail=1 ;;
  esac
}

out=$($dractl simulate -f "$src/examples/seed.yaml"); rc=$?
check "seed" "pod default/gpu-test-pod: fits on node gb200-pod2-f06-node05" "$out"
check "seed device" "allocated now: gpu.nvidia.com/gb200-pod2-f06-node05/gpu-0" "$out"
[ $rc -eq 0 ] || { echo "FAIL: seed exit $rc"; fail=1; }

out=$($dractl simulate -f "$src/tests/data/sched/dractl/five-pods.yaml"); rc=$?
check "fifth pod" "pod default/gpu-test-pod-4: cannot be scheduled" "$out"
check "fifth pod message" "0/1 nodes are available: 1 cannot allocate all claims. claim default/gpu-test-pod-4-gpu-claim-" "$out"
check "fifth pod request" "request gpu: none of the 4 devices of class gpu.nvidia.com fits" "$out"
check "big claim" "claim default/big is pending and cannot be allocated on any node (1 node)" "$out"
check "big claim selector" "memory is 189471Mi, needs more than 200Gi" "$out"
[ $rc -eq 1 ] || { echo "FAIL: five pods exit $rc, want 1"; fail=1; }

out=$($dractl simulate -f "$src/examples/seed.yaml" --score Packed 2>&1); rc=$?
check "bad score" "--score must be LeastAllocated or MostAllocated" "$out"
[ $rc -eq 2 ] || { echo "FAIL: bad score exit $rc, want 2"; fail=1; }

out=$($dractl cel eval "quantity('1.5Gi').isGreaterThan(quantity('1Gi'))"); check "cel quantity" "true" "$out"
out=$($dractl cel eval "semver('1.2.3').minor()"); check "cel semver" "2" "$out"
out=$($dractl cel eval "[3, 1, 2].sortBy(x, x)"); check "cel lists" "[1, 2, 3]" "$out"
out=$($dractl cel eval "math.greatest(1, 5)"); check "cel std extension" "5" "$out"

out=$("$b/kubectl-dra" help); check "kubectl-dra" "usage: kubectl dra COMMAND" "$out"
out=$("$b/kubectl-dra" explain pod 2>&1); check "kubectl-dra explain usage" "usage: kubectl dra explain pod NAME" "$out"
exit $fail
