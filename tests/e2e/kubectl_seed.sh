#!/bin/bash
# kubectl_seed.sh DRAD SOURCE_DIR: every installed kubectl (/usr/bin/kubectl
# and gcloud's kubectl.1.NN) against one drad, one version after another,
# each in its own namespace with its own cache directory and its own copy
# of the seed objects (cluster-scoped names carry the version), through
# apply (twice), get (table, wide, yaml, json, name, jsonpath, -A, -w with
# a change from a second client), describe with events, label, annotate,
# patch (merge, strategic, json, status subresource), edit through EDITOR,
# replace (and a stale replace), create of an invalid object, server-side
# apply, delete (by name, -f, --all, a finalizer holding the object) and
# namespace deletion, api-resources and explain. Before that, the example
# files themselves, unchanged, in the default namespace. Skips (77) when
# no kubectl is installed. See docs/e2e.md.
set -u
. "$(dirname "$0")/lib.sh"
drad=$1
src=$2

e2e_init kubectl
if [ -n "${E2E_KUBECTLS:-}" ]; then
    read -r -a KUBECTLS <<<"$E2E_KUBECTLS" # a chosen few, for debugging
else
    mapfile -t KUBECTLS < <(e2e_kubectls)
    # Under a launcher (valgrind: ~1 minute a version) the oldest and the
    # newest are enough to keep within the test's time.
    if [ -n "${DRA_TEST_LAUNCHER:-}" ] && [ ${#KUBECTLS[@]} -gt 2 ]; then
        mapfile -t KUBECTLS < <(printf '%s\n' "${KUBECTLS[@]}" | sed -n '/kubectl\.1\./p' | sed -n '1p;$p')
    fi
fi
[ ${#KUBECTLS[@]} -gt 0 ] || e2e_skip "no kubectl installed"
command -v jq >/dev/null || e2e_skip "jq missing"
# The API server and its controllers, no simulated nodes: nothing runs
# the pods, so what the checks see stays put.
e2e_start_drad "$drad" --nodes none
BASE_KC=$KUBECONFIG

# kc ARGS...: the current kubectl; output (stdout and stderr) in $E2E_OUT,
# exit status in $RC.
kc() {
    local t0=${EPOCHREALTIME/./}
    "$K" --cache-dir "$T/cache" "$@" >"$E2E_OUT" 2>&1
    RC=$?
    # E2E_TIMING=1: each call's milliseconds on stderr, to find slow steps.
    [ -n "${E2E_TIMING:-}" ] && echo "time $(( (${EPOCHREALTIME/./} - t0) / 1000 )) ms: $*" >&2
    return 0
}
# kco ARGS...: the same, stdout only into $E2E_OUT (stderr to $E2E_OUT.err).
kco() {
    "$K" --cache-dir "$T/cache" "$@" >"$E2E_OUT" 2>"$E2E_OUT.err"
    RC=$?
}
# The output with runs of spaces squeezed and ages ("0s", "5m3s", "2h")
# replaced by <age>, so table cells can be compared exactly.
norm() {
    sed -E 's/ +/ /g; s/ +$//; s/(^| )[0-9]+(s|m|m[0-9]+s|h|h[0-9]+m)( |$)/\1<age>\3/g; s/(^| )[0-9]+(s|m|m[0-9]+s|h|h[0-9]+m)( |$)/\1<age>\3/g' "$E2E_OUT"
}
jqe() { jq -e "$@" >/dev/null; }
# The first three lines of the output (the rc is not looked at).
first3_is() { [ "$(head -n 3 "$E2E_OUT")" = "$1" ]; }
# A second apply of the seed pod. kube-apiserver's DefaultTolerationSeconds
# admission added the not-ready/unreachable tolerations at create; the
# tolerations list is atomic, so kubectl's three-way diff sends the
# manifest's one toleration back. Mutating admission runs on updates too,
# before ValidatePodUpdate (the patch and admission transformers come
# before the strategy's BeforeUpdate), so the two come back and nothing
# is removed: kube answers 200 and kubectl prints "configured".
pod_reapplied() {
    [ "$RC" = 0 ] && [ "$(sed -n '4,$p' "$E2E_OUT")" = 'pod/gpu-test-pod configured' ]
}
out_is() { [ "$RC" = 0 ] && [ "$(cat "$E2E_OUT")" = "$1" ]; }
norm_is() { [ "$RC" = 0 ] && [ "$(norm)" = "$1" ]; }
has() { grep -Eq -- "$1" "$E2E_OUT"; }
rc_has() { [ "$RC" = "$1" ] && grep -Eq -- "$2" "$E2E_OUT"; }
ok_has() { rc_has 0 "$1"; }

# A finding's check name: <version>/<what>.
c() { echo "$TAG/$1"; }

editor=$E2E_TMP/editor.sh
cat >"$editor" <<'EOF'
#!/bin/sh
# kubectl edit's EDITOR: the annotation "note" becomes "edited".
sed -i 's/^\(    note: \).*/\1edited/' "$1"
EOF
chmod +x "$editor"

# ---- discovery as each kubectl negotiates it (kubectl-protocol.md §3) --------
discovery_negotiation() {
    local v2='application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'
    local b1='application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList'
    local accept want ct p
    E2E_OUT=$E2E_TMP/body
    for p in /api /apis; do
        # 1.30+: v2 first; 1.27-1.29: v2beta1 only; anything else: legacy.
        for accept in "$v2,$b1,application/json" "$b1,application/json" "application/json"; do
            case "$accept" in
            "$v2"*) want=$v2 ;;
            "$b1"*) want=$b1 ;;
            *) want=application/json ;;
            esac
            ct=$(curl -s -o "$E2E_OUT" -w '%{content_type}' --cacert "$E2E_DATA/ca.crt" \
                -H "Authorization: Bearer $E2E_TOKEN" -H "Accept: $accept" "$E2E_URL$p?timeout=32s")
            [ "$ct" = "$want" ] && pass "discovery$p/${want##*v=}" \
                || fail "discovery$p/${want##*v=}" "Content-Type $ct for Accept $accept"
        done
    done
    # The last answer was legacy /apis: resource.k8s.io with v1 preferred.
    check discovery/legacy-apis jqe '.kind == "APIGroupList" and (.groups[] |
        select(.name == "resource.k8s.io") | .preferredVersion.version == "v1"
        and .versions[0].version == "v1")' "$E2E_OUT"
    ct=$(curl -s -o "$E2E_OUT" -w '%{content_type}' --cacert "$E2E_DATA/ca.crt" \
        -H "Authorization: Bearer $E2E_TOKEN" -H "Accept: $v2" "$E2E_URL/apis")
    check discovery/aggregated-apis jqe '.kind == "APIGroupDiscoveryList"
        and .apiVersion == "apidiscovery.k8s.io/v2" and (.items[] |
        select(.metadata.name == "resource.k8s.io") | .versions[0].version == "v1" and
        ([.versions[0].resources[] | select(.resource == "resourceclaims") |
          .subresources[].subresource] == ["status"]))' "$E2E_OUT"
}

