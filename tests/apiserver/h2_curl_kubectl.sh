#!/bin/sh
# drad's HTTP/2 front end against the real curl (--http2) and kubectl:
# list, 401, a create, client-certificate auth and a watch (get ns -w).
# $1: the h2_serve program. Every process started here is killed by pid.
set -eu
serve=$1
command -v curl >/dev/null || { echo "no curl: skipped"; exit 0; }
work=$(mktemp -d /tmp/dra-h2-XXXXXX)
spid=
kpid=
cleanup() {
    rc=$?
    for p in $kpid $spid; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    rm -rf "$work"
    exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; cat "$work/serve.err" >&2 || true; exit 1; }

${DRA_TEST_LAUNCHER:-} "$serve" "$work" >"$work/port" 2>"$work/serve.err" &
spid=$!
for i in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
[ -n "$port" ] || fail "server did not start"
url=https://127.0.0.1:$port
pki=$work/pki
token=$(cat "$pki/token")

got=$(curl -sS --http2 --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" \
      -o "$work/body" -w '%{http_version} %{http_code}' "$url/api/v1/namespaces")
[ "$got" = "2 200" ] || fail "curl list: $got"
grep -q '"kind":"NamespaceList"' "$work/body" || fail "curl list body"
got=$(curl -sS --http2 --cacert "$pki/ca.crt" -o "$work/body" -w '%{http_code}' \
      "$url/api/v1/namespaces")
[ "$got" = 401 ] || fail "curl without token: $got"
grep -q '"reason":"Unauthorized"' "$work/body" || fail "401 body"
got=$(curl -sS --http2 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
      -o /dev/null -w '%{http_code}' "$url/api/v1/namespaces/default")
[ "$got" = 200 ] || fail "curl client cert: $got"
# HTTP/1.1 only is refused (ALPN h2 or nothing).
if curl -sS --http1.1 --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" \
      -o /dev/null "$url/api/v1/namespaces" 2>/dev/null; then
    fail "HTTP/1.1 was served"
fi

kubectl=/usr/bin/kubectl
if [ ! -x "$kubectl" ]; then echo "no kubectl: curl checks only"; exit 0; fi
kc() {
    KUBECONFIG=$work/none "$kubectl" --server "$url" --certificate-authority "$pki/ca.crt" \
        --cache-dir "$work/cache" --request-timeout 20s "$@"
}
kc --token "$token" get namespaces >"$work/kget" 2>&1 || { cat "$work/kget"; fail "kubectl get"; }
grep -q '^default ' "$work/kget" || fail "kubectl get: $(cat "$work/kget")"
kc --client-certificate "$pki/admin.crt" --client-key "$pki/admin.key" get ns kube-system \
    >"$work/kget" 2>&1 || { cat "$work/kget"; fail "kubectl with a client cert"; }
kc --token "$token" get ns -w >"$work/watch" 2>&1 &
kpid=$!
sleep 1
curl -sS --http2 --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d '{"metadata":{"name":"h2-watched"}}' \
    -o /dev/null "$url/api/v1/namespaces"
for i in $(seq 100); do grep -q '^h2-watched ' "$work/watch" && break; sleep 0.1; done
grep -q '^h2-watched ' "$work/watch" || fail "kubectl get ns -w: $(cat "$work/watch")"
kill "$kpid"; wait "$kpid" 2>/dev/null || true; kpid=
# A clean stop with a connection still open.
kill "$spid"; wait "$spid" || fail "the server did not stop cleanly"; spid=
echo ok
