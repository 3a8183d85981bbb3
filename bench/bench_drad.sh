#!/bin/sh
# bench_drad.sh [BUILD-DIR]: drad figures on loopback, as issue 8 point 6
# asks: durable creates/s and gets/s of ResourceClaims with 1 and 64
# connections (wrk over HTTP/1.1; h2load over HTTP/2 with 64 streams on
# 1 and 4 connections), a list of 10,000 ResourceSlices as JSON and as Table,
# watch delivery to 1,000 watchers (bench_watch: a connection each over
# HTTP/1.1 through libcurl; all on one HTTP/2 connection as client-go does,
# read by libcurl and by a lean nghttp2 client; and on two HTTP/2
# connections, as watches of two processes come), drad's RSS idle and
# under load, and the time from start to the first answered request with
# 100,000 stored objects. Starts and stops its own drad (by pid) in a
# temporary directory. Prints figures; asserts nothing.
set -u
build=${1:-build}
drad=$build/cmd/drad/drad
watchb=$build/bench/bench_watch
dir=$(mktemp -d "${TMPDIR:-/tmp}/dra-bench-drad.XXXXXX")
pid=
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM HUP PIPE

start() {
  rm -f "$dir/fifo" && mkfifo "$dir/fifo"
  t0=$(date +%s%N)
  # The API server and controllers only: no simulated nodes.
  "$drad" --data-dir "$dir/data" --listen 127.0.0.1:0 --nodes none >"$dir/fifo" 2>"$dir/err" &
  pid=$!
  # Its lines are read as they come: a polling loop would take the
  # second core that drad's loader thread starts on.
  exec 3<"$dir/fifo"
  line=
  while IFS= read -r line <&3; do
    case $line in *kubeconfig:*) break ;; esac
  done
  # drad prints its line once its listeners serve: the time to it is
  # drad's own; the first answer below adds curl's start and handshake.
  t_line=$(date +%s%N)
  case $line in *kubeconfig:*) ;; *) echo "drad exited:"; cat "$dir/err"; exit 1 ;; esac
  echo "$line" >"$dir/out"
  cat <&3 >>"$dir/out" & # drains the rest, so drad never blocks on stdout
  exec 3<&-
  url=$(sed -n 's/.*serving \(https:[^;]*\);.*/\1/p' "$dir/out")
  # The HTTP/2 port: the server of the second kubeconfig.
  h2url=$(sed -n 's/^ *server: *//p' "$dir/data/kubeconfig-h2" 2>/dev/null)
  token=$(cat "$dir/data/token")
  until curl -s -o /dev/null --cacert "$dir/data/ca.crt" -H "Authorization: Bearer $token" "$url/healthz"; do :; done
  t1=$(date +%s%N)
  ready_ms=$(( (t1 - t0) / 1000000 ))
  line_ms=$(( (t_line - t0) / 1000000 ))
}
stop() { kill -TERM "$pid"; wait "$pid" 2>/dev/null; pid=; }
rss() { awk '/VmRSS/ {printf "%.1f MiB", $2/1024}' "/proc/$pid/status"; }
hwm() { awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$pid/status"; }

# wrk scripts: POST with generateName (unique names without Lua state).
cat >"$dir/create.lua" <<LUA
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer TOKEN"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"generateName":"load-"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}}'
LUA
cat >"$dir/slice.lua" <<LUA
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer TOKEN"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"generateName":"slice-"},"spec":{"driver":"gpu.nvidia.com","nodeName":"node-a","pool":{"name":"node-a","generation":1,"resourceSliceCount":1},"devices":[{"name":"gpu-0","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-137d7996-cb8e-7683-e47d-9c99e6f49eb5"},"productName":{"string":"NVIDIA GB200"}},"capacity":{"memory":{"value":"189471Mi"}}},{"name":"gpu-1","attributes":{"type":{"string":"gpu"}},"capacity":{"memory":{"value":"189471Mi"}}}]}}'
LUA
cat >"$dir/get.lua" <<LUA
wrk.headers["Authorization"] = "Bearer TOKEN"
LUA

start
sed -i "s/TOKEN/$token/" "$dir/create.lua" "$dir/slice.lua" "$dir/get.lua"
echo "drad ready (empty store): its ready line ${line_ms} ms after exec, the first answer to curl ${ready_ms} ms; RSS idle $(rss)"
C=/apis/resource.k8s.io/v1/namespaces/default/resourceclaims
rate() { awk '/Requests\/sec/ {printf "%.0f", $2}'; }
for c in 1 64; do
  t=2; [ $c -eq 1 ] && t=1
  r=$(wrk -t$t -c$c -d5s -s "$dir/create.lua" "$url$C" 2>/dev/null | rate)
  echo "creates/s, $c connection(s): $r"
done
# The same creates over HTTP/2: 64 streams at a time on 1 and on 4
# connections (h2load sends the body of create.lua's request).
if command -v h2load >/dev/null && [ -n "$h2url" ]; then
  sed -n "s/^wrk.body = '\(.*\)'$/\1/p" "$dir/create.lua" >"$dir/create.json"
  for cm in "1 64" "4 16"; do
    set -- $cm
    r=$(h2load -D 5 -c "$1" -m "$2" -d "$dir/create.json" -H 'content-type: application/json' \
      -H "authorization: Bearer $token" "$h2url$C" 2>/dev/null |
      awk '/^finished in/ {gsub(",", ""); printf "%.0f", $4}')
    echo "creates/s over HTTP/2, $1 connection(s) x $2 streams: $r"
  done
fi
curl -s -o /dev/null --cacert "$dir/data/ca.crt" -H "Authorization: Bearer $token" \
  -H 'Content-Type: application/json' --data-binary \
  '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"one"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"c"}}]}}}' "$url$C"
for c in 1 64; do
  t=2; [ $c -eq 1 ] && t=1
  r=$(wrk -t$t -c$c -d5s -s "$dir/get.lua" "$url$C/one" 2>/dev/null | rate)
  echo "gets/s, $c connection(s): $r"
done
echo "RSS after the create and get runs: $(rss) (peak $(hwm))"

# At least 10,000 ResourceSlices (one-second wrk runs until there are),
# then list 10,000 of them.
n=0
while [ "$n" -lt 10000 ]; do
  wrk -t2 -c16 -d1s -s "$dir/slice.lua" "$url/apis/resource.k8s.io/v1/resourceslices" >/dev/null 2>&1
  n=$(curl -s --cacert "$dir/data/ca.crt" -H "Authorization: Bearer $token" \
    "$url/apis/resource.k8s.io/v1/resourceslices?limit=1" | grep -o '"remainingItemCount":[0-9]*' | tr -dc 0-9)
  n=$(( ${n:-0} + 1 ))
done
# Exactly 10,000 of them in one answer (limit), whatever wrk overshot.
for form in json table; do
  acc='application/json'
  [ $form = table ] && acc='application/json;as=Table;v=v1;g=meta.k8s.io,application/json'
  best=
  for i in 1 2 3 4 5; do
    t=$(curl -s -o "$dir/list" -w '%{time_total}' --cacert "$dir/data/ca.crt" \
      -H "Authorization: Bearer $token" -H "Accept: $acc" \
      "$url/apis/resource.k8s.io/v1/resourceslices?limit=10000")
    best=$(echo "$t ${best:-$t}" | awk '{print ($1 < $2) ? $1 : $2}')
  done
  echo "list of 10,000 of $n ResourceSlices as $form: best of 5 $(echo "$best" | awk '{printf "%.0f", $1 * 1000}') ms ($(wc -c <"$dir/list") bytes)"
done
echo "RSS with $n slices: $(rss) (peak $(hwm))"

if [ -x "$watchb" ]; then
  "$watchb" "$url" "$token" "$dir/data/ca.crt" 1000 50
  if [ -n "$h2url" ]; then
    echo "the same watches, all on one HTTP/2 connection, read by libcurl:"
    "$watchb" --http2-curl "$h2url" "$token" "$dir/data/ca.crt" 1000 50
    echo "the same, read by bench_watch's own nghttp2 client:"
    "$watchb" --http2 "$h2url" "$token" "$dir/data/ca.crt" 1000 50
    echo "the same on two HTTP/2 connections of 500 watches each:"
    "$watchb" --http2 --conns 2 "$h2url" "$token" "$dir/data/ca.crt" 1000 50
  fi
  echo "RSS with 1,000 watches served: $(rss) (peak $(hwm))"
fi

# 100,000 objects, then the time to the first answer after a restart: in
# a fresh data directory (the runs above made more than that), filled a
# second of creates at a time.
stop
rm -rf "$dir/data"
old_token=$token
start
sed -i "s/$old_token/$token/" "$dir/create.lua" # a new directory, a new token
n=0
total=1
while [ "$total" -lt 100000 ]; do
  wrk -t2 -c64 -d1s -s "$dir/create.lua" "$url$C" >/dev/null 2>&1
  total=$(curl -s --cacert "$dir/data/ca.crt" -H "Authorization: Bearer $token" \
    "$url$C?limit=1" | grep -o '"remainingItemCount":[0-9]*' | tr -dc 0-9)
  total=$(( ${total:-0} + n + 1 ))
done
stop
start
echo "drad ready with $total stored objects: its ready line ${line_ms} ms after exec, the first answer to curl ${ready_ms} ms (RSS $(rss))"
echo "database: $(du -m "$dir/data/state.db" | cut -f1) MiB"

# Lists while objects come and go: on the 100,000 claims, each of 20
# rounds creates one claim, then lists a page of 500 (kubectl's chunk),
# the first list after the write folding it into the sorted index.
sed -n "s/^wrk.body = '\(.*\)'$/\1/p" "$dir/create.lua" >"$dir/create.json"
times=
for i in $(seq 20); do
  curl -s -o /dev/null --cacert "$dir/data/ca.crt" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' --data-binary @"$dir/create.json" "$url$C"
  t=$(curl -s -o /dev/null -w '%{time_appconnect} %{time_total}' --cacert "$dir/data/ca.crt" \
    -H "Authorization: Bearer $token" "$url$C?limit=500" | awk '{printf "%.2f", ($2 - $1) * 1000}')
  times="$times $t"
done
echo "list of 500 of $total claims right after a create (after the TLS handshake): median" \
  "$(echo $times | tr ' ' '\n' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}') ms," \
  "max $(echo $times | tr ' ' '\n' | sort -n | tail -1) ms"