# ---- raw requests through kubectl (first kubectl only) -------------------------
# kubectl create --raw POSTs a file as it is: a body over 3 MiB gets kube's
# 413, a malformed one a 400 that names the problem.
raw_requests() {
    K=${KUBECTLS[0]}
    TAG=raw
    T=$E2E_TMP/raw
    mkdir -p "$T"
    E2E_OUT=$T/out
    export KUBECONFIG=$BASE_KC
    {
        printf '{"apiVersion":"v1","kind":"Event","metadata":{"name":"big"},"message":"'
        head -c 3200000 /dev/zero | tr '\0' x
        printf '"}'
    } >"$T/big.json"
    kc create --raw /api/v1/namespaces/default/events -f "$T/big.json"
    check "$(c too-large)" rc_has 1 '^Error from server \(RequestEntityTooLarge\): Request entity too large: limit is 3145728$'
    printf '{"apiVersion": "v1", "kind": \n' >"$T/bad.json"
    kc create --raw /api/v1/namespaces/default/events -f "$T/bad.json"
    check "$(c malformed-json)" rc_has 1 '^Error from server \(BadRequest\): .*json parse error: .*unexpected end of JSON input'
    kc get --raw /apis/resource.k8s.io/v1
    check "$(c get-raw)" jqe '.kind == "APIResourceList" and .groupVersion == "resource.k8s.io/v1"' "$E2E_OUT"
}

# ---- the example files as they are, with the first kubectl ----------------
examples_as_is() {
    K=${KUBECTLS[0]}
    TAG=examples
    T=$E2E_TMP/examples
    mkdir -p "$T"
    E2E_OUT=$T/out
    export KUBECONFIG=$BASE_KC
    # drad installs the GPU chart's DeviceClasses at start (also with
    # --nodes none), so the example's class is applied over one that
    # kubectl apply did not create: kubectl warns and patches.
    kc get deviceclasses -o name
    check "$(c chart-classes)" out_is "deviceclass.resource.k8s.io/gpu.nvidia.com
deviceclass.resource.k8s.io/mig.nvidia.com
deviceclass.resource.k8s.io/vfio.gpu.nvidia.com"
    kc apply -f "$src/examples/resourceslice-gb200.yaml" -f "$src/examples/deviceclass-gpu.yaml" \
        -f "$src/examples/resourceclaimtemplate-single-gpu.yaml" -f "$src/examples/pod-gpu-test.yaml"
    check "$(c apply-files)" out_is "resourceslice.resource.k8s.io/gb200-pod2-f06-node05-gpu.nvidia.com-7xk2p created
Warning: resource deviceclasses/gpu.nvidia.com is missing the kubectl.kubernetes.io/last-applied-configuration annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.
deviceclass.resource.k8s.io/gpu.nvidia.com configured
resourceclaimtemplate.resource.k8s.io/single-gpu created
pod/gpu-test-pod created"
    # seed.yaml holds the same four objects. The template's request gets
    # allocationMode and count defaulted by the server, a list kubectl
    # compares whole: kube-apiserver gives the same "configured". So is
    # the pod, unchanged (see pod_reapplied).
    kc apply -f "$src/examples/seed.yaml"
    check "$(c apply-seed-again)" first3_is "resourceslice.resource.k8s.io/gb200-pod2-f06-node05-gpu.nvidia.com-7xk2p unchanged
deviceclass.resource.k8s.io/gpu.nvidia.com unchanged
resourceclaimtemplate.resource.k8s.io/single-gpu configured"
    check "$(c apply-seed-again-pod)" pod_reapplied
    kc get resourceslice
    check "$(c get-slices)" norm_is "NAME NODE DRIVER POOL AGE
gb200-pod2-f06-node05-gpu.nvidia.com-7xk2p gb200-pod2-f06-node05 gpu.nvidia.com gb200-pod2-f06-node05 <age>"
    kc get deviceclass gpu.nvidia.com
    check "$(c get-class)" norm_is "NAME AGE
gpu.nvidia.com <age>"
    kc delete -f "$src/examples/seed.yaml"
    check "$(c delete-f)" out_is 'resourceslice.resource.k8s.io "gb200-pod2-f06-node05-gpu.nvidia.com-7xk2p" deleted
deviceclass.resource.k8s.io "gpu.nvidia.com" deleted
resourceclaimtemplate.resource.k8s.io "single-gpu" deleted
pod "gpu-test-pod" deleted'
}

