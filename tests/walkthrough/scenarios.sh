#!/bin/bash
# scenarios.sh DRAD SOURCE_DIR SCENARIO: one fault or mode of drad, with
# the real kubectl, each a test of its own:
#  kill-drad    kill -9 of drad while pods run, then a restart on the same
#               data directory: objects intact, the running containers
#               found again (same containerID, no restart), a container
#               that died meanwhile restarted per restartPolicy (Always:
#               restartCount 1; Never: Failed), no device handed out twice
#               (the cluster fills up to eight GPUs and not one more);
#  kill-plugin  kill -9 of the plugin child while it prepares (held there
#               by $DRA_GPU_PLUGIN_PREPARE_DELAY_MS): drad restarts it, it
#               re-registers, the agent prepares again, the pod runs; the
#               checkpoint ends PrepareCompleted with one CDI spec;
#  crashloop    a container that exits non-zero: restarted with back-off,
#               CrashLoopBackOff in kubectl get pod, the exit code in
#               lastState and a BackOff event;
#  fake-nodes   --nodes none --fake-nodes 3: three Ready fake nodes with a
#               slice each; a one-GPU pod scheduled there is Running;
#  modes        --nodes none (no nodes, no slices, the classes installed,
#               and put back at the next start when changed);
#               a data directory too long for socket paths still works;
#               --real-gpus where there is no NVIDIA driver fails clearly;
#               --nodes with a file that is not an inventory fails clearly.
# Skips (77) without kubectl or where bwrap cannot create namespaces.
SCENARIO=$3
. "$(dirname "$0")/lib.sh"
cd "$W_SRC" || exit 1

NODE5=gb200-pod2-f06-node05

