#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   1. gcc, -Werror, every CTest test;
#   2. clang, -Werror, ASan+UBSan and libFuzzer: every test again under the
#      sanitizers, plus each fuzzer for DRA_FUZZ_RUNS inputs from a fixed
#      seed (repeatable on one machine; see docs/fuzzing.md).
# DRA_TEST_VALGRIND=1 adds a pass with every test binary in valgrind;
# DRA_TEST_TSAN=1 a pass with everything built with ThreadSanitizer, where
# a data race stops the process that has it (so its test fails).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
JOBS=$(nproc)

pass() { # pass NAME CMAKE-ARGS...
  local name=$1; shift
  echo "=== $name"
  cmake -S . -B "build/$name" "$@" >/dev/null
  cmake --build "build/$name" -j"$JOBS"
  ctest --test-dir "build/$name" --output-on-failure -j"$JOBS"
}

pass gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo
pass clang-san -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
  -DDRA_SANITIZE=ON -DDRA_FUZZ=ON
if [ "${DRA_TEST_TSAN:-0}" = 1 ]; then
  TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
    pass tsan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DDRA_TSAN=ON
fi
if [ "${DRA_TEST_VALGRIND:-0}" = 1 ]; then
  pass valgrind -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Debug -DDRA_VALGRIND=ON
fi
