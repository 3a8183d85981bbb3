# lib.sh: shared shell library of the end-to-end tests (sourced by bash).
# It starts drad on a free loopback port in a temporary data directory,
# exports KUBECONFIG, tracks every process it starts and stops them by
# pid in an EXIT trap (also when a check fails or the script is killed),
# and counts checks: a failing check whose name is listed in
# tests/e2e/known-failures (with the finding that explains it) is reported
# as XFAIL and does not fail the test; every other failure does.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_TMP=
E2E_DRAD_PID=
E2E_PIDS=()
E2E_PASS=0
E2E_FAIL=0
E2E_XFAIL=0
E2E_XPASS=0
E2E_KNOWN=()

e2e_cleanup() {
    local p
    for p in "${E2E_PIDS[@]}"; do
        kill -TERM "$p" 2>/dev/null
    done
    for p in "${E2E_PIDS[@]}"; do
        wait "$p" 2>/dev/null
    done
    E2E_PIDS=()
    e2e_stop_drad
    # A drad that was killed or failed to stop may leave its plugin
    # children and container shims (they outlive drad by design):
    # everything whose command line names this test's directory is ended
    # by its pid, read from /proc/*/cmdline.
    if [ -n "$E2E_TMP" ]; then
        for p in $(e2e_leftover_pids); do
            kill -KILL "$p" 2>/dev/null
        done
    fi
    if [ -n "$E2E_TMP" ] && [ -z "${E2E_KEEP:-}" ]; then
        rm -rf "$E2E_TMP"
    fi
}

# The pids of dra-shim and dra-gpu-plugin processes whose command line
# names a path under $E2E_TMP.
e2e_leftover_pids() {
    local f argv
    for f in /proc/[0-9]*/cmdline; do
        argv=$(tr '\0' '\n' 2>/dev/null <"$f") || continue
        case "${argv%%$'\n'*}" in
        dra-shim | */dra-shim | */dra-gpu-plugin) ;;
        *) continue ;;
        esac
        case "$argv" in
        *"$E2E_TMP/"*) f=${f#/proc/} && echo "${f%/cmdline}" ;;
        esac
    done
}

# e2e_init NAME: temporary directory, trap, the known-failure list.
e2e_init() {
    # Short: drad's simulated nodes put unix sockets (107 bytes at most)
    # under the data directory.
    E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/e2e$1.XXXXXX")
    trap e2e_cleanup EXIT
    trap 'exit 130' INT TERM
    local line
    if [ -f "$E2E_DIR/known-failures" ]; then
        while read -r line; do
            case "$line" in '#'* | '') continue ;; esac
            E2E_KNOWN+=("$line")
        done <"$E2E_DIR/known-failures"
    fi
}

e2e_skip() {
    echo "SKIP: $*"
    exit 77
}

# The finding a check name is listed under, or nothing.
e2e_known() {
    local entry glob
    for entry in "${E2E_KNOWN[@]}"; do
        glob=${entry%% *}
        # shellcheck disable=SC2053
        if [[ $1 == $glob ]]; then
            echo "${entry#* }"
            return 0
        fi
    done
    return 1
}

pass() {
    local f
    if f=$(e2e_known "$1"); then
        echo "XPASS $1 (listed as known failure: $f)"
        E2E_XPASS=$((E2E_XPASS + 1))
    else
        E2E_PASS=$((E2E_PASS + 1))
    fi
}

# fail NAME DETAIL...
fail() {
    local n=$1 f
    shift
    if f=$(e2e_known "$n"); then
        echo "XFAIL $n ($f)"
        E2E_XFAIL=$((E2E_XFAIL + 1))
    else
        echo "FAIL $n: $*"
        E2E_FAIL=$((E2E_FAIL + 1))
    fi
}

# check NAME CONDITION-COMMAND...: passes when the command succeeds; the
# detail printed on failure is the last command output ($E2E_OUT).
check() {
    local n=$1
    shift
    if "$@"; then
        pass "$n"
    else
        fail "$n" "$(e2e_show)"
        # A failure because drad died: say why, and stop here.
        [ -z "$E2E_DRAD_PID" ] || e2e_drad_alive
    fi
}

# The captured output of the last run, cut short for the log.
e2e_show() {
    [ -f "${E2E_OUT:-/nonexistent}" ] && head -c 1500 "$E2E_OUT" | sed 's/^/    | /'
}

e2e_finish() {
    echo "passed $E2E_PASS, failed $E2E_FAIL, known failures $E2E_XFAIL, unexpected passes $E2E_XPASS"
    [ "$E2E_FAIL" -eq 0 ]
}

