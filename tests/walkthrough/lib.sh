# tests/walkthrough/lib.sh: sourced by the walkthrough tests. Starts drad
# (through $DRA_TEST_LAUNCHER when set) in a fresh data directory under
# /tmp (on purpose: containers have a private /tmp, and nothing they need
# may be reached through a host path there), waits for its one ready
# line, and exports KUBECONFIG. Every process a test starts is ended by
# its pid in the EXIT trap, also when a check fails: kubectls in the
# background, drad, the plugin children (by their pid files), the
# containers (by the pids their shims recorded) and the shims themselves
# (by the pids of the dra-shim processes that name the test's directory).
set -u

W_DRAD=$1
W_SRC=$2
W_TMP=$(mktemp -d /tmp/dra-walk.XXXXXX)
W_DATA=$W_TMP/data
W_PID=
W_BG=
W_PASS=0
W_FAIL=0
W_RUN=0
W_LIMIT=1200 # 50 ms steps: 60 s
[ -n "${DRA_TEST_LAUNCHER:-}" ] && W_LIMIT=4800

command -v kubectl >/dev/null 2>&1 || { echo "kubectl missing: skipped"; rm -rf "$W_TMP"; exit 77; }
if ! bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid true 2>/dev/null; then
    echo "bwrap cannot create namespaces here: skipped"
    rm -rf "$W_TMP"
    exit 77
fi
export KUBECONFIG=$W_DATA/kubeconfig
# kubectl's discovery cache stays inside the test.
export HOME=$W_TMP/home
mkdir -p "$HOME"

w_log() { echo "[$(date +%H:%M:%S)] $*"; }

pass() { W_PASS=$((W_PASS + 1)); echo "ok   $1"; }
fail() {
    W_FAIL=$((W_FAIL + 1))
    echo "FAIL $1"
    shift
    [ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/     | /'
    return 0
}

# check NAME CONDITION-COMMAND...: passes when the command succeeds.
check() {
    local name=$1
    shift
    if "$@" >"$W_TMP/check.out" 2>&1; then pass "$name"; else fail "$name" "$(head -c 2000 "$W_TMP/check.out")"; fi
}

# expect NAME WANT GOT
expect() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "want: $2" "got:  $3"; fi
}

# w_wait DESC SECONDS COMMAND...: polls the command every 0.1 s.
w_wait() {
    local desc=$1 lim=$(($2 * 10)) i=0
    shift 2
    [ -n "${DRA_TEST_LAUNCHER:-}" ] && lim=$((lim * 4))
    while ! "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt $lim ]; then
            fail "wait: $desc" "$("$@" 2>&1 | head -c 1500)"
            return 1
        fi
        sleep 0.1
    done
    return 0
}

# Table output with runs of spaces squeezed and ages (3s, 5m2s) as <age>.
squeeze() { sed -E 's/  +/ /g; s/ [0-9]+[smhd]([0-9]+[smh])? / <age> /g; s/ [0-9]+[smhd]([0-9]+[smh])?$/ <age>/'; }

# w_start ARGS...: drad with ARGS on the test's data directory.
w_start() {
    : >"$W_TMP/drad.out"
    # shellcheck disable=SC2086
    ${DRA_TEST_LAUNCHER:-} "$W_DRAD" --data-dir "$W_DATA" --listen 127.0.0.1:0 "$@" \
        >"$W_TMP/drad.out" 2>>"$W_TMP/drad.err" &
    W_PID=$!
    W_RUN=$((W_RUN + 1))
    local i=0
    while ! grep -q 'kubeconfig: ' "$W_TMP/drad.out" 2>/dev/null; do
        if ! kill -0 "$W_PID" 2>/dev/null; then
            echo "drad exited before it was ready:"
            cat "$W_TMP/drad.err"
            W_PID=
            exit 1
        fi
        i=$((i + 1))
        if [ $i -gt $W_LIMIT ]; then
            echo "drad not ready after $((W_LIMIT / 20)) s:"
            cat "$W_TMP/drad.err"
            exit 1
        fi
        sleep 0.05
    done
    W_PORT=$(sed -n 's/.*serving https:[^;]*:\([0-9]*\);.*/\1/p' "$W_TMP/drad.out")
}