ctr_id() { kubectl get pod "$1" -o jsonpath='{.status.containerStatuses[0].containerID}'; }
restarts() { kubectl get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}'; }
running_all() { for p in "$@"; do is_phase "$p" Running || return 1; done; }
# The pid of pod $1's container, from its shim's state file.
ctr_pid() {
    local id
    id=$(ctr_id "$1")
    sed -n 's/^pid=//p' "$W_DATA"/nodes/*/containers/"${id#bwrap://}"/state 2>/dev/null | head -1
}

# The devices allocated to the claims of pods $@, one line per pod.
alloc_of() {
    local p c
    for p in "$@"; do
        c=$(kubectl get pod "$p" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
        echo "$p $(kubectl get resourceclaim "$c" -o jsonpath='{.status.allocation.devices.results[0].pool}/{.status.allocation.devices.results[0].device}')"
    done
}

kill_drad() {
    kubectl apply -f examples/resourceclaimtemplate-single-gpu.yaml >/dev/null
    { w_pod_yaml keeps single-gpu "nvidia-smi -L; sleep 3600"; echo ---
      w_pod_yaml always single-gpu "nvidia-smi -L; sleep 3600" Always; echo ---
      w_pod_yaml never single-gpu "nvidia-smi -L; sleep 3600" Never; } >"$W_TMP/pods.yaml"
    kubectl apply -f "$W_TMP/pods.yaml" >/dev/null
    w_wait "three pods Running" 60 running_all keeps always never
    local id_keeps id_always id_never claims_before plugins p_always p_never
    id_keeps=$(ctr_id keeps)
    id_always=$(ctr_id always)
    id_never=$(ctr_id never)
    claims_before=$(alloc_of keeps always)
    plugins=$(w_plugin_pids)
    w_log "kill -9 drad"
    w_kill9
    w_wait "the plugin children follow drad" 20 sh -c "! ps -o pid= -p \"$(echo "$plugins" | tr '\n' ' ')0\" | grep -q ."
    check "the containers outlive drad" w_any_alive $(w_container_pids)
    # Two containers die while drad is down.
    p_always=$(sed -n 's/^pid=//p' "$W_DATA"/nodes/*/containers/"${id_always#bwrap://}"/state)
    p_never=$(sed -n 's/^pid=//p' "$W_DATA"/nodes/*/containers/"${id_never#bwrap://}"/state)
    kill -KILL "$p_always" "$p_never"
    w_log "restart drad on the same data directory"
    w_start
    expect "allocations intact after the restart" "$claims_before" "$(alloc_of keeps always)"
    w_wait "keeps Running with its container" 30 sh -c "[ \"\$(kubectl get pod keeps -o jsonpath='{.status.containerStatuses[0].containerID}')\" = '$id_keeps' ]"
    expect "the running container was found again (same containerID)" "$id_keeps" "$(ctr_id keeps)"
    expect "... and not restarted" 0 "$(restarts keeps)"
    w_wait "always restarted" 60 sh -c "[ \"\$(kubectl get pod always -o jsonpath='{.status.containerStatuses[0].restartCount}')\" = 1 ]"
    w_wait "always Running again" 30 is_phase always Running
    check "always: a new container" test "$(ctr_id always)" != "$id_always"
    w_wait "never Failed" 30 is_phase never Failed
    expect "never: killed (137)" 137 "$(kubectl get pod never -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')"
    never_released() { [ -z "$(kubectl get resourceclaim "$(kubectl get pod never -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')" -o jsonpath='{.status.allocation}')" ]; }
    w_wait "never's claim released" 30 never_released && pass "never: its claim is released (deallocated)"
    check "keeps: its log is still served" sh -c "kubectl logs keeps | grep -q '^GPU 0: NVIDIA GB200'"
    # Fill the cluster: 2 GPUs are held (keeps, always; never's claim is
    # released), so six more pods run and the seventh waits.
    for i in 1 2 3 4 5 6 7; do w_pod_yaml "more-$i" single-gpu "nvidia-smi -L; sleep 3600"; echo ---; done >"$W_TMP/more.yaml"
    kubectl apply -f "$W_TMP/more.yaml" >/dev/null
    count() { kubectl get pods -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c "^$1$"; }
    full() { [ "$(count Running)" = 8 ] && [ "$(count Pending)" = 1 ]; }
    w_wait "eight Running, one Pending" 120 full && pass "eight GPUs, eight running pods, one Pending"
    local devs
    devs=$(kubectl get resourceclaim -o jsonpath='{range .items[*]}{.status.allocation.devices.results[0].pool}/{.status.allocation.devices.results[0].device}{"\n"}{end}' | grep gpu)
    expect "no device allocated twice" "$(echo "$devs" | wc -l)" "$(echo "$devs" | sort -u | wc -l)"
    expect "eight devices allocated" 8 "$(echo "$devs" | sort -u | wc -l)"
    all_logged() { for p in $(kubectl get pods --field-selector=status.phase=Running -o name); do kubectl logs "$p" 2>/dev/null | grep -q '^GPU 0' || return 1; done; }
    w_wait "every running pod logged its GPU" 60 all_logged
    local uuids
    uuids=$(for p in $(kubectl get pods --field-selector=status.phase=Running -o name); do kubectl logs "$p"; done | sed -n 's/.*UUID: \(GPU-[^)]*\)).*/\1/p')
    expect "no GPU visible in two containers" 8 "$(echo "$uuids" | sort -u | wc -l)"
    kubectl delete pods --all --grace-period=1 >/dev/null 2>&1
}