# e2e_start_drad DRAD [ARGS...]: drad --listen 127.0.0.1:0 in $E2E_TMP/d
# with ARGS (such as --nodes none), through
# $DRA_TEST_LAUNCHER when set (valgrind in that build mode: the launcher
# execs drad in the same process, so the pid is drad's and its exit status
# carries valgrind's verdict); waits for its one ready line, then sets
# E2E_URL, E2E_DATA, E2E_TOKEN and exports KUBECONFIG.
e2e_start_drad() {
    local bin=$1
    shift
    E2E_DATA=$E2E_TMP/d
    # shellcheck disable=SC2086
    ${DRA_TEST_LAUNCHER:-} "$bin" --data-dir "$E2E_DATA" --listen 127.0.0.1:0 "$@" \
        >"$E2E_TMP/drad.out" 2>"$E2E_TMP/drad.err" &
    E2E_DRAD_PID=$!
    local i=0 lim=600
    [ -n "${DRA_TEST_LAUNCHER:-}" ] && lim=2400
    while ! grep -q 'kubeconfig: ' "$E2E_TMP/drad.out" 2>/dev/null; do
        if ! kill -0 "$E2E_DRAD_PID" 2>/dev/null; then
            echo "drad exited before it was ready:"
            cat "$E2E_TMP/drad.err"
            E2E_DRAD_PID=
            exit 1
        fi
        i=$((i + 1))
        if [ $i -gt $lim ]; then
            echo "drad not ready after $((lim / 20)) s"
            exit 1
        fi
        sleep 0.05
    done
    E2E_URL=$(sed -n 's/.*serving \(https:[^;]*\);.*/\1/p' "$E2E_TMP/drad.out")
    KUBECONFIG=$(sed -n 's/.*kubeconfig: //p' "$E2E_TMP/drad.out")
    export KUBECONFIG
    E2E_TOKEN=$(cat "$E2E_DATA/token")
}

# e2e_drad_alive: returns when drad is still running; otherwise prints
# the end of its stderr (an ASan report, say) and fails the test at once,
# rather than running every later check against a closed port.
e2e_drad_alive() {
    [ -n "$E2E_DRAD_PID" ] && kill -0 "$E2E_DRAD_PID" 2>/dev/null && return 0
    echo "drad is gone; the end of its stderr:"
    tail -n 80 "$E2E_TMP/drad.err"
    exit 1
}

e2e_stop_drad() {
    [ -n "$E2E_DRAD_PID" ] || return 0
    local i=0 rc lim=200
    [ -n "${DRA_TEST_LAUNCHER:-}" ] && lim=1200
    kill -TERM "$E2E_DRAD_PID" 2>/dev/null
    while kill -0 "$E2E_DRAD_PID" 2>/dev/null && [ $i -lt $lim ]; do
        sleep 0.05
        i=$((i + 1))
    done
    kill -KILL "$E2E_DRAD_PID" 2>/dev/null
    wait "$E2E_DRAD_PID" 2>/dev/null
    rc=$?
    E2E_DRAD_PID=
    return $rc
}

# e2e_bg OUT CMD...: runs CMD in the background with stdout and stderr in
# OUT; its pid is in E2E_BG and is stopped by the cleanup trap.
e2e_bg() {
    local out=$1
    shift
    "$@" >"$out" 2>&1 &
    E2E_BG=$!
    E2E_PIDS+=("$E2E_BG")
}

# e2e_bg_stop PID: stops one background process by its pid.
e2e_bg_stop() {
    local p keep=()
    kill -TERM "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    for p in "${E2E_PIDS[@]}"; do
        [ "$p" = "$1" ] || keep+=("$p")
    done
    E2E_PIDS=("${keep[@]}")
}

# e2e_bg_wait PID [SECONDS]: waits for a background process to end by
# itself (a hang guard, not a timing assertion: 60 s by default); its exit
# status, or 124 when it had to be stopped.
e2e_bg_wait() {
    local i=0 lim=$(( ${2:-60} * 20 )) rc p keep=()
    while kill -0 "$1" 2>/dev/null && [ $i -lt $lim ]; do
        sleep 0.05
        i=$((i + 1))
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -TERM "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        rc=124
    else
        wait "$1" 2>/dev/null
        rc=$?
    fi
    for p in "${E2E_PIDS[@]}"; do
        [ "$p" = "$1" ] || keep+=("$p")
    done
    E2E_PIDS=("${keep[@]}")
    return $rc
}

# e2e_wait_for FILE EXTENDED-REGEX [SECONDS]: polls FILE until a line
# matches (a hang guard: 30 s by default).
e2e_wait_for() {
    local i=0 lim=$(( ${3:-30} * 20 ))
    while ! grep -Eq -- "$2" "$1" 2>/dev/null; do
        i=$((i + 1))
        [ $i -gt $lim ] && return 1
        sleep 0.05
    done
    return 0
}

# The kubectl binaries installed: /usr/bin/kubectl (gcloud's dispatcher,
# itself a kubectl build) and gcloud's versioned kubectl.1.NN.
e2e_kubectls() {
    local k
    [ -x /usr/bin/kubectl ] && echo /usr/bin/kubectl
    for k in /usr/lib/google-cloud-sdk/bin/kubectl.1.*; do
        [ -x "$k" ] && echo "$k"
    done
    return 0
}

# curl against drad with its CA; prints the HTTP status, body in $E2E_TMP/body.
e2e_curl() {
    local p=$1
    shift
    curl -s -o "$E2E_TMP/body" -w '%{http_code}' --cacert "$E2E_DATA/ca.crt" "$@" "$E2E_URL$p"
}
