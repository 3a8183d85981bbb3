#!/bin/sh
# `dractl cel eval`: values printed as CEL literals, DRA selectors over a
# device file, errors with line:column and caret and exit status 1.
set -u
dractl="${DRA_BUILD_DIR:?}/dractl"
dev="${DRA_SOURCE_DIR:?}/tests/data/cel/device-h100.yaml"
fail=0
check() { # check WANT_STATUS WANT_OUTPUT ARGS...
    want_rc=$1 want_out=$2
    shift 2
    out=$("$dractl" cel eval "$@" 2>&1)
    rc=$?
    if [ "$rc" != "$want_rc" ] || [ "$out" != "$want_out" ]; then
        printf 'FAIL: dractl cel eval %s\n  got (%s): %s\n  want (%s): %s\n' "$*" "$rc" "$out" "$want_rc" "$want_out"
        fail=1
    fi
}
check 0 '[2, 4, 6]' '[1, 2, 3].map(x, x * 2)'
check 0 '{"a": 1u, "b": b"\xff"}' "{'a': 1u, 'b': b'\\xff'}"
check 0 '"1.5"' 'string(1.5)'
check 1 'return error for overflow' '9223372036854775807 + 1'
check 1 "ERROR: <input>:1:4: Syntax error: unexpected end of input
 | 1 +
 | ...^" '1 +'
check 0 true "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'" --device "$dev"
check 0 true "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0" --device "$dev"
check 0 true "device.attributes['resource.kubernetes.io'].pciBusID.startsWith('0000:07')" --device "$dev"
check 0 false "device.attributes['gpu.nvidia.com'].driverVersion.isLessThan(semver('500.0.0'))" --device "$dev"
check 1 'no such key: nope' "device.attributes['gpu.nvidia.com'].nope == 1" --device "$dev"
check 1 "ERROR: <input>:1:7: undefined field 'drivr'
 | device.drivr == 'x'
 | ......^" "device.drivr == 'x'" --device "$dev"
check 1 'CEL result of type string could not be converted to bool' "device.attributes['gpu.nvidia.com'].type" --device "$dev"
exit $fail
