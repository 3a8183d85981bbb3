#!/bin/sh
# Drives `dractl validate` end to end: the examples are valid (exit 0);
# every invalid fixture of tests/data/api/invalid (create mode) exits 1
# and prints exactly its "# expect:" lines, each after the object's
# "Kind/name: " prefix; stdin, several -f, decode errors and usage
# errors (exit 2) behave. Usage: validate_test.sh DRACTL SOURCE_DIR
set -u
DRACTL=$1
SRC=$2
RUN="${DRA_TEST_LAUNCHER:-}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
checked=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect CODE CMD...: runs CMD (stdout to $T/out, stderr to $T/err).
expect() {
    want=$1; shift
    "$@" >"$T/out" 2>"$T/err"
    got=$?
    [ "$got" -eq "$want" ] || fail "exit $got, want $want: $* ($(head -c 300 "$T/err"))"
}

# The examples, one by one and all at once.
for f in "$SRC"/examples/*.yaml; do
    expect 0 $RUN "$DRACTL" validate -f "$f"
    grep -qv ': valid$' "$T/out" && fail "$f: $(cat "$T/out")"
done
set --
for f in "$SRC"/examples/*.yaml; do set -- "$@" -f "$f"; done
expect 0 $RUN "$DRACTL" validate "$@"
[ -s "$T/out" ] || fail "no output for the examples"

# Invalid fixtures: exit 1 and exactly the expected messages.
for f in "$SRC"/tests/data/api/invalid/*.yaml; do
    grep -q '^# mode: ' "$f" && continue   # update pairs: see test_api_validate
    # Under valgrind every eighth fixture runs in memcheck; the whole
    # table would take minutes there and adds little.
    run=""
    [ $((checked % 8)) -eq 0 ] && run="$RUN"
    expect 1 $run "$DRACTL" validate -f "$f"
    sed -n 's/^# expect: //p' "$f" >"$T/want"
    sed 's/^[^:]*: //' "$T/out" >"$T/got"
    if ! cmp -s "$T/want" "$T/got"; then
        fail "$f"
        diff "$T/want" "$T/got" | head -20
    fi
    checked=$((checked + 1))
done
[ "$checked" -ge 80 ] || fail "only $checked invalid fixtures checked"

# The object identity prefix, from standard input.
expect 1 $RUN "$DRACTL" validate -f - <"$SRC/tests/data/api/invalid/claim-count-negative.yaml"
printf '%s\n' 'ResourceClaim/claim: spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "stdin: $(cat "$T/out")"

# A valid and an invalid file together: every object is reported, exit 1.
expect 1 $RUN "$DRACTL" validate -f "$SRC/examples/deviceclass-gpu.yaml" \
    -f "$SRC/tests/data/api/invalid/slice-no-node-selection.yaml"
[ "$(wc -l <"$T/out")" -eq 2 ] || fail "mixed files: $(cat "$T/out")"
grep -q '^DeviceClass/gpu.nvidia.com: valid$' "$T/out" || fail "mixed files: $(cat "$T/out")"

# CEL selectors are compiled: syntax, result type, and good ones.
cat >"$T/cel.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: cel
spec:
  selectors:
  - cel: {expression: "device.driver == "}
  - cel: {expression: "1 + 2"}
  - cel: {expression: "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].model == 'A100'"}
YAML
expect 1 $RUN "$DRACTL" validate -f "$T/cel.yaml"
grep -q '^DeviceClass/cel: spec.selectors\[0\].cel.expression: Invalid value: "device.driver == ": compilation failed: ERROR: <input>:1:18: ' "$T/out" ||
    fail "CEL syntax error: $(cat "$T/out")"
grep -q '^DeviceClass/cel: spec.selectors\[1\].cel.expression: Invalid value: "1 + 2": must evaluate to bool' "$T/out" ||
    fail "CEL result type: $(cat "$T/out")"
grep -q 'selectors\[2\]' "$T/out" && fail "good CEL rejected: $(cat "$T/out")"

# Unknown fields: errors by default (kubectl's --validate=strict), or
# warnings, or ignored.
cat >"$T/unknown.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: typo
spec:
  selector: []
YAML
expect 1 $RUN "$DRACTL" validate -f "$T/unknown.yaml"
printf '%s\n' 'DeviceClass/typo: unknown field "spec.selector"' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "strict unknown field: $(cat "$T/out")"
expect 0 $RUN "$DRACTL" validate --validate=warn -f "$T/unknown.yaml"
printf '%s\n' 'DeviceClass/typo: warning: unknown field "spec.selector"' 'DeviceClass/typo: valid' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "warn unknown field: $(cat "$T/out")"
expect 0 $RUN "$DRACTL" validate -f "$T/unknown.yaml" --validate=ignore
printf '%s\n' 'DeviceClass/typo: valid' >"$T/want"
cmp -s "$T/want" "$T/out" || fail "ignore unknown field: $(cat "$T/out")"
expect 2 $RUN "$DRACTL" validate --validate=maybe -f "$T/unknown.yaml"

# Input that does not decode: exit 1 with the position.
printf 'apiVersion: resource.k8s.io/v1\nkind: [\n' >"$T/bad.yaml"
expect 1 $RUN "$DRACTL" validate -f "$T/bad.yaml"
grep -q "^$T/bad.yaml:[0-9]*:[0-9]*: " "$T/out" || fail "parse error: $(cat "$T/out")"

# Usage and I/O errors: exit 2.
expect 2 $RUN "$DRACTL" validate
expect 2 $RUN "$DRACTL" validate -f
expect 2 $RUN "$DRACTL" validate "$SRC/examples/deviceclass-gpu.yaml"
expect 2 $RUN "$DRACTL" validate -f "$T/does-not-exist.yaml"
expect 0 $RUN "$DRACTL" validate --help

echo "$checked invalid fixtures checked, $fails failures"
[ "$fails" -eq 0 ]