# ---- one kubectl version ----------------------------------------------------
# Writes the version's manifests into $T.
manifests() {
    sed -e "s/^\(  namespace: \)default$/\1$NS/" \
        -e "s/^\(  name: gb200-pod2-f06-node05-gpu.nvidia.com-7xk2p\)$/\1-$TAG/" \
        -e "s/^\(  name: \)gpu.nvidia.com$/\1$CLASS/" \
        -e "s/^\( *deviceClassName: \)gpu.nvidia.com$/\1$CLASS/" \
        "$src/examples/seed.yaml" >"$T/seed.yaml"
    cat >"$T/ns.yaml" <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $NS
EOF
    # A claim with the defaults written out: a second apply is unchanged.
    cat >"$T/claim.yaml" <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: claim-a
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: $CLASS
        allocationMode: ExactCount
        count: 1
EOF
    cat >"$T/claim-gen.yaml" <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  generateName: claim-gen-
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: $CLASS
EOF
    cat >"$T/claim-fin.yaml" <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: claim-fin
  finalizers:
  - e2e.dra.example.com/hold
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: $CLASS
EOF
    cat >"$T/claim-ssa-kubectl.yaml" <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: claim-ssa
  labels:
    owner: kubectl
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: $CLASS
EOF
    # Another manager setting only the label kubectl owns: one conflict.
    cat >"$T/claim-ssa-other.yaml" <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: claim-ssa
  labels:
    owner: other
EOF
    cat >"$T/bad.yaml" <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: bad-$TAG
spec:
  nodeName: node-1
EOF
    cat >"$T/unknown.yaml" <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: claim-unknown
spec:
  foo: 1
  devices: {}
EOF
    cat >"$T/claim-v1beta1.yaml" <<EOF
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata:
  name: claim-beta
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: $CLASS
      allocationMode: ExactCount
      count: 1
EOF
    cat >"$T/pod-plain.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: plain-pod
spec:
  containers:
  - name: ctr
    image: busybox:1.36
EOF
    # A pod that uses claim-a: the claim is reserved for it.
    cat >"$T/claim-pod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: claim-pod
spec:
  containers:
  - name: ctr
    image: ubuntu:22.04
    resources:
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimName: claim-a
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
EOF
    cat >"$T/node.yaml" <<EOF
apiVersion: v1
kind: Node
metadata:
  name: node-$TAG
  labels:
    node-role.kubernetes.io/worker: ""
spec:
  unschedulable: true
  taints:
  - key: e2e.dra.example.com/keep-off
    effect: NoSchedule
status:
  conditions:
  - type: Ready
    status: "True"
    reason: KubeletReady
    message: kubelet is posting ready status
    lastHeartbeatTime: "2026-01-01T00:00:00Z"
    lastTransitionTime: "2026-01-01T00:00:00Z"
  addresses:
  - type: InternalIP
    address: 10.0.0.5
  nodeInfo:
    kubeletVersion: v1.35.0
    osImage: Debian GNU/Linux 12 (bookworm)
    kernelVersion: 6.1.0-e2e
    containerRuntimeVersion: containerd://2.0.0
    operatingSystem: linux
    architecture: amd64
    machineID: e2e
    systemUUID: e2e
    bootID: e2e
    kubeProxyVersion: ""
EOF
    sed "s/^\(  namespace: \)default$/\1$NS/" "$BASE_KC" >"$T/kubeconfig"
    sed -i "s/^\( *namespace: \)default$/\1$NS/" "$T/kubeconfig"
    chmod 600 "$T/kubeconfig"
}

# owned_claim NAME OWNER-APIVERSION OWNER-KIND OWNER-NAME OWNER-UID: a claim
# with one controller ownerReference that blocks its owner's deletion.
owned_claim() {
    cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: $1
  ownerReferences:
  - apiVersion: $2
    kind: $3
    name: $4
    uid: $5
    controller: true
    blockOwnerDeletion: true
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: $CLASS
EOF
}

# events.yaml for describe: one event each for the claim, the slice (a
# cluster-scoped object: its event lives in "default") and the pod.
events_manifest() {
    local now
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    {
        event "$NS" claim ResourceClaim resource.k8s.io/v1 claim-a "$NS" "$CLAIM_UID" "claim event from e2e"
        echo ---
        event default "slice-$TAG" ResourceSlice resource.k8s.io/v1 "$SLICE" "" "$SLICE_UID" "slice event from e2e"
        echo ---
        event "$NS" pod Pod v1 gpu-test-pod "$NS" "$POD_UID" "pod event from e2e"
    } >"$T/events.yaml"
}
event() { # NS NAME KIND APIVERSION OBJNAME OBJNS UID MESSAGE
    cat <<EOF
apiVersion: v1
kind: Event
metadata:
  name: e2e-$2
  namespace: $1
involvedObject:
  apiVersion: $4
  kind: $3
  name: $5
  namespace: "$6"
  uid: $7
reason: E2ETest
message: $8
type: Normal
source:
  component: e2e-test
firstTimestamp: "$now"
lastTimestamp: "$now"
count: 1
EOF
}

