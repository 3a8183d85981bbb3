#!/bin/sh
# test_drad_durability.sh DRAD: crash safety of drad over HTTPS, with curl.
#  1. Four writers create ResourceClaims as fast as they can; drad is
#     killed with SIGKILL in the middle. After a restart on the same data
#     directory every create that was acknowledged (201) is there, every
#     stored object is whole JSON, and new writes get higher
#     resourceVersions than any seen before.
#  2. A watch that resumes with the last resourceVersion it saw before
#     the crash gets every object acknowledged after it.
#  3. Two clients update the same object from the same resourceVersion:
#     one 200, one 409, and the winner's value is stored.
# drad is always stopped by its pid.
set -u
drad=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/dra-drad-dur.XXXXXX")
pid=
wpids=
fails=0

stop() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    kill -KILL "$pid" 2>/dev/null
  fi
  [ -n "$pid" ] && wait "$pid" 2>/dev/null
  pid=
}
cleanup() {
  for w in $wpids; do kill "$w" 2>/dev/null; done
  stop
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

start() {
  : >"$dir/out"
  "$drad" --data-dir "$dir/data" --listen 127.0.0.1:0 >"$dir/out" 2>>"$dir/err" &
  pid=$!
  i=0
  while ! grep -q 'kubeconfig: ' "$dir/out" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo "drad exited:"; cat "$dir/err"; exit 1; }
    i=$((i + 1))
    [ $i -gt 400 ] && { echo "drad not ready"; exit 1; }
    sleep 0.05
  done
  url=$(sed -n 's/.*serving \(https:[^;]*\);.*/\1/p' "$dir/out")
  token=$(cat "$dir/data/token")
}

req() { # req METHOD PATH [BODY]: prints the status; body in $dir/body
  if [ $# -ge 3 ]; then
    curl -s -o "$dir/body" -w '%{http_code}' --cacert "$dir/data/ca.crt" \
      -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
      -X "$1" --data-binary "$3" "$url$2"
  else
    curl -s -o "$dir/body" -w '%{http_code}' --cacert "$dir/data/ca.crt" \
      -H "Authorization: Bearer $token" -X "$1" "$url$2"
  fi
}

claim() {
  printf '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"%s","labels":{"v":"%s"}},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}}' "$1" "$2"
}

C=/apis/resource.k8s.io/v1/namespaces/default/resourceclaims

writer() { # writer ID: creates w<ID>-<n> until killed, logging each 201
  n=0
  while :; do
    name="w$1-$n"
    c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$dir/data/ca.crt" \
      -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
      --data-binary "$(claim "$name" x)" "$url$C")
    [ "$c" = 201 ] && echo "$name" >>"$dir/acked.$1"
    n=$((n + 1))
  done
}

start
req GET "$C" >/dev/null
rv0=$(sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p' "$dir/body" | head -1)
[ -n "$rv0" ] || fail "no list resourceVersion"

for id in 1 2 3 4; do
  writer $id &
  wpids="$wpids $!"
done
# Let the writers get going, then crash drad under them.
i=0
while [ "$(cat "$dir"/acked.* 2>/dev/null | wc -l)" -lt 40 ] && [ $i -lt 600 ]; do
  sleep 0.05
  i=$((i + 1))
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
pid=
for w in $wpids; do kill "$w" 2>/dev/null; wait "$w" 2>/dev/null; done
wpids=
acked=$(cat "$dir"/acked.* 2>/dev/null | sort)
nacked=$(printf '%s\n' "$acked" | grep -c .)
[ "$nacked" -ge 40 ] || fail "only $nacked writes were acknowledged before the crash"

start
req GET "$C" >/dev/null || true
for name in $acked; do
  grep -q "\"name\":\"$name\"" "$dir/body" || fail "acknowledged $name lost"
done
# Every stored object is whole: the list parses and each item has a uid.
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert all(i["metadata"]["uid"] for i in d["items"])' \
    "$dir/body" || fail "the list after the crash is not whole JSON"
fi
maxrv=$(grep -o '"resourceVersion":"[0-9]*"' "$dir/body" | tr -dc '0-9\n' | sort -n | tail -1)
c=$(req POST "$C" "$(claim after-crash x)")
[ "$c" = 201 ] || fail "create after restart: $c"
newrv=$(sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p' "$dir/body")
[ "$newrv" -gt "$maxrv" ] || fail "resourceVersion $newrv not above $maxrv"

# 2. Resume from the version before the load: every acknowledged object
#    comes as ADDED.
curl -s --max-time 20 --cacert "$dir/data/ca.crt" -H "Authorization: Bearer $token" \
  "$url$C?watch=true&resourceVersion=$rv0&timeoutSeconds=2" >"$dir/watch"
for name in $acked; do
  grep -q "\"type\":\"ADDED\".*\"name\":\"$name\"" "$dir/watch" \
    || fail "watch from $rv0 missed $name"
done

# 3. Two updates from the same version: one wins.
req POST "$C" "$(claim race x)" >/dev/null
rv=$(sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p' "$dir/body")
body() {
  printf '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"race","resourceVersion":"%s","labels":{"v":"%s"}},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}}' "$rv" "$1"
}
( c=$(curl -s -o "$dir/ra" -w '%{http_code}' --cacert "$dir/data/ca.crt" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -X PUT --data-binary "$(body a)" "$url$C/race"); echo "$c" >"$dir/ca" ) &
a=$!
( c=$(curl -s -o "$dir/rb" -w '%{http_code}' --cacert "$dir/data/ca.crt" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -X PUT --data-binary "$(body b)" "$url$C/race"); echo "$c" >"$dir/cb" ) &
b=$!
wait $a $b
codes=$(cat "$dir/ca" "$dir/cb" | sort | tr '\n' ' ')
[ "$codes" = "200 409 " ] || fail "racing updates answered $codes"
winner=a
[ "$(cat "$dir/cb")" = 200 ] && winner=b
req GET "$C/race" >/dev/null
grep -q "\"v\":\"$winner\"" "$dir/body" || fail "stored value is not the winner's ($winner)"
grep -q '"reason":"Conflict"' "$dir/ra" "$dir/rb" || fail "the loser got no Conflict Status"

stop
[ $fails -eq 0 ] || exit 1
echo "test_drad_durability: $nacked acknowledged writes survived kill -9"
exit 0
