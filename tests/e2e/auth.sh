#!/bin/bash
# auth.sh DRAD: who drad lets in. curl: no credentials, a wrong token, a
# Basic header and a self-signed client certificate each get 401 with
# kube-apiserver's Status body, on every kind of path (discovery, OpenAPI,
# core, resource.k8s.io, a watch, a write); the token, the admin
# certificate drad wrote and a new certificate signed by drad's CA (made
# here with openssl) get 200; the serving certificate verifies against the
# CA for 127.0.0.1 (and plain curl without the CA refuses it). kubectl
# (every installed version): with a wrong token it reports that it must
# log in; with a client-certificate kubeconfig it works. Skips (77) without
# curl or openssl; the kubectl part is left out when kubectl is missing.
set -u
. "$(dirname "$0")/lib.sh"
drad=$1

e2e_init auth
command -v curl >/dev/null || e2e_skip "curl missing"
command -v openssl >/dev/null || e2e_skip "openssl missing"
command -v jq >/dev/null || e2e_skip "jq missing"
# The API server and its controllers, no simulated nodes: nothing runs
# the pods, so what the checks see stays put.
e2e_start_drad "$drad" --nodes none
D=$E2E_DATA
T=$E2E_TMP
E2E_OUT=$T/body

# kube-apiserver's 401 body, field by field.
status401() {
    jq -e '.kind == "Status" and .apiVersion == "v1" and .status == "Failure"
        and .message == "Unauthorized" and .reason == "Unauthorized" and .code == 401' \
        "$T/body" >/dev/null
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$T/self.key" -out "$T/self.crt" -subj "/O=system:masters/CN=mallory" -days 1 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$T/user.key" -out "$T/user.csr" -subj "/O=system:masters/CN=e2e-user" 2>/dev/null
openssl x509 -req -in "$T/user.csr" -CA "$D/ca.crt" -CAkey "$D/ca.key" -CAcreateserial \
    -CAserial "$T/ca.srl" -out "$T/user.crt" -days 1 2>/dev/null
[ -s "$T/user.crt" ] || { echo "openssl could not sign a client certificate"; exit 1; }

paths=(/api /apis /version /openapi/v2 /openapi/v3 /api/v1/namespaces
    /api/v1/namespaces/default/pods /apis/resource.k8s.io/v1/resourceslices
    "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims?watch=true"
    /api/v1/namespaces/default/pods/nope/log /healthz /no/such/path)
for p in "${paths[@]}"; do
    code=$(e2e_curl "$p")
    { [ "$code" = 401 ] && status401; } && pass "no-credentials $p" \
        || fail "no-credentials $p" "$code $(head -c 300 "$T/body")"
done
code=$(e2e_curl /apis/resource.k8s.io/v1/namespaces/default/resourceclaims -X POST \
    -H 'Content-Type: application/json' -d '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"x"},"spec":{}}')
{ [ "$code" = 401 ] && status401; } && pass no-credentials-write || fail no-credentials-write "$code"
code=$(e2e_curl /api/v1/namespaces -H "Authorization: Bearer x$E2E_TOKEN")
{ [ "$code" = 401 ] && status401; } && pass wrong-token || fail wrong-token "$code"
code=$(e2e_curl /api/v1/namespaces -H "Authorization: Bearer ")
{ [ "$code" = 401 ] && status401; } && pass empty-token || fail empty-token "$code"
code=$(e2e_curl /api/v1/namespaces -u "admin:$E2E_TOKEN")
{ [ "$code" = 401 ] && status401; } && pass basic-auth || fail basic-auth "$code"
code=$(e2e_curl /api/v1/namespaces --cert "$T/self.crt" --key "$T/self.key")
{ [ "$code" = 401 ] && status401; } && pass self-signed-cert || fail self-signed-cert "$code"

code=$(e2e_curl /api/v1/namespaces -H "Authorization: Bearer $E2E_TOKEN")
{ [ "$code" = 200 ] && jq -e '.kind == "NamespaceList"' "$T/body" >/dev/null; } && pass token \
    || fail token "$code"
code=$(e2e_curl /api/v1/namespaces --cert "$D/admin.crt" --key "$D/admin.key")
[ "$code" = 200 ] && pass admin-cert || fail admin-cert "$code"
code=$(e2e_curl /api/v1/namespaces --cert "$T/user.crt" --key "$T/user.key")
[ "$code" = 200 ] && pass ca-signed-cert || fail ca-signed-cert "$code"
# The serving certificate: valid for 127.0.0.1 under drad's CA only.
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $E2E_TOKEN" "$E2E_URL/api")
[ "$code" = 000 ] && pass untrusted-without-ca || fail untrusted-without-ca "$code"
localhost_url=${E2E_URL/127.0.0.1/localhost}
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$D/ca.crt" --resolve "localhost:${E2E_URL##*:}:127.0.0.1" \
    -H "Authorization: Bearer $E2E_TOKEN" "$localhost_url/api")
[ "$code" = 200 ] && pass serving-cert-localhost || fail serving-cert-localhost "$code"

# kubectl: a wrong token (with no credentials at all kubectl asks for a
# user name on a terminal), then a client-certificate kubeconfig.
mapfile -t KUBECTLS < <(e2e_kubectls)
ca64=$(base64 -w0 "$D/ca.crt")
cat >"$T/anon.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: drad
  cluster:
    server: $E2E_URL
    certificate-authority-data: $ca64
users:
- name: anonymous
  user:
    token: not-the-token
contexts:
- name: drad
  context: {cluster: drad, user: anonymous}
current-context: drad
EOF
cat >"$T/cert.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: drad
  cluster:
    server: $E2E_URL
    certificate-authority-data: $ca64
users:
- name: e2e-user
  user:
    client-certificate-data: $(base64 -w0 "$T/user.crt")
    client-key-data: $(base64 -w0 "$T/user.key")
contexts:
- name: drad
  context: {cluster: drad, user: e2e-user}
current-context: drad
EOF
chmod 600 "$T"/*.kubeconfig
for K in "${KUBECTLS[@]}"; do
    v=$(basename "$K")
    KUBECONFIG=$T/anon.kubeconfig "$K" --cache-dir "$T/cache-anon-$v" get resourceslices </dev/null >"$E2E_OUT" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q '^error: You must be logged in to the server (the server has asked for the client to provide credentials)$' "$E2E_OUT" \
        && pass "$v/kubectl-anonymous" || fail "$v/kubectl-anonymous" "rc $rc $(e2e_show)"
    KUBECONFIG=$T/cert.kubeconfig "$K" --cache-dir "$T/cache-cert-$v" get namespace kube-system \
        -o 'jsonpath={.metadata.name}' >"$E2E_OUT" 2>&1
    rc=$?
    [ $rc = 0 ] && [ "$(cat "$E2E_OUT")" = kube-system ] && pass "$v/kubectl-client-cert" \
        || fail "$v/kubectl-client-cert" "rc $rc $(e2e_show)"
done

e2e_stop_drad || fail drad-exit "drad did not stop cleanly"
e2e_finish