version_apply() {
    kc create -f "$T/ns.yaml"
    check "$(c create-namespace-f)" out_is "namespace/$NS created"
    # kubectl create namespace goes through the typed client.
    kc create namespace "$NS-x"
    check "$(c create-namespace)" out_is "namespace/$NS-x created"
    kc apply -f "$T/seed.yaml"
    check "$(c apply)" out_is "resourceslice.resource.k8s.io/$SLICE created
deviceclass.resource.k8s.io/$CLASS created
resourceclaimtemplate.resource.k8s.io/single-gpu created
pod/gpu-test-pod created"
    kc apply -f "$T/seed.yaml"
    check "$(c apply-again)" first3_is "resourceslice.resource.k8s.io/$SLICE unchanged
deviceclass.resource.k8s.io/$CLASS unchanged
resourceclaimtemplate.resource.k8s.io/single-gpu configured"
    check "$(c apply-again-pod)" pod_reapplied
    kc get pod gpu-test-pod -o 'jsonpath={.spec.tolerations[*].key}'
    check "$(c apply-again-tolerations)" out_is "nvidia.com/gpu node.kubernetes.io/not-ready node.kubernetes.io/unreachable"
    # A pod without tolerations of its own re-applies unchanged.
    kc apply -f "$T/pod-plain.yaml"
    check "$(c apply-pod)" out_is "pod/plain-pod created"
    kc apply -f "$T/pod-plain.yaml"
    check "$(c apply-pod-again)" out_is "pod/plain-pod unchanged"
    kc get pod plain-pod -o 'jsonpath={.spec.tolerations[*].key} {.spec.containers[0].terminationMessagePath} {.spec.schedulerName}'
    check "$(c pod-defaults)" out_is "node.kubernetes.io/not-ready node.kubernetes.io/unreachable /dev/termination-log default-scheduler"
    kc delete pod plain-pod
    check "$(c delete-pod)" out_is 'pod "plain-pod" deleted'
    # drad's resourceclaim controller makes the pod's claim from the template.
    local i
    for i in $(seq 100); do
        kc get resourceclaims -o 'jsonpath={.items[*].metadata.name}'
        TCLAIM=$(grep -Eo 'gpu-test-pod-gpu-claim-[bcdfghjklmnpqrstvwxz2456789]{5}' "$E2E_OUT")
        [ -n "$TCLAIM" ] && break
        sleep 0.1
    done
    [ -n "$TCLAIM" ] && pass "$(c template-claim)" || fail "$(c template-claim)" "no claim for the pod"
    kc get pod gpu-test-pod -o 'jsonpath={.status.resourceClaimStatuses[0].name}={.status.resourceClaimStatuses[0].resourceClaimName}'
    check "$(c template-claim-status)" out_is "gpu-claim=$TCLAIM"
    kc apply -f "$T/claim.yaml"
    check "$(c apply-claim)" out_is "resourceclaim.resource.k8s.io/claim-a created"
    kc apply -f "$T/claim.yaml"
    check "$(c apply-claim-again)" out_is "resourceclaim.resource.k8s.io/claim-a unchanged"
    kc create -f "$T/claim.yaml"
    check "$(c create-existing)" rc_has 1 "^Error from server \(AlreadyExists\): error when creating \"$T/claim.yaml\": resourceclaims.resource.k8s.io \"claim-a\" already exists$"
    kc create -f "$T/claim-gen.yaml"
    check "$(c create-generatename)" ok_has '^resourceclaim.resource.k8s.io/claim-gen-[bcdfghjklmnpqrstvwxz2456789]{5} created$'
    GEN=$(sed -n 's|^resourceclaim.resource.k8s.io/\(claim-gen-.*\) created$|\1|p' "$E2E_OUT")
}

