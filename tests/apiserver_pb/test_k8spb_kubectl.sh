#!/bin/sh
# test_k8spb_kubectl.sh DRAD: the real kubectl 1.32+ (which sends
# `create namespace` as application/vnd.kubernetes.protobuf) against drad
# on a free loopback port in a temporary data directory: each installed
# 1.32+ kubectl creates a namespace (its -v=8 log shows the protobuf
# Content-Type), the namespace is listed and Active, a server dry run
# stores nothing, --save-config's annotation arrives, a second create is
# AlreadyExists; drad then stops with status 0 (valgrind-clean under
# $DRA_TEST_LAUNCHER). drad is stopped by its pid, also on failure. Exit 77 when
# no kubectl 1.32+ is installed.
set -u
drad=$1
launcher=${DRA_TEST_LAUNCHER:-}
dir=$(mktemp -d "${TMPDIR:-/tmp}/k8spb.XXXXXX")
pid=
fails=0
rc=0
stop() { # sets rc to drad's exit status (valgrind's 99 when it found errors)
  rc=0
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
    kill -KILL "$pid" 2>/dev/null
  fi
  if [ -n "$pid" ]; then wait "$pid" 2>/dev/null; rc=$?; fi
  pid=
}
cleanup() { stop; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# kubectls that send protobuf: 1.32 and later
kubectls=
for k in /usr/lib/google-cloud-sdk/bin/kubectl.1.3[2-9] /usr/bin/kubectl $(command -v kubectl 2>/dev/null); do
  [ -x "$k" ] || continue
  minor=$("$k" version --client 2>/dev/null | sed -n 's/^Client Version: v1\.\([0-9]*\)\..*/\1/p')
  [ -n "$minor" ] && [ "$minor" -ge 32 ] || continue
  case " $kubectls " in *" $k "*) ;; *) kubectls="$kubectls $k" ;; esac
done
[ -n "$kubectls" ] || { echo "SKIP: no kubectl 1.32 or later"; exit 77; }

$launcher "$drad" --data-dir "$dir/data" --listen 127.0.0.1:0 --nodes none >"$dir/out" 2>"$dir/err" &
pid=$!
i=0
while ! grep -q 'kubeconfig: ' "$dir/out" 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || { echo "drad exited:"; cat "$dir/err"; exit 1; }
  i=$((i + 1))
  [ $i -gt 1200 ] && { echo "drad not ready"; cat "$dir/err"; exit 1; }
  sleep 0.05
done
export KUBECONFIG="$dir/data/kubeconfig"

n=0
for k in $kubectls; do
  n=$((n + 1))
  ns=pb-ns-$n
  v=$("$k" version --client 2>/dev/null | sed -n 's/^Client Version: //p')
  echo "== $k ($v)"
  if ! "$k" create namespace "$ns" -v=8 >"$dir/create.out" 2>"$dir/create.log"; then
    fail "$v: create namespace: $(grep -v '^I' "$dir/create.log" | tail -3)"
    continue
  fi
  grep -q "namespace/$ns created" "$dir/create.out" || fail "$v: create said: $(cat "$dir/create.out")"
  grep -q 'Content-Type: application/vnd.kubernetes.protobuf' "$dir/create.log" \
    || fail "$v: the create did not send protobuf (this test then proves nothing)"
  "$k" get namespaces -o name >"$dir/list" 2>&1 || fail "$v: get namespaces: $(cat "$dir/list")"
  grep -qx "namespace/$ns" "$dir/list" || fail "$v: $ns not listed: $(cat "$dir/list")"
  phase=$("$k" get namespace "$ns" -o 'jsonpath={.status.phase}' 2>&1)
  [ "$phase" = Active ] || fail "$v: phase $phase"
  out=$("$k" create namespace "$ns-dry" --dry-run=server 2>&1)
  case "$out" in *"namespace/$ns-dry created (server dry run)"*) ;; *) fail "$v: dry run: $out" ;; esac
  "$k" get namespace "$ns-dry" >/dev/null 2>&1 && fail "$v: the dry run stored $ns-dry"
  out=$("$k" create namespace "$ns-sc" --save-config 2>&1) || fail "$v: --save-config: $out"
  ann=$("$k" get namespace "$ns-sc" -o 'jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}' 2>&1)
  case "$ann" in *'"name":"'"$ns-sc"'"'*) ;; *) fail "$v: last-applied annotation: $ann" ;; esac
  out=$("$k" create namespace "$ns" 2>&1) && fail "$v: second create succeeded: $out"
  case "$out" in *"(AlreadyExists)"*"namespaces \"$ns\" already exists"*) ;;
    *) fail "$v: second create: $out" ;; esac
  out=$("$k" delete namespace "$ns-sc" --wait=false 2>&1) || fail "$v: delete: $out"
done

stop
[ $rc -eq 0 ] || fail "drad exited with $rc at SIGTERM: $(tail -20 "$dir/err")"
cleanup
trap - EXIT
if [ $fails -gt 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "ok: kubectl$kubectls"