kill_plugin() {
    kubectl apply -f examples/resourceclaimtemplate-single-gpu.yaml -f examples/pod-gpu-test.yaml >/dev/null
    local cp=$W_DATA/nodes/$NODE5/kubelet/plugins/gpu.nvidia.com/checkpoint.json pid old
    w_wait "the plugin is preparing (PrepareStarted)" 60 grep -q PrepareStarted "$cp"
    old=$(cat "$W_DATA/nodes/$NODE5/plugin.pid")
    w_log "kill -9 the plugin ($old) during prepare"
    kill -KILL "$old"
    w_wait "drad restarted the plugin" 30 sh -c "[ -s '$W_DATA/nodes/$NODE5/plugin.pid' ] && [ \"\$(cat '$W_DATA/nodes/$NODE5/plugin.pid')\" != '$old' ]"
    check "drad reported the restart" grep -q "dra-gpu-plugin for $NODE5: pid $old ended (signal 9); restarting" "$W_TMP/drad.err"
    w_wait "gpu-test-pod Running" 90 is_phase gpu-test-pod Running
    kubectl get events --field-selector involvedObject.name=gpu-test-pod >"$W_TMP/events" 2>&1
    check "the failed prepare is an event" grep -q FailedPrepareDynamicResources "$W_TMP/events"
    grep FailedPrepareDynamicResources "$W_TMP/events" | head -1 | sed -E 's/  +/ /g'
    seed_log() { kubectl logs gpu-test-pod 2>/dev/null | grep -q 'GPU allocation successful.'; }
    w_wait "the seed pod's log" 30 seed_log
    expect "the pod's log" "GPU 0: NVIDIA GB200 (UUID: GPU-137d7996-cb8e-7683-e47d-9c99e6f49eb5)
GPU allocation successful." "$(kubectl logs gpu-test-pod 2>&1)"
    local uid
    uid=$(kubectl get resourceclaim -o jsonpath='{.items[0].metadata.uid}')
    check "checkpoint: the claim PrepareCompleted" grep -q "\"$uid\".*PrepareCompleted" "$cp"
    expect "one CDI spec" 1 "$(ls "$W_DATA/nodes/$NODE5/cdi" | wc -l)"
    kubectl delete pod gpu-test-pod --grace-period=1 >/dev/null 2>&1
    check "unprepared after the delete" test -z "$(ls "$W_DATA/nodes/$NODE5/cdi")"
}

crashloop() {
    kubectl apply -f examples/resourceclaimtemplate-single-gpu.yaml >/dev/null
    w_pod_yaml crasher single-gpu "echo failing; exit 3" Always >"$W_TMP/crash.yaml"
    kubectl apply -f "$W_TMP/crash.yaml" >/dev/null
    crashing() { kubectl get pod crasher --no-headers 2>/dev/null | grep -q CrashLoopBackOff; }
    w_wait "CrashLoopBackOff in kubectl get pod" 60 crashing && pass "kubectl get pod shows CrashLoopBackOff"
    kubectl get pod crasher 2>&1 | sed -E 's/  +/ /g'
    check "restarted at least once" test "$(restarts crasher)" -ge 1
    expect "lastState: exit code 3" 3 "$(kubectl get pod crasher -o jsonpath='{.status.containerStatuses[0].lastState.terminated.exitCode}')"
    kubectl describe pod crasher >"$W_TMP/describe" 2>&1
    check "describe: BackOff event" grep -q "Back-off restarting failed container ctr in pod crasher_default" "$W_TMP/describe"
    check "describe: waiting reason" grep -q "Reason: *CrashLoopBackOff" "$W_TMP/describe"
    check "kubectl logs --previous" sh -c "kubectl logs crasher --previous | grep -q failing"
    kubectl delete pod crasher --grace-period=1 >/dev/null 2>&1
}

fake_nodes() {
    local out
    out=$(kubectl get nodes --no-headers 2>&1 | awk '{print $1, $2}')
    expect "three fake nodes, Ready" "fake-node-0 Ready
fake-node-1 Ready
fake-node-2 Ready" "$out"
    expect "a slice per fake node" 3 "$(kubectl get resourceslice -o name | wc -l)"
    kubectl apply -f examples/resourceclaimtemplate-single-gpu.yaml -f examples/pod-gpu-test.yaml >/dev/null
    w_wait "the seed pod Running on a fake node" 60 is_phase gpu-test-pod Running
    check "... bound to a fake node" sh -c "kubectl get pod gpu-test-pod -o jsonpath='{.spec.nodeName}' | grep -q '^fake-node-'"
    check "... its claim allocated,reserved" sh -c "kubectl get resourceclaim --no-headers | grep -q 'allocated,reserved'"
    kubectl delete pod gpu-test-pod >/dev/null 2>&1
    w_wait "the pod is gone" 30 sh -c '[ -z "$(kubectl get pods -o name)" ]'
}

