#!/bin/sh
# Writes docs/bench/paced-tail-gc.txt: does collecting garbage less often, in idkitd or in the
# load generator, shorten the paced tail of issue 28 (idkitd's gRPC port at 10,000 single-ID
# requests/s, idkitd and the load generator on a CPU each, both under chrt --fifo 1 so that the
# machine's other processes stay out of it, as the "fifo" rows of docs/bench/paced-tail.sh)?
# Settings go through the Go runtime's own environment variables, interleaved in every round:
#   client: the load generator with Go's default, GOGC=off GOMEMLIMIT=1GiB, or GOGC=400
#           (one idkitd with Go's default);
#   server: idkitd with Go's default, GOGC=400, or GOGC=off GOMEMLIMIT=256MiB (the load
#           generator with Go's default).
# Needs root, taskset, chrt and 2 CPUs. Run from the repository root:
# sh docs/bench/paced-tail-gc.sh [ROUNDS] (default 5; ~35 s a round).
set -eu
rounds=${1:-5}
out=docs/bench/paced-tail-gc.txt
bin=$(mktemp -d)
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$bin"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
go build -o "$bin/idbench" ./cmd/idbench
go build -o "$bin/idkitd" ./cmd/idkitd
n=0
start() { # ENV... : starts an idkitd on CPU 0 with ENV, prints its gRPC address
  n=$((n + 1))
  env "$@" GOMAXPROCS=1 chrt --fifo 1 taskset -c 0 "$bin/idkitd" --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --shutdown-delay 0 \
    --gen orders=snowflake:layout=twitter,node=1 >/dev/null 2>"$bin/idkitd$n.log" &
  pids="$pids $!"
}
addr() {
  a=""
  for _ in $(seq 100); do
    a=$(grep -o 'grpc_addr=[0-9.:]*' "$bin/idkitd$1.log" | cut -d= -f2 || true)
    [ -n "$a" ] && break
    sleep 0.1
  done
  [ -n "$a" ] || { echo "idkitd did not start:" >&2; cat "$bin/idkitd$1.log" >&2; exit 1; }
  echo "$a"
}
start GOGC=100
start GOGC=400
start GOGC=off GOMEMLIMIT=256MiB
a1=$(addr 1) a2=$(addr 2) a3=$(addr 3)
row() { # side setting
  jq -r --arg s "$1" --arg c "$2" --argjson r "$round" '.results[0] |
    "round \($r) \($s) \($c): p50 \(.latency.p50_us|floor) µs, p99 \(.latency.p99_us|floor) µs, p99.9 \(.latency.p999_us|floor) µs from send; load generator: \(.cpu_us_per_request|floor) µs CPU per request, \(.gc_cycles) GC cycles"'
}
load() { # addr ENV...
  a=$1
  shift
  env "$@" GOMAXPROCS=1 chrt --fifo 1 taskset -c 1 "$bin/idbench" load --addr "$a" --rate 10000 --no-floor --duration 4s --warmup 500ms --json
}
{
  echo "# sh docs/bench/paced-tail-gc.sh $rounds  (commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(go version | cut -d' ' -f3), $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "# GOMAXPROCS=1 chrt --fifo 1 taskset -c 0 idkitd …; GOMAXPROCS=1 chrt --fifo 1 taskset -c 1 idbench load --addr GRPC_ADDR --rate 10000 --no-floor --duration 4s --warmup 500ms"
  echo
  for round in $(seq "$rounds"); do
    load "$a1" GOGC=100 | row client default
    load "$a1" GOGC=off GOMEMLIMIT=1GiB | row client "GOGC=off GOMEMLIMIT=1GiB"
    load "$a1" GOGC=400 | row client GOGC=400
    load "$a1" GOGC=100 | row server default
    load "$a2" GOGC=100 | row server GOGC=400
    load "$a3" GOGC=100 | row server "GOGC=off GOMEMLIMIT=256MiB"
  done
  echo
  echo "Medians over the rounds (µs from send):"
  for s in client server; do
    grep "^round [0-9]* $s " "$out.tmp" | sed "s/^round [0-9]* $s //; s/: p50 / /; s/ µs, p99 / /; s/ µs, p99.9 / /; s/ µs from send.*//" |
      awk '{ k = $1; for (i = 2; i < NF - 2; i++) k = k " " $i; p50[k] = p50[k] " " $(NF-2); p99[k] = p99[k] " " $(NF-1); p999[k] = p999[k] " " $NF; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
        function med(s,   a, m, i, j, t) { m = split(s, a, " "); for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
          return m % 2 ? a[(m + 1) / 2] : (a[m/2] + a[m/2 + 1]) / 2 }
        END { for (i = 1; i <= n; i++) printf "'"$s"' %s: p50 %s, p99 %s, p99.9 %s\n", order[i], med(p50[order[i]]), med(p99[order[i]]), med(p999[order[i]]) }'
  done
  echo
  echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
