#!/usr/bin/env bash
# Runs the REST transport test binary against a real drad: starts
# $DRA_BUILD_DIR/cmd/drad/drad with a fresh data directory on a free
# loopback port, waits for its ready line and kubeconfig, runs the binary
# (through $DRA_TEST_LAUNCHER when set) with KUBECONFIG pointing at it,
# then stops drad by its pid (SIGTERM, then SIGKILL). drad picks the free
# port itself (--listen 127.0.0.1:0) and names it in its kubeconfig.
# Exit 77 (skip) when drad is not built.
# Usage: run_drad.sh TEST-BINARY
set -u
bin=$1
drad=${DRA_BUILD_DIR:-}/cmd/drad/drad
[ -x "$drad" ] || { echo "drad not built ($drad): skipped"; exit 77; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/dra-kube-drad.XXXXXX")
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null
  fi
  [ -n "$pid" ] && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

"$drad" --data-dir "$dir/data" --listen 127.0.0.1:0 --nodes none >"$dir/out" 2>&1 &
pid=$!
for _ in $(seq 1 400); do
  [ -s "$dir/out" ] && [ -s "$dir/data/kubeconfig" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "drad exited:"; cat "$dir/out"; exit 1; }
  sleep 0.05
done
[ -s "$dir/data/kubeconfig" ] || { echo "drad wrote no kubeconfig"; cat "$dir/out"; exit 1; }

# shellcheck disable=SC2086
KUBECONFIG=$dir/data/kubeconfig ${DRA_TEST_LAUNCHER:-} "$bin"
rc=$?
[ $rc -eq 0 ] || cat "$dir/out"
exit $rc
