#!/usr/bin/env bash
# Installs the Debian 12 packages dra needs to build and test. Runs apt
# as root directly, or through sudo when not root.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PKGS=(build-essential cmake pkg-config clang libclang-rt-14-dev valgrind
      libjansson-dev libyaml-dev libpcre2-dev libcmocka-dev tzdata
      # drad's store and API server, the REST client, the kubelet plugin
      libsqlite3-dev libmicrohttpd-dev libgnutls28-dev libcurl4-gnutls-dev
      libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler
      # containers of the node agent; the real clients the tests drive
      # (kubectl itself comes from the machine: /usr/bin/kubectl and the
      # versions under /usr/lib/google-cloud-sdk/bin; tests without it skip)
      bubblewrap python3-kubernetes python3-grpcio python3-grpc-tools
      python3-yaml python3-h2 curl wrk openssl procps
      # load generators of bench/ (h2load: HTTP/2)
      nghttp2-client)
# node and npm fetch the CEL conformance data and the reference engines
# at test time; keep a node that is already there (it may be newer).
command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
command -v npm >/dev/null 2>&1 || PKGS+=(npm)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${missing[@]}"
fi
