#!/bin/sh
# Drives `dractl convert` end to end: normalised output is a fixed point,
# stdin and several -f work, YAML streams and JSON Lists come out as
# kubectl prints them, and exit codes are 0 / 1 (bad object) / 2 (usage,
# I/O). Usage: convert_test.sh DRACTL SOURCE_DIR
set -u
DRACTL=$1
SRC=$2
RUN="${DRA_TEST_LAUNCHER:-}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect CODE CMD...: runs CMD (stdout to $T/out, stderr to $T/err).
expect() {
    want=$1; shift
    "$@" >"$T/out" 2>"$T/err"
    got=$?
    [ "$got" -eq "$want" ] || fail "exit $got, want $want: $* ($(head -c 300 "$T/err"))"
}

# Conversion is a fixed point, in both output formats and both orders
# (all inputs at once: a YAML stream, or a JSON List read back as one).
all=""
for f in "$SRC"/examples/*.yaml "$SRC"/tests/data/api/roundtrip/*.yaml \
    "$SRC"/tests/data/api/roundtrip/*.json; do
    all="$all -f $f"
done
for o in yaml json; do
    for ord in "" --go-order; do
        expect 0 $RUN "$DRACTL" convert $all -o $o $ord
        cp "$T/out" "$T/one"
        expect 0 $RUN "$DRACTL" convert -f "$T/one" -o $o $ord
        cmp -s "$T/one" "$T/out" || fail "not a fixed point: -o $o $ord"
    done
done

# Key order as kubectl prints it: YAML naturally (go-yaml v2: "a2" before
# "a10"), JSON bytewise (encoding/json: "a10" before "a2").
printf 'apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: x\n  labels: {a10: "1", a2: "2", B: "3"}\nspec: {}\n' >"$T/order.yaml"
expect 0 $RUN "$DRACTL" convert -f "$T/order.yaml" -o yaml
[ "$(grep -E '^    (B|a2|a10):' "$T/out" | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')" = "B a2 a10 " ] ||
    fail "yaml key order: $(cat "$T/out")"
expect 0 $RUN "$DRACTL" convert -f "$T/order.yaml" -o json
[ "$(grep -E '^ +"(B|a2|a10)":' "$T/out" | cut -d'"' -f2 | tr '\n' ' ')" = "B a10 a2 " ] ||
    fail "json key order: $(cat "$T/out")"
expect 0 $RUN "$DRACTL" convert $all --go-order
[ "$(grep -c '^kind: ' "$T/out")" -ge 29 ] || fail "all inputs: want at least 29 objects"

# The seed stream: four YAML documents, kubectl's sorted key order.
expect 0 $RUN "$DRACTL" convert -f "$SRC/examples/seed.yaml"
[ "$(grep -c '^---$' "$T/out")" -eq 3 ] || fail "seed: want 3 separators"
[ "$(grep -c '^apiVersion:' "$T/out")" -eq 4 ] || fail "seed: want 4 objects"
head -1 "$T/out" | grep -q '^apiVersion: resource.k8s.io/v1$' || fail "seed: first key"
grep -q '^        value: 189471Mi$' "$T/out" || fail "seed: memory quantity"
grep -q 'version: 10.0.0' "$T/out" || fail "seed: version attribute"
grep -q '^status: {}$' "$T/out" || fail "seed: pod status {}"

# Go order puts kind first and the slice's driver before its pool.
expect 0 $RUN "$DRACTL" convert --go-order -f "$SRC/examples/resourceslice-gb200.yaml"
head -1 "$T/out" | grep -q '^kind: ResourceSlice$' || fail "go-order: first key"
sed -n '/^spec:/{n;p;}' "$T/out" | grep -q '^  driver:' || fail "go-order: spec.driver first"

# JSON: one object prints as itself, several as a v1 List.
expect 0 $RUN "$DRACTL" convert -o json -f "$SRC/examples/deviceclass-gpu.yaml"
grep -q '^    "kind": "DeviceClass",$' "$T/out" || fail "json: single object"
expect 0 $RUN "$DRACTL" convert -ojson -f="$SRC/examples/deviceclass-gpu.yaml"
grep -q '^    "kind": "DeviceClass",$' "$T/out" || fail "json: -ojson -f=FILE"
expect 0 $RUN "$DRACTL" convert -o json -f "$SRC/examples/deviceclass-gpu.yaml" \
    -f "$SRC/examples/pod-gpu-test.yaml"
grep -q '^    "kind": "List",$' "$T/out" || fail "json: List kind"
grep -q '"resourceVersion": ""' "$T/out" || fail "json: List metadata"

# stdin, and a List read back expands to its items.
$RUN "$DRACTL" convert -o json -f "$SRC/examples/seed.yaml" >"$T/list.json" || fail "list.json"
expect 0 $RUN "$DRACTL" convert -f - <"$T/list.json"
[ "$(grep -c '^apiVersion:' "$T/out")" -eq 4 ] || fail "stdin List: want 4 objects"

# --defaults fills in what kube-apiserver's defaulting would.
expect 0 $RUN "$DRACTL" convert --defaults -f "$SRC/examples/resourceclaimtemplate-single-gpu.yaml"
grep -q '^          allocationMode: ExactCount$' "$T/out" || fail "defaults: allocationMode"
grep -q '^          count: 1$' "$T/out" || fail "defaults: count"
expect 0 $RUN "$DRACTL" convert -f "$SRC/examples/resourceclaimtemplate-single-gpu.yaml"
grep -q 'allocationMode' "$T/out" && fail "no defaults unless asked"

# A directory: its manifests in name order.
expect 0 $RUN "$DRACTL" convert -f "$SRC/examples"
[ "$(grep -c '^apiVersion:' "$T/out")" -eq 8 ] || fail "dir: want 8 objects"
head -1 "$T/out" | grep -q '^apiVersion: resource.k8s.io/v1$' || fail "dir: first object"
sed -n '2p' "$T/out" | grep -q '^kind: DeviceClass$' || fail "dir: name order"

# Bad objects: exit 1, each error with file, line:col and field path.
printf 'apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nspec:\n  driver: 5\n  pool: {generation: x}\n' >"$T/bad.yaml"
expect 1 $RUN "$DRACTL" convert -f "$T/bad.yaml"
grep -q "bad.yaml:4:11: spec.driver: Invalid value: 5: must be a string" "$T/err" ||
    fail "bad: driver message: $(cat "$T/err")"
grep -q "spec.pool.generation: Invalid value: \"x\": must be an integer" "$T/err" ||
    fail "bad: generation message"
[ -s "$T/out" ] && fail "bad: printed output"
printf 'apiVersion: example.com/v1\nkind: Widget\n' >"$T/widget.yaml"
expect 1 $RUN "$DRACTL" convert -f "$T/widget.yaml"
grep -q 'no kind "Widget" is registered for version "example.com/v1"' "$T/err" || fail "widget"
printf 'a: [\n' >"$T/syntax.yaml"
expect 1 $RUN "$DRACTL" convert -f "$T/syntax.yaml"

# Unknown fields: warnings (exit 0) or, with --strict, errors (exit 1).
expect 0 $RUN "$DRACTL" convert -f "$SRC/tests/data/api/roundtrip/unknown-fields.yaml"
grep -q 'warning: .*unknown-fields.yaml:[0-9]*:[0-9]*: unknown field "spec.devices\[0\].attributes\[a\].unit"' "$T/err" ||
    fail "unknown: warning"
[ -s "$T/out" ] || fail "unknown: no output"
expect 1 $RUN "$DRACTL" convert --strict -f "$SRC/tests/data/api/roundtrip/unknown-fields.yaml"
grep -q 'unknown-fields.yaml:[0-9]*:[0-9]*: unknown field "topLevelExtra"' "$T/err" || fail "strict: error"
grep -q 'warning' "$T/err" && fail "strict: printed warnings"
[ -s "$T/out" ] && fail "strict: printed output"
expect 0 $RUN "$DRACTL" convert --strict -f "$SRC/examples/seed.yaml"

# Usage and I/O: exit 2.
expect 2 $RUN "$DRACTL" convert
expect 2 $RUN "$DRACTL" convert -f
expect 2 $RUN "$DRACTL" convert -f "$SRC/examples/seed.yaml" -o xml
expect 2 $RUN "$DRACTL" convert --bogus
expect 2 $RUN "$DRACTL" convert -f "$T/does-not-exist.yaml"
expect 0 $RUN "$DRACTL" convert --help
grep -q 'usage: dractl convert' "$T/out" || fail "help"

if [ $fails -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "convert: all checks passed"
