#!/bin/sh
# test_drad.sh DRAD SOURCE_DIR: starts drad on a free loopback port
# (--listen 127.0.0.1:0, no simulated nodes) in a temporary data
# directory and checks, with curl: 401 Status without credentials or with
# a wrong token, 200 with the token and with the admin client certificate,
# 413 for a body over 3 MiB; with kubectl (skipped, exit 77, when it is
# missing): get ns, apply the seed objects, get them back; then a restart
# on the same directory keeps the objects, the token and the CA. drad is
# always stopped by its pid.
set -u
drad=$1
src=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/dra-drad-test.XXXXXX")
pid=
fails=0

stop() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    kill -KILL "$pid" 2>/dev/null
  fi
  if [ -n "$pid" ]; then wait "$pid" 2>/dev/null; rc=$?; else rc=0; fi
  pid=
  return $rc
}
cleanup() { stop; rm -rf "$dir"; }
trap cleanup EXIT INT TERM

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# --nodes none: the seed's ResourceSlice is for node05's pool, which
# drad's default simulated node05 publishes itself. At the restart its
# plugin finds two slices of its pool, keeps the one whose name sorts
# first (taking it over) and deletes the other, so the seed's slice was
# gone whenever the plugin's generated name sorted before "7xk2p" (a
# generateName suffix starting with 2, 4, 5 or 6, about 1 run in 6).
start() {
  : >"$dir/out"
  "$drad" --data-dir "$dir/data" --listen 127.0.0.1:0 --nodes none >"$dir/out" 2>"$dir/err" &
  pid=$!
  i=0
  while ! grep -q 'kubeconfig: ' "$dir/out" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo "drad exited:"; cat "$dir/err"; exit 1; }
    i=$((i + 1))
    [ $i -gt 400 ] && { echo "drad not ready"; cat "$dir/err"; exit 1; }
    sleep 0.05
  done
  [ "$(wc -l <"$dir/out")" -eq 1 ] || fail "drad printed more than one line"
  url=$(sed -n 's/.*serving \(https:[^;]*\);.*/\1/p' "$dir/out")
  kc=$(sed -n 's/.*kubeconfig: //p' "$dir/out")
  [ "$kc" = "$dir/data/kubeconfig" ] || fail "kubeconfig at $kc"
  token=$(cat "$dir/data/token")
}

code() { # code URL-PATH CURL-ARGS...: prints the HTTP status
  p=$1; shift
  curl -s -o "$dir/body" -w '%{http_code}' --cacert "$dir/data/ca.crt" "$@" "$url$p"
}

start
case "$url" in https://127.0.0.1:[0-9]*) ;; *) fail "url $url" ;; esac
[ "$(stat -c %a "$dir/data/kubeconfig")" = 600 ] || fail "kubeconfig mode"
[ "$(stat -c %a "$dir/data/ca.key")" = 600 ] || fail "ca.key mode"

c=$(code /api/v1/namespaces)
[ "$c" = 401 ] || fail "no token: $c"
grep -q '"reason":"Unauthorized"' "$dir/body" && grep -q '"kind":"Status"' "$dir/body" \
  || fail "401 body: $(cat "$dir/body")"
c=$(code /api/v1/namespaces -H "Authorization: Bearer wrong$token")
[ "$c" = 401 ] || fail "wrong token: $c"
c=$(code /api/v1/namespaces -H "Authorization: Bearer $token")
[ "$c" = 200 ] || fail "token: $c"
grep -q '"name":"kube-system"' "$dir/body" || fail "namespaces: $(cat "$dir/body")"
c=$(code /api/v1/namespaces/default --cert "$dir/data/admin.crt" --key "$dir/data/admin.key")
[ "$c" = 200 ] || fail "client certificate: $c"
head -c 3200000 /dev/zero | tr '\0' ' ' >"$dir/big"
c=$(code /apis/resource.k8s.io/v1/namespaces/default/resourceclaims -H "Authorization: Bearer $token" \
  -H 'Content-Type: application/json' --data-binary @"$dir/big")
[ "$c" = 413 ] || fail "big body: $c"
c=$(code /apis/resource.k8s.io/v1/namespaces/default/resourceclaims -H "Authorization: Bearer $token" \
  -H 'Content-Type: application/json' --data-binary '{"apiVersion":')
[ "$c" = 400 ] || fail "malformed body: $c"

skip=0
if command -v kubectl >/dev/null 2>&1; then
  export KUBECONFIG="$kc"
  kubectl get ns >"$dir/k" 2>&1 || fail "kubectl get ns: $(cat "$dir/k")"
  grep -q kube-system "$dir/k" || fail "get ns: $(cat "$dir/k")"
  kubectl apply -f "$src/examples/seed.yaml" >"$dir/k" 2>&1 || fail "apply: $(cat "$dir/k")"
  grep -q 'resourceslice.resource.k8s.io/gb200-pod2-f06-node05-gpu.nvidia.com-7xk2p created' "$dir/k" \
    || fail "apply: $(cat "$dir/k")"
  kubectl get resourceslice >"$dir/k" 2>&1 || fail "get resourceslice: $(cat "$dir/k")"
  grep -q gb200-pod2-f06-node05-gpu.nvidia.com-7xk2p "$dir/k" || fail "get: $(cat "$dir/k")"
  kubectl get pod gpu-test-pod -o jsonpath='{.spec.resourceClaims[0].resourceClaimTemplateName}' \
    >"$dir/k" 2>&1 || fail "get pod: $(cat "$dir/k")"
  [ "$(cat "$dir/k")" = single-gpu ] || fail "jsonpath: $(cat "$dir/k")"
else
  skip=1
fi

# A clean stop, then a restart on the same directory.
old_token=$token
cp "$dir/data/ca.crt" "$dir/ca.before"
stop || fail "drad did not exit 0 on SIGTERM"
start
[ "$token" = "$old_token" ] || fail "token changed across a restart"
cmp -s "$dir/ca.before" "$dir/data/ca.crt" || fail "CA changed across a restart"
if [ $skip = 0 ]; then
  c=$(code /apis/resource.k8s.io/v1/resourceslices/gb200-pod2-f06-node05-gpu.nvidia.com-7xk2p \
    -H "Authorization: Bearer $token")
  [ "$c" = 200 ] || fail "slice after restart: $c"
  c=$(code /apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates/single-gpu \
    -H "Authorization: Bearer $token")
  [ "$c" = 200 ] || fail "template after restart: $c"
  c=$(code /api/v1/namespaces/default/pods/gpu-test-pod -H "Authorization: Bearer $token")
  [ "$c" = 200 ] || fail "pod after restart: $c"
fi

# A second drad on the same directory is refused.
if "$drad" --data-dir "$dir/data" --listen 127.0.0.1:0 >/dev/null 2>"$dir/err2"; then
  fail "second drad on the same directory started"
fi
grep -q 'in use' "$dir/err2" || fail "second drad: $(cat "$dir/err2")"

stop || fail "drad did not exit 0"
[ $fails -eq 0 ] || exit 1
[ $skip = 1 ] && { echo "kubectl missing: the kubectl part was skipped"; exit 77; }
echo "test_drad: all checks passed"
exit 0