# w_stop: SIGTERM, then SIGKILL after 60 s; returns drad's exit status.
w_stop() {
    [ -n "$W_PID" ] || return 0
    local i=0 rc
    kill -TERM "$W_PID" 2>/dev/null
    while kill -0 "$W_PID" 2>/dev/null && [ $i -lt 1200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    kill -KILL "$W_PID" 2>/dev/null
    wait "$W_PID" 2>/dev/null
    rc=$?
    W_PID=
    return $rc
}

# w_kill9: drad dies at once (its plugin children follow: PDEATHSIG).
w_kill9() {
    [ -n "$W_PID" ] || return 0
    kill -KILL "$W_PID" 2>/dev/null
    wait "$W_PID" 2>/dev/null
    W_PID=
}

# Background processes the test starts: remembered for the trap.
w_bg() { W_BG="$W_BG $1"; }

# The pids of running containers, from their shims' state files.
w_container_pids() {
    local f
    for f in "$W_DATA"/nodes/*/containers/*/state; do
        [ -f "$f" ] || continue
        if [ "$(sed -n 's/^status=//p' "$f")" = running ]; then
            sed -n 's/^pid=//p' "$f"
        fi
    done
}

w_plugin_pids() {
    local f
    for f in "$W_DATA"/nodes/*/plugin.pid; do
        [ -f "$f" ] && cat "$f"
    done
}

# The pids of the dra-shim processes whose command line names a path under
# this test's directory (every data directory a test uses lies there),
# read from /proc/*/cmdline.
w_shim_pids() {
    local f argv
    for f in /proc/[0-9]*/cmdline; do
        argv=$(tr '\0' '\n' 2>/dev/null <"$f") || continue
        case "${argv%%$'\n'*}" in
        dra-shim | */dra-shim) ;;
        *) continue ;;
        esac
        case "$argv" in
        *"$W_TMP/"*) f=${f#/proc/} && echo "${f%/cmdline}" ;;
        esac
    done
}
w_no_shims() { [ -z "$(w_shim_pids)" ]; }

# Whether any of the pids still runs.
w_any_alive() {
    local p
    for p in "$@"; do
        [ -n "$p" ] && [ "$p" -gt 1 ] 2>/dev/null && kill -0 "$p" 2>/dev/null && return 0
    done
    return 1
}

w_cleanup() {
    local p
    for p in $W_BG; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    W_BG=
    w_stop
    # What a failed test may have left: plugins of a killed drad and
    # containers (killing pid 1 of a container ends its shim too).
    for p in $(w_plugin_pids) $(w_container_pids); do
        [ "$p" -gt 1 ] 2>/dev/null && kill -KILL "$p" 2>/dev/null
    done
    # A container's shim survives a drad killed with -9 (by design, so a
    # restarted drad finds its containers again), so a test whose drad
    # died or was killed can leave shims and their bwrap sandboxes (which
    # die with their shim) behind, also ones no state file names yet:
    # every dra-shim whose command line names this test's directory is
    # ended, by its pid from /proc/*/cmdline.
    for p in $(w_shim_pids); do
        kill -KILL "$p" 2>/dev/null
    done
    sleep 0.2
    # Kubelet directories drad moved to a short path (a long data dir).
    for p in "$W_TMP"/*/nodes/*/kubelet; do
        [ -L "$p" ] && [ -z "${W_KEEP:-}" ] && rm -rf "$(dirname "$(readlink "$p")")"
    done
    if [ -n "${W_KEEP:-}" ]; then echo "kept $W_TMP"; else rm -rf "$W_TMP"; fi
}
trap w_cleanup EXIT
trap 'exit 1' INT TERM

# Nothing of drad's is left: no plugin child, no container, no listener.
w_nothing_left() {
    local cpids ppids
    cpids=$(w_container_pids)
    ppids=$(w_plugin_pids)
    check "nothing left: no plugin child" sh -c "! ps -o pid= -p \"$(echo "$ppids" | tr '\n' ' ')0\" | grep -q ."
    check "nothing left: no container" sh -c "! ps -o pid= -p \"$(echo "$cpids" | tr '\n' ' ')0\" | grep -q ."
    check "nothing left: port $W_PORT closed" sh -c "! ss -ltn | grep -q ':$W_PORT '"
    w_wait "nothing left: no dra-shim" 5 w_no_shims && pass "nothing left: no dra-shim"
}

w_finish() {
    echo "passed $W_PASS, failed $W_FAIL"
    [ "$W_FAIL" -eq 0 ]
}

# w_pod NAME CLAIM-TEMPLATE COMMAND [RESTART-POLICY]: a pod manifest on stdin of kubectl.
w_pod_yaml() {
    cat <<POD
apiVersion: v1
kind: Pod
metadata:
  name: $1
spec:
  restartPolicy: ${4:-Never}
  terminationGracePeriodSeconds: 1
  containers:
  - name: ctr
    image: ubuntu:22.04
    command: ["bash", "-c"]
    args: ["$3"]
    resources:
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: $2
POD
}

phase() { kubectl get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
is_phase() { [ "$(phase "$1")" = "$2" ]; }
