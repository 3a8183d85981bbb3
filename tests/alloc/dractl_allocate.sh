#!/bin/sh
# End-to-end checks of `dractl allocate` and `dractl explain`: the seed
# walkthrough (examples/seed.yaml: the pod's template claim gets gpu-0 on
# gb200-pod2-f06-node05) and a three-pod scenario where the last pod does
# not fit. Runs dractl through $DRA_TEST_LAUNCHER (valgrind in that mode).
set -u
src=${DRA_SOURCE_DIR:?}
bin=${DRA_BUILD_DIR:?}/dractl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # check DESCRIPTION COMMAND...
  what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
has() { grep -q -- "$2" "$1"; }
run() { # run OUT ERR ARGS... ; sets rc
  out=$1 err=$2; shift 2
  ${DRA_TEST_LAUNCHER:-} "$bin" "$@" >"$out" 2>"$err"
  rc=$?
}

run "$tmp/seed.out" "$tmp/seed.err" allocate -f "$src/examples/seed.yaml"
check "seed: exit 0 (got $rc; $(cat "$tmp/seed.err"))" test "$rc" = 0
check "seed: claim named after pod and claim" has "$tmp/seed.out" "name: gpu-test-pod-gpu-"
check "seed: generateName" has "$tmp/seed.out" "generateName: gpu-test-pod-gpu-"
check "seed: pod-claim-name annotation" has "$tmp/seed.out" "resource.kubernetes.io/pod-claim-name: gpu"
check "seed: device gpu-0" has "$tmp/seed.out" "device: gpu-0"
check "seed: pool" has "$tmp/seed.out" "pool: gb200-pod2-f06-node05"
check "seed: node selector" has "$tmp/seed.out" "- gb200-pod2-f06-node05"
check "seed: matchFields metadata.name" has "$tmp/seed.out" "key: metadata.name"

f="$src/tests/data/alloc/dractl/two-pods.yaml"
run "$tmp/two.out" "$tmp/two.err" allocate -f "$f"
check "two-pods: exit 1 (got $rc)" test "$rc" = 1
check "two-pods: trainer-1 on node-a" has "$tmp/two.out" "trainer-1-gpus-"
check "two-pods: node-b used" has "$tmp/two.out" "pool: node-b"
check "two-pods: class config copied" has "$tmp/two.out" "source: FromClass"
check "two-pods: trainer-3 explained on stderr" has "$tmp/two.err" "pod ml/trainer-3: cannot allocate all claims on any node"
check "two-pods: reason" has "$tmp/two.err" "4 are already allocated"

run "$tmp/ex.out" "$tmp/ex.err" explain -f "$f" --node node-z
check "explain: exit 1 (got $rc)" test "$rc" = 1
check "explain: node mismatch" has "$tmp/ex.out" "are not available on this node"
check "explain: nothing on stderr" test ! -s "$tmp/ex.err"

f="$src/tests/data/alloc/dractl/shared-claim.yaml"
run "$tmp/sh.out" "$tmp/sh.err" allocate -f "$f"
check "shared-claim: exit 0 (got $rc)" test "$rc" = 0
check "shared-claim: follows the allocated claim to node-b" has "$tmp/sh.out" "pool: node-b"
check "shared-claim: not node-a" test -z "$(grep 'pool: node-a' "$tmp/sh.out")"
run "$tmp/sh2.out" "$tmp/sh2.err" allocate -f "$f" --node node-a
check "shared-claim --node node-a: exit 1 (got $rc)" test "$rc" = 1
check "shared-claim --node node-a: reason" has "$tmp/sh2.err" "does not match"

f="$src/tests/data/alloc/dractl/hard.yaml"
run "$tmp/h.out" "$tmp/h.err" allocate -f "$f" --max-steps 1000
check "hard --max-steps: exit 1 (got $rc)" test "$rc" = 1
check "hard --max-steps: bound named" has "$tmp/h.err" "the search bound of 1000 steps was hit"
run "$tmp/t.out" "$tmp/t.err" allocate -f "$f" --timeout 0.02 --max-steps 1000000000
check "hard --timeout: exit 1 (got $rc)" test "$rc" = 1
check "hard --timeout: deadline" has "$tmp/t.err" "deadline exceeded"

# The seed with a claim nothing can satisfy: one sentence per request, the
# missing class among them, the claim named once.
f="$src/tests/data/alloc/dractl/big-claim.yaml"
run "$tmp/big.out" "$tmp/big.err" explain -f "$src/examples/seed.yaml" -f "$f"
check "big: exit 1 (got $rc)" test "$rc" = 1
check "big: the pod still fits" has "$tmp/big.out" "pod default/gpu-test-pod: can be allocated on node gb200-pod2-f06-node05"
check "big: memory named with its value" has "$tmp/big.out" \
  "  request gpu: none of the 4 devices of class gpu.nvidia.com fits, 1 needed: 4 do not match selector #0 (memory is 189471Mi, needs more than 200Gi)"
check "big: missing class, other requests still explained" has "$tmp/big.out" "  request nic: device class nic.example.com does not exist"
check "big: product named" has "$tmp/big.out" \
  '  request h100: none of the 4 devices of class gpu.nvidia.com fits, 1 needed: 4 do not match selector #0 (productName is "NVIDIA GB200", needs "NVIDIA H100")'
check "big: claim named once" test "$(grep -c 'claim default/big' "$tmp/big.out")" = 1
check "big: one line per request" test "$(grep -c '^  request ' "$tmp/big.out")" = 3
check "big: nothing on stderr" test ! -s "$tmp/big.err"
run "$tmp/big2.out" "$tmp/big2.err" allocate -f "$src/examples/seed.yaml" -f "$f"
check "big allocate: explanation on stderr" has "$tmp/big2.err" "  request nic: device class nic.example.com does not exist"
check "big allocate: no repeated prefix" test -z "$(grep 'claim default/big: claim default/big' "$tmp/big2.err")"

run "$tmp/u.out" "$tmp/u.err" allocate
check "usage: exit 2 (got $rc)" test "$rc" = 2

[ "$fails" = 0 ] && echo "dractl allocate: all checks passed"
exit "$fails"