version_get() {
    kc get resourceslice "$SLICE"
    check "$(c get-slice)" norm_is "NAME NODE DRIVER POOL AGE
$SLICE gb200-pod2-f06-node05 gpu.nvidia.com gb200-pod2-f06-node05 <age>"
    # Exactly kube-apiserver's header, as kubectl aligns it.
    check "$(c get-slice-header)" has '^NAME +NODE +DRIVER +POOL +AGE$'
    kc get resourceslices -o wide --field-selector "spec.driver=gpu.nvidia.com,metadata.name=$SLICE"
    check "$(c get-slices-wide)" norm_is "NAME NODE DRIVER POOL AGE
$SLICE gb200-pod2-f06-node05 gpu.nvidia.com gb200-pod2-f06-node05 <age>"
    kc get deviceclass/"$CLASS" resourceclaimtemplate/single-gpu
    check "$(c get-class-template)" norm_is "NAME AGE
deviceclass.resource.k8s.io/$CLASS <age>

NAME AGE
resourceclaimtemplate.resource.k8s.io/single-gpu <age>"
    kc get resourceclaims
    check "$(c get-claims)" norm_is "NAME STATE AGE
claim-a pending <age>
$GEN pending <age>
$TCLAIM pending <age>"
    kc get pods -o wide
    check "$(c get-pods-wide)" norm_is "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES
gpu-test-pod 0/1 Pending 0 <age> <none> <none> <none> <none>"
    kc get pods
    check "$(c get-pods)" norm_is "NAME READY STATUS RESTARTS AGE
gpu-test-pod 0/1 Pending 0 <age>"
    kco get resourceslice "$SLICE" -o yaml
    check "$(c get-yaml)" ok_has '^kind: ResourceSlice$'
    check "$(c get-yaml-pool)" has '^    name: gb200-pod2-f06-node05$'
    kco get resourceclaims -o yaml
    check "$(c get-list-yaml)" ok_has '^kind: List$'
    kco get resourceclaim claim-a -o json
    check "$(c get-json)" jqe ".kind == \"ResourceClaim\" and .apiVersion == \"resource.k8s.io/v1\"
        and .metadata.namespace == \"$NS\" and (.metadata.uid | length) == 36
        and .metadata.generation == 1 and (.metadata.creationTimestamp | test(\"Z$\"))
        and .spec.devices.requests[0].exactly.allocationMode == \"ExactCount\"" "$E2E_OUT"
    CLAIM_UID=$(jq -r .metadata.uid "$E2E_OUT")
    kco get resourceclaims,resourceclaimtemplates -o json
    check "$(c get-json-list)" jqe '.kind == "List" and ([.items[].kind] | sort) == ["ResourceClaim","ResourceClaim","ResourceClaim","ResourceClaimTemplate"]' "$E2E_OUT"
    kc get resourceslice/"$SLICE" deviceclass/"$CLASS" -o name
    check "$(c get-name)" out_is "resourceslice.resource.k8s.io/$SLICE
deviceclass.resource.k8s.io/$CLASS"
    kc get resourceslice "$SLICE" -o 'jsonpath={.spec.pool.name}/{.spec.devices[3].name}/{.metadata.uid}'
    check "$(c get-jsonpath)" ok_has '^gb200-pod2-f06-node05/gpu-3/[0-9a-f-]{36}$'
    SLICE_UID=$(sed 's|.*/||' "$E2E_OUT")
    kc get pod gpu-test-pod -o 'jsonpath={.metadata.uid}'
    POD_UID=$(cat "$E2E_OUT")
    kc get resourceclaims -A --sort-by=.metadata.name
    check "$(c get-all-namespaces)" norm_is "NAMESPACE NAME STATE AGE
$NS claim-a pending <age>
$NS $GEN pending <age>
$NS $TCLAIM pending <age>"
    # Pages of one: limit=1, then continue.
    kc get resourceclaims --chunk-size=1 -o name
    check "$(c get-chunked)" out_is "resourceclaim.resource.k8s.io/claim-a
resourceclaim.resource.k8s.io/$GEN
resourceclaim.resource.k8s.io/$TCLAIM"
    kc get resourceclaim nope
    check "$(c get-notfound)" rc_has 1 '^Error from server \(NotFound\): resourceclaims.resource.k8s.io "nope" not found$'
}

version_write() {
    kc label resourceclaim claim-a e2e=yes
    check "$(c label)" out_is "resourceclaim.resource.k8s.io/claim-a labeled"
    kc get resourceclaims -l e2e=yes --show-labels
    check "$(c get-label-selector)" norm_is "NAME STATE AGE LABELS
claim-a pending <age> e2e=yes"
    kc annotate resourceclaim claim-a note=hello
    # kubectl 1.27 prints "annotate", later ones "annotated".
    check "$(c annotate)" ok_has '^resourceclaim.resource.k8s.io/claim-a annotated?$'
    [ "$(wc -l <"$E2E_OUT")" = 1 ] || fail "$(c annotate-lines)" "$(e2e_show)"
    kc patch resourceclaim claim-a --type=merge -p '{"metadata":{"labels":{"p":"merge"}}}'
    check "$(c patch-merge)" out_is "resourceclaim.resource.k8s.io/claim-a patched"
    kc patch resourceclaim claim-a -p '{"metadata":{"labels":{"p":"strategic"}}}'
    check "$(c patch-strategic)" out_is "resourceclaim.resource.k8s.io/claim-a patched"
    kc get resourceclaim claim-a -o 'jsonpath={.metadata.labels.p}'
    check "$(c patch-strategic-value)" out_is "strategic"
    kc patch resourceclaim claim-a --type=json -p '[{"op":"replace","path":"/metadata/labels/p","value":"json"}]'
    check "$(c patch-json)" out_is "resourceclaim.resource.k8s.io/claim-a patched"
    kc patch resourceclaim claim-a --type=json -p '[{"op":"replace","path":"/metadata/labels/p","value":"json"}]'
    check "$(c patch-no-change)" out_is "resourceclaim.resource.k8s.io/claim-a patched (no change)"
    kc patch resourceclaim claim-a --type=merge -p '{"spec":{"devices":{"requests":[{"name":"other","exactly":{"deviceClassName":"x"}}]}}}'
    check "$(c patch-immutable)" rc_has 1 '^The ResourceClaim "claim-a" is invalid: spec: Invalid value: .*field is immutable$'
    # A strategic merge patch of one container by name keeps its other fields.
    kc patch pod gpu-test-pod -p '{"spec":{"containers":[{"name":"ctr","image":"ubuntu:24.04"}]}}'
    check "$(c patch-pod)" out_is "pod/gpu-test-pod patched"
    kc get pod gpu-test-pod -o 'jsonpath={.spec.containers[*].name} {.spec.containers[0].image} {.spec.containers[0].command}'
    check "$(c patch-pod-kept)" out_is 'ctr ubuntu:24.04 ["bash","-c"]'
    # Anything but images, activeDeadlineSeconds and added tolerations is
    # immutable in a pod's spec (kube's ValidatePodUpdate).
    kc patch pod gpu-test-pod --type=merge -p '{"spec":{"restartPolicy":"Always"}}'
    check "$(c patch-pod-immutable)" rc_has 1 '^The Pod "gpu-test-pod" is invalid: spec: Forbidden: pod updates may not change fields other than '
    kc patch pod gpu-test-pod --type=json -p '[{"op":"add","path":"/spec/tolerations/-","value":{"key":"e2e","operator":"Exists","effect":"NoSchedule"}}]'
    check "$(c patch-pod-toleration-added)" out_is "pod/gpu-test-pod patched"
    EDITOR=$editor kc edit resourceclaim claim-a
    check "$(c edit)" out_is "resourceclaim.resource.k8s.io/claim-a edited"
    kc get resourceclaim claim-a -o 'jsonpath={.metadata.annotations.note}'
    check "$(c edit-value)" out_is "edited"
    kco get resourceclaim claim-a -o yaml
    sed 's/^  labels:$/  labels:\n    replaced: "yes"/' "$E2E_OUT" >"$T/replace.yaml"
    kc replace -f "$T/replace.yaml"
    check "$(c replace)" out_is "resourceclaim.resource.k8s.io/claim-a replaced"
    kc replace -f "$T/replace.yaml"
    check "$(c replace-stale)" rc_has 1 "^Error from server \(Conflict\): error when replacing \"$T/replace.yaml\": Operation cannot be fulfilled on resourceclaims.resource.k8s.io \"claim-a\": the object has been modified; please apply your changes to the latest version and try again$"
    kc create -f "$T/bad.yaml"
    check "$(c create-invalid)" rc_has 1 "^The ResourceSlice \"bad-$TAG\" is invalid: $"
    check "$(c create-invalid-driver)" has '^\* spec\.driver: Required value$'
    check "$(c create-invalid-pool)" has '^\* spec\.pool\.name: Required value$'
    kc create -f "$T/unknown.yaml"
    check "$(c create-unknown-field)" rc_has 1 "^Error from server \(BadRequest\): error when creating \"$T/unknown.yaml\": ResourceClaim in version \"v1\" cannot be handled as a ResourceClaim: strict decoding error: unknown field \"spec.foo\"$"
    # Without validation the unknown field is dropped, as typed decoding
    # drops it in kube-apiserver; later strict writes must not trip on it.
    kc create --validate=false -f "$T/unknown.yaml"
    check "$(c create-unvalidated)" out_is "resourceclaim.resource.k8s.io/claim-unknown created"
    kc get resourceclaim claim-unknown -o 'jsonpath={.spec.foo}'
    check "$(c unknown-field-dropped)" out_is ""
    kc label resourceclaim claim-unknown e2e=yes
    check "$(c unknown-field-label)" out_is "resourceclaim.resource.k8s.io/claim-unknown labeled"
    kc delete resourceclaim claim-unknown
    kc apply --server-side -f "$T/claim-ssa-kubectl.yaml"
    check "$(c apply-server-side)" out_is "resourceclaim.resource.k8s.io/claim-ssa serverside-applied"
    kc apply --server-side -f "$T/claim-ssa-kubectl.yaml"
    check "$(c apply-server-side-again)" out_is "resourceclaim.resource.k8s.io/claim-ssa serverside-applied"
    kc get resourceclaim claim-ssa -o 'jsonpath={.metadata.managedFields[*].manager}/{.metadata.managedFields[*].operation}'
    check "$(c apply-server-side-managed)" out_is "kubectl/Apply"
    kc apply --server-side --field-manager=other -f "$T/claim-ssa-other.yaml"
    check "$(c apply-server-side-conflict)" rc_has 1 '^error: Apply failed with 1 conflict: conflict with "kubectl": \.metadata\.labels\.owner$'
}

# get -w, collection and by name, while a second client writes the claim's
# status (allocation + reservedFor): both print the new row.
version_watch() {
    local w1 w2 p1 p2
    e2e_bg "$T/watch-all" "$K" --cache-dir "$T/cache" get resourceclaims -w
    p1=$E2E_BG
    e2e_bg "$T/watch-one" "$K" --cache-dir "$T/cache" get resourceclaim claim-a -w
    p2=$E2E_BG
    e2e_wait_for "$T/watch-all" '^claim-a +pending' && e2e_wait_for "$T/watch-one" '^claim-a +pending'
    w1=$?
    kc create -f "$T/claim-pod.yaml"
    check "$(c claim-pod)" out_is "pod/claim-pod created"
    kc get pod claim-pod -o 'jsonpath={.metadata.uid}'
    CLAIM_POD_UID=$(cat "$E2E_OUT")
    kc patch resourceclaim claim-a --subresource=status --type=merge -p "{\"status\":{
        \"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",
          \"pool\":\"gb200-pod2-f06-node05\",\"device\":\"gpu-0\"}]}},
        \"reservedFor\":[{\"resource\":\"pods\",\"name\":\"claim-pod\",\"uid\":\"$CLAIM_POD_UID\"}]}}"
    check "$(c patch-status)" out_is "resourceclaim.resource.k8s.io/claim-a patched"
    e2e_wait_for "$T/watch-all" '^claim-a +allocated,reserved +' 20
    w2=$?
    [ $w1 = 0 ] && [ $w2 = 0 ] && pass "$(c watch-list)" || fail "$(c watch-list)" "$(sed 's/^/    | /' "$T/watch-all")"
    e2e_wait_for "$T/watch-one" '^claim-a +allocated,reserved +' 20 && pass "$(c watch-name)" \
        || fail "$(c watch-name)" "$(sed 's/^/    | /' "$T/watch-one")"
    e2e_bg_stop "$p1"
    e2e_bg_stop "$p2"
    kc get resourceclaim claim-a
    check "$(c get-allocated-reserved)" norm_is "NAME STATE AGE
claim-a allocated,reserved <age>"
    kc get resourceclaim claim-a -o 'jsonpath={.status.allocation.devices.results[0].device} {.status.reservedFor[0].name}'
    check "$(c status-stored)" out_is "gpu-0 claim-pod"
}

version_describe() {
    events_manifest
    kc create -f "$T/events.yaml"
    check "$(c create-events)" out_is "event/e2e-claim created
event/e2e-slice-$TAG created
event/e2e-pod created"
    kc describe resourceclaim claim-a
    check "$(c describe-claim)" ok_has '^Name: +claim-a$'
    check "$(c describe-claim-ns)" has "^Namespace: +$NS$"
    check "$(c describe-claim-status)" has '^  Reserved For:$'
    check "$(c describe-claim-events)" has '^  Normal +E2ETest +[0-9a-z]+ +e2e-test +claim event from e2e$'
    kc describe resourceslice "$SLICE"
    check "$(c describe-slice)" ok_has "^Name: +$SLICE$"
    check "$(c describe-slice-events)" has '^  Normal +E2ETest +[0-9a-z]+ +e2e-test +slice event from e2e$'
    kc describe pod gpu-test-pod
    check "$(c describe-pod)" ok_has '^Name: +gpu-test-pod$'
    check "$(c describe-pod-events)" has '^  Normal +E2ETest +[0-9a-z]+ +e2e-test +pod event from e2e$'
    kc get events --field-selector involvedObject.kind=Pod
    check "$(c get-events)" ok_has '^[0-9a-z<>]+ +Normal +E2ETest +pod/gpu-test-pod +pod event from e2e$'
}

# resource.k8s.io/v1beta1 and v1beta2, converted (what 1.32/1.33 drivers
# and kubelets use): reads of v1 objects, a v1beta1 write read back as v1.
version_beta() {
    kc get resourceclaims.v1beta1.resource.k8s.io claim-a \
        -o 'jsonpath={.apiVersion} {.spec.devices.requests[0].deviceClassName} {.spec.devices.requests[0].allocationMode} {.status.allocation.devices.results[0].device}'
    check "$(c beta1-get)" out_is "resource.k8s.io/v1beta1 $CLASS ExactCount gpu-0"
    kc get resourceclaims.v1beta2.resource.k8s.io claim-a \
        -o 'jsonpath={.apiVersion} {.spec.devices.requests[0].exactly.deviceClassName}'
    check "$(c beta2-get)" out_is "resource.k8s.io/v1beta2 $CLASS"
    kc get resourceslices.v1beta1.resource.k8s.io "$SLICE"
    check "$(c beta1-table)" norm_is "NAME NODE DRIVER POOL AGE
$SLICE gb200-pod2-f06-node05 gpu.nvidia.com gb200-pod2-f06-node05 <age>"
    kc apply -f "$T/claim-v1beta1.yaml"
    check "$(c beta1-apply)" out_is "resourceclaim.resource.k8s.io/claim-beta created"
    kc get resourceclaim.v1.resource.k8s.io claim-beta -o 'jsonpath={.apiVersion} {.spec.devices.requests[0].exactly.deviceClassName}'
    check "$(c beta1-as-v1)" out_is "resource.k8s.io/v1 $CLASS"
    kc apply -f "$T/claim-v1beta1.yaml"
    check "$(c beta1-apply-again)" out_is "resourceclaim.resource.k8s.io/claim-beta unchanged"
    kc delete -f "$T/claim-v1beta1.yaml"
    check "$(c beta1-delete)" out_is 'resourceclaim.resource.k8s.io "claim-beta" deleted'
}

# A Node as a kubelet registers it (status included), its wide table,
# describe (its pods through a spec.nodeName/status.phase field selector),
# uncordon and cordon (strategic merge patches of spec.unschedulable).
version_nodes() {
    kc create -f "$T/node.yaml"
    check "$(c node-create)" out_is "node/node-$TAG created"
    kc get node "node-$TAG" -o wide
    check "$(c node-wide)" norm_is "NAME STATUS ROLES AGE VERSION INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME
node-$TAG Ready,SchedulingDisabled worker <age> v1.35.0 10.0.0.5 <none> Debian GNU/Linux 12 (bookworm) 6.1.0-e2e containerd://2.0.0"
    kc describe node "node-$TAG"
    check "$(c node-describe)" ok_has '^  Ready +True +.* +KubeletReady +kubelet is posting ready status$'
    check "$(c node-describe-pods)" has '^Non-terminated Pods: +\(0 in total\)$'
    kc uncordon "node-$TAG"
    check "$(c node-uncordon)" out_is "node/node-$TAG uncordoned"
    kc cordon "node-$TAG"
    check "$(c node-cordon)" out_is "node/node-$TAG cordoned"
    kc get node "node-$TAG"
    check "$(c node-get)" norm_is "NAME STATUS ROLES AGE VERSION
node-$TAG Ready,SchedulingDisabled worker <age> v1.35.0"
    kc logs gpu-test-pod
    check "$(c logs-unscheduled)" rc_has 1 '^Error from server \(BadRequest\): pod gpu-test-pod does not have a host assigned$'
    kc delete node "node-$TAG"
    check "$(c node-delete)" out_is "node \"node-$TAG\" deleted"
}

version_discovery() {
    kc api-resources
    check "$(c api-resources)" ok_has '^resourceclaims +resource\.k8s\.io/v1 +true +ResourceClaim$'
    local r
    for r in 'resourceclaimtemplates +resource\.k8s\.io/v1 +true +ResourceClaimTemplate' \
        'resourceslices +resource\.k8s\.io/v1 +false +ResourceSlice' \
        'deviceclasses +resource\.k8s\.io/v1 +false +DeviceClass' \
        'pods +po +v1 +true +Pod' 'namespaces +ns +v1 +false +Namespace'; do
        has "^$r$" || fail "$(c api-resources-${r%% *})" "$(e2e_show)"
    done
    kc explain resourceclaim.spec.devices
    check "$(c explain)" ok_has '^KIND: +ResourceClaim$'
    check "$(c explain-field)" has '^FIELD: +devices <DeviceClaim>$'
    check "$(c explain-requests)" has '^  requests[[:space:]]+<\[\]DeviceRequest>'
}

version_delete() {
    local p
    kc create -f "$T/claim-fin.yaml"
    check "$(c create-finalizer)" out_is "resourceclaim.resource.k8s.io/claim-fin created"
    kc delete resourceclaim claim-fin --wait=false
    check "$(c delete-nowait)" out_is 'resourceclaim.resource.k8s.io "claim-fin" deleted'
    kc get resourceclaim claim-fin
    check "$(c finalizer-holds)" norm_is "NAME STATE AGE
claim-fin deleted <age>"
    kc get resourceclaim claim-fin -o 'jsonpath={.metadata.deletionTimestamp}'
    check "$(c finalizer-deletiontimestamp)" ok_has 'Z$'
    # kubectl delete waits for the object to go; a second client removes
    # the finalizer.
    e2e_bg "$T/delete-wait" "$K" --cache-dir "$T/cache" delete resourceclaim claim-fin
    p=$E2E_BG
    sleep 0.5
    kill -0 "$p" 2>/dev/null && pass "$(c delete-waits)" || fail "$(c delete-waits)" "$(cat "$T/delete-wait")"
    kc patch resourceclaim claim-fin --type=merge -p '{"metadata":{"finalizers":null}}'
    check "$(c remove-finalizer)" out_is "resourceclaim.resource.k8s.io/claim-fin patched"
    e2e_bg_wait "$p" 60
    [ $? = 0 ] && [ "$(cat "$T/delete-wait")" = 'resourceclaim.resource.k8s.io "claim-fin" deleted' ] \
        && pass "$(c delete-wait-done)" || fail "$(c delete-wait-done)" "$(cat "$T/delete-wait")"
    kc get resourceclaim claim-fin
    check "$(c finalizer-gone)" rc_has 1 '^Error from server \(NotFound\): resourceclaims.resource.k8s.io "claim-fin" not found$'
    kc delete resourceclaim claim-ssa
    check "$(c delete-name)" out_is 'resourceclaim.resource.k8s.io "claim-ssa" deleted'
    version_gc
    kc delete resourceclaims --all
    check "$(c delete-all)" ok_has '^resourceclaim.resource.k8s.io "claim-a" deleted$'
    check "$(c delete-all-gen)" has "^resourceclaim.resource.k8s.io \"$GEN\" deleted$"
    check "$(c delete-all-orphan)" has '^resourceclaim.resource.k8s.io "child-or" deleted$'
    kc get resourceclaims
    check "$(c delete-all-empty)" out_is "No resources found in $NS namespace."
    kc delete event e2e-slice-$TAG -n default
    check "$(c delete-event)" out_is "event \"e2e-slice-$TAG\" deleted"
    # The namespace with objects left in it (the claim and pod events):
    # kubectl waits until the namespace is gone.
    kc delete namespace "$NS"
    check "$(c delete-namespace)" out_is "namespace \"$NS\" deleted"
    kc get namespace "$NS"
    check "$(c namespace-gone)" rc_has 1 "^Error from server \(NotFound\): namespaces \"$NS\" not found$"
    kc get events -n "$NS"
    check "$(c namespace-emptied)" out_is "No resources found in $NS namespace."
    kc delete namespace "$NS-x" --wait=false
}

# Owner references: foreground (kubectl returns once the owner is gone, and
# the owner goes only after its blocking dependent), orphan (the dependent
# stays, its reference stripped), background (the seed's pod deleted with
# delete -f takes the claim it owns; kubectl wait sees it go).
version_gc() {
    local uid
    kc create -f "$T/claim.yaml" --dry-run=client -o yaml
    sed 's/name: claim-a/name: parent-fg/' "$E2E_OUT" >"$T/parents.yaml"
    printf -- '---\n' >>"$T/parents.yaml"
    sed 's/name: claim-a/name: parent-or/' "$E2E_OUT" >>"$T/parents.yaml"
    kc create -f "$T/parents.yaml"
    check "$(c gc-parents)" out_is "resourceclaim.resource.k8s.io/parent-fg created
resourceclaim.resource.k8s.io/parent-or created"
    kc get resourceclaim parent-fg -o 'jsonpath={.metadata.uid}'
    uid=$(cat "$E2E_OUT")
    owned_claim child-fg resource.k8s.io/v1 ResourceClaim parent-fg "$uid" >"$T/children.yaml"
    printf -- '---\n' >>"$T/children.yaml"
    kc get resourceclaim parent-or -o 'jsonpath={.metadata.uid}'
    owned_claim child-or resource.k8s.io/v1 ResourceClaim parent-or "$(cat "$E2E_OUT")" >>"$T/children.yaml"
    printf -- '---\n' >>"$T/children.yaml"
    owned_claim claim-owned v1 Pod gpu-test-pod "$POD_UID" >>"$T/children.yaml"
    kc create -f "$T/children.yaml"
    check "$(c gc-children)" out_is "resourceclaim.resource.k8s.io/child-fg created
resourceclaim.resource.k8s.io/child-or created
resourceclaim.resource.k8s.io/claim-owned created"
    kc delete resourceclaim parent-fg --cascade=foreground
    check "$(c gc-foreground)" out_is 'resourceclaim.resource.k8s.io "parent-fg" deleted'
    kc get resourceclaim child-fg
    check "$(c gc-foreground-dependent)" rc_has 1 'resourceclaims.resource.k8s.io "child-fg" not found$'
    kc delete resourceclaim parent-or --cascade=orphan
    check "$(c gc-orphan)" out_is 'resourceclaim.resource.k8s.io "parent-or" deleted'
    kc get resourceclaim child-or -o 'jsonpath={.metadata.name}:{.metadata.ownerReferences}'
    check "$(c gc-orphan-dependent)" out_is "child-or:"
    kc delete -f "$T/seed.yaml"
    check "$(c delete-f)" out_is "resourceslice.resource.k8s.io \"$SLICE\" deleted
deviceclass.resource.k8s.io \"$CLASS\" deleted
resourceclaimtemplate.resource.k8s.io \"single-gpu\" deleted
pod \"gpu-test-pod\" deleted"
    kc wait --for=delete resourceclaim/claim-owned --timeout=60s
    # Prints "condition met" only when it saw the claim go.
    [ "$RC" = 0 ] && grep -Evq '^(resourceclaim.resource.k8s.io/claim-owned condition met)?$' "$E2E_OUT"
    [ $? = 1 ] && [ "$RC" = 0 ] && pass "$(c gc-background-wait)" || fail "$(c gc-background-wait)" "rc $RC $(e2e_show)"
    # So does the claim made from the template for it.
    kc wait --for=delete "resourceclaim/$TCLAIM" --timeout=60s
    kc get resourceclaim "$TCLAIM"
    check "$(c gc-template-claim)" rc_has 1 "resourceclaims.resource.k8s.io \"$TCLAIM\" not found$"
    kc get resourceclaim claim-owned
    check "$(c gc-background)" rc_has 1 'resourceclaims.resource.k8s.io "claim-owned" not found$'
    # The orphan is still there after the passes that collected claim-owned.
    kc get resourceclaim child-or -o 'jsonpath={.metadata.name}'
    check "$(c gc-orphan-kept)" out_is "child-or"
}

run_version() {
    K=$1
    TAG=$(basename "$K")
    TAG=${TAG#kubectl.}
    TAG=${TAG//./-}
    [ "$TAG" = kubectl ] && TAG=bin
    NS=e2e-$TAG
    SLICE=gb200-pod2-f06-node05-gpu.nvidia.com-7xk2p-$TAG
    CLASS=gpu.nvidia.com-$TAG
    T=$E2E_TMP/$TAG
    mkdir -p "$T"
    E2E_OUT=$T/out
    manifests
    export KUBECONFIG=$T/kubeconfig
    local v
    v=$("$K" version --client -o json 2>/dev/null | jq -r .clientVersion.gitVersion)
    echo "== $K ($v): namespace $NS"
    version_apply
    version_get
    version_write
    version_watch
    version_describe
    version_beta
    version_nodes
    version_discovery
    version_delete
}

discovery_negotiation
raw_requests
examples_as_is
for k in "${KUBECTLS[@]}"; do
    run_version "$k"
done
e2e_stop_drad || fail drad-exit "drad did not stop cleanly: $(cat "$E2E_TMP/drad.err")"
e2e_finish
