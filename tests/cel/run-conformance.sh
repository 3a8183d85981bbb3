#!/bin/sh
# Runs the cel-spec conformance suite: dumps it from the npm package
# @bufbuild/cel-spec into the build directory (scripts/cel-spec-dump.mjs),
# then `dractl cel conformance` over every file. Fails when the number of
# passing cases drops below tests/data/cel/conformance-floor.txt. Exits 77
# (skipped) without node or without network access to npm.
set -eu
src=${DRA_SOURCE_DIR:?}
build=${DRA_BUILD_DIR:?}
command -v node >/dev/null 2>&1 || { echo "cel-conformance: skipped: node not found"; exit 77; }
out="$build/cel-spec"
node "$src/scripts/cel-spec-dump.mjs" "$out" || exit $?
floor=$(tr -dc '0-9' < "$src/tests/data/cel/conformance-floor.txt")
# shellcheck disable=SC2086
exec ${DRA_TEST_LAUNCHER:-} "$build/dractl" cel conformance -v --floor "$floor" "$out"/*.json
