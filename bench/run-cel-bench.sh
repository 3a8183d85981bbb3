#!/usr/bin/env bash
# Runs the CEL selector benchmark on both sides and prints a side-by-side
# table: bench_cel (the dra engine, from BUILD_DIR) and bench/cel-js-bench.mjs
# (@marcbachmann/cel-js and @bufbuild/cel, installed with npm into
# BUILD_DIR/cel-js), with the speed-up over the fastest JS engine per
# expression (goal: >= 20x) and a check that all engines matched the same
# devices and that the C hot path made no heap allocation. The --rounds
# alternate between the sides (see below).
#
# usage: bench/run-cel-bench.sh BUILD_DIR [--evals N] [--rounds N] [--only a,b]
# Use an optimised (gcc, RelWithDebInfo or Release) build for real figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [--evals N] [--rounds N] [--only a,b]" >&2
  exit 2
fi
build=$(cd "$1" && pwd); shift
bin=$build/bench/bench_cel
[ -x "$bin" ] || bin=$(find "$build" -name bench_cel -type f -perm -u+x | head -n 1)
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "$0: no bench_cel under $build (cmake --build $build --target bench_cel)" >&2
  exit 2
fi
# The rounds alternate between the two sides (C, JS, C, JS, ...), one
# round per run, so that a host that speeds up or slows down during the
# benchmark weighs on both; the table takes each side's median.
rounds=3
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
crc=0
jrc=0
: >"$tmp/c.tsv"
: >"$tmp/js.tsv"
for _ in $(seq "$rounds"); do
  "$bin" --tsv --rounds 1 "${args[@]}" >>"$tmp/c.tsv" || crc=$?
  node "$here/cel-js-bench.mjs" --tsv --rounds 1 --prefix "$build/cel-js" "${args[@]}" \
    >>"$tmp/js.tsv" || jrc=$?
  [ "$jrc" = 0 ] || break
done
if [ "$jrc" = 77 ]; then
  echo "$0: JS engines unavailable (npm); C figures only:" >&2
  cat "$tmp/c.tsv"
  exit "$crc"
fi
[ "$jrc" = 0 ] || { cat "$tmp/js.tsv"; exit "$jrc"; }
node "$here/cel-bench-table.mjs" "$tmp/c.tsv" "$tmp/js.tsv" || crc=1
exit "$crc"
