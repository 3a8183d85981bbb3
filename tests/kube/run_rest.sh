#!/usr/bin/env bash
# Runs a REST transport test binary against tests/kube/stub_apiserver.py:
# makes throwaway certificates (a CA, the stub's serving certificate for
# 127.0.0.1 / localhost / stub.test, a client certificate, and a second,
# untrusted CA with its own client certificate), starts the stub on a
# free loopback port, runs the binary (through $DRA_TEST_LAUNCHER when
# set) with STUB_DIR and STUB_PORT, and kills the stub by its pid.
# Usage: run_rest.sh TEST-BINARY STUB-SCRIPT. Exit 77 (skip) without
# python3 or openssl.
set -u
bin=$1
stub=$2
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
command -v openssl >/dev/null 2>&1 || { echo "no openssl: skipped"; exit 77; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/dra-kube-rest.XXXXXX")
pid=
cleanup() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

ossl() { openssl "$@" >/dev/null 2>&1 || { echo "openssl $1 failed"; exit 1; }; }
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
# shellcheck disable=SC2086
{
  ossl req -x509 $ec -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 2 \
    -subj /CN=stub-ca
  ossl req -x509 $ec -keyout "$dir/other-ca.key" -out "$dir/other-ca.crt" \
    -days 2 -subj /CN=other-ca
  ossl req $ec -keyout "$dir/server.key" -out "$dir/server.csr" -subj /CN=stub
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:stub.test\n' \
    > "$dir/san.ext"
  ossl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 2 -extfile "$dir/san.ext" -out "$dir/server.crt"
  ossl req $ec -keyout "$dir/client.key" -out "$dir/client.csr" \
    -subj /CN=dra-client
  ossl x509 -req -in "$dir/client.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 2 -out "$dir/client.crt"
  ossl req $ec -keyout "$dir/rogue.key" -out "$dir/rogue.csr" -subj /CN=rogue
  ossl x509 -req -in "$dir/rogue.csr" -CA "$dir/other-ca.crt" \
    -CAkey "$dir/other-ca.key" -CAcreateserial -days 2 -out "$dir/rogue.crt"
}
echo "token-one" > "$dir/tokens"

python3 "$stub" --dir "$dir" --port-file "$dir/port" &
pid=$!
for _ in $(seq 1 200); do
  [ -s "$dir/port" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "stub exited"; exit 1; }
  sleep 0.05
done
[ -s "$dir/port" ] || { echo "stub did not start"; exit 1; }

# shellcheck disable=SC2086
STUB_DIR=$dir STUB_PORT=$(cat "$dir/port") ${DRA_TEST_LAUNCHER:-} "$bin"