modes() {
    expect "--nodes none: no nodes" "" "$(kubectl get nodes -o name 2>&1)"
    expect "--nodes none: no slices" "" "$(kubectl get resourceslice -o name 2>&1)"
    expect "--nodes none: the chart's classes" 3 "$(kubectl get deviceclass -o name | wc -l)"
    local expr
    expr=$(kubectl get deviceclass gpu.nvidia.com -o jsonpath='{.spec.selectors[0].cel.expression}')
    kubectl patch deviceclass gpu.nvidia.com --type=merge \
        -p '{"spec":{"selectors":[{"cel":{"expression":"true"}}]}}' >/dev/null
    w_stop
    expect "--nodes none: exit 0" 0 $?
    w_start --nodes none
    expect "a changed chart class is put back at start (as helm upgrade)" "$expr" \
        "$(kubectl get deviceclass gpu.nvidia.com -o jsonpath='{.spec.selectors[0].cel.expression}')"
    w_stop
    local rc
    "$W_DRAD" --data-dir "$W_TMP/real" --listen 127.0.0.1:0 --real-gpus >"$W_TMP/real.out" 2>"$W_TMP/real.err"
    rc=$?
    if ls /dev/nvidiactl >/dev/null 2>&1; then
        echo "this machine has an NVIDIA driver: --real-gpus failure not checked"
    else
        expect "--real-gpus without a driver: exit 1" 1 $rc
        check "--real-gpus: says NVML is missing" grep -q -- "--real-gpus: no usable NVIDIA driver on this machine" "$W_TMP/real.err"
        check "--real-gpus: names what it searched" grep -q "libnvidia-ml.so.1" "$W_TMP/real.err"
        head -c 600 "$W_TMP/real.err"
        echo
        expect "--real-gpus: no ready line" "" "$(cat "$W_TMP/real.out")"
    fi
    # A data directory too long for unix socket paths: the kubelet
    # directories move to a short private directory, linked from it.
    W_DATA=$W_TMP/a-data-directory-whose-path-is-too-long-for-a-unix-socket-address
    export KUBECONFIG=$W_DATA/kubeconfig
    w_start
    check "long data dir: the kubelet directory is a link" test -L "$W_DATA/nodes/$NODE5/kubelet"
    check "long data dir: the registration socket is there" test -S "$W_DATA/nodes/$NODE5/kubelet/plugins_registry/gpu.nvidia.com-reg.sock"
    expect "long data dir: a slice per node" 2 "$(kubectl get resourceslice -o name | wc -l)"
    w_stop
    expect "long data dir: exit 0" 0 $?
    "$W_DRAD" --data-dir "$W_TMP/bad" --listen 127.0.0.1:0 --nodes "$W_SRC/examples/seed.yaml" \
        >"$W_TMP/bad.out" 2>"$W_TMP/bad.err"
    expect "--nodes with a bad inventory: exit 1" 1 $?
    check "--nodes: says why" grep -q "not a fake-GPU inventory" "$W_TMP/bad.err"
    head -c 400 "$W_TMP/bad.err"
    echo
}

case "$SCENARIO" in
kill-drad) w_start; kill_drad ;;
kill-plugin) export DRA_GPU_PLUGIN_PREPARE_DELAY_MS=3000; w_start; unset DRA_GPU_PLUGIN_PREPARE_DELAY_MS; kill_plugin ;;
crashloop) w_start; crashloop ;;
fake-nodes) w_start --nodes none --fake-nodes 3; fake_nodes ;;
modes) w_start --nodes none; modes ;;
*) echo "unknown scenario $SCENARIO"; exit 2 ;;
esac
w_stop
expect "drad exits 0 on SIGTERM" 0 $?
[ "$SCENARIO" = modes ] || w_nothing_left
w_finish
