#!/bin/bash
# python_client.sh DRAD: starts drad (lib.sh) and runs python_client.py with
# /usr/bin/python3 (Debian's python3-kubernetes) on the kubeconfig drad
# wrote; 77 when python3 or its kubernetes module is missing.
set -u
. "$(dirname "$0")/lib.sh"
drad=$1
py=${E2E_PYTHON:-/usr/bin/python3}

e2e_init python
[ -x "$py" ] || e2e_skip "$py missing"
"$py" -c 'import kubernetes, yaml' 2>/dev/null || e2e_skip "python3-kubernetes missing"
# The API server and its controllers, no simulated nodes: nothing runs
# the pods, so what the checks see stays put.
e2e_start_drad "$drad" --nodes none
"$py" "$E2E_DIR/python_client.py" "$KUBECONFIG"
rc=$?
e2e_stop_drad || { echo "FAIL drad did not stop cleanly: $(cat "$E2E_TMP/drad.err")"; rc=1; }
exit $rc
