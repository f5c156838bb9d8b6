#!/bin/sh
# Writes docs/bench/grpc-port-paced.txt: issue 28's latency target for the default gRPC path
# (idkitd's gRPC port, grpc-go's own server) paced at 10,000 single-ID requests/s, open loop:
# p99 < 1 ms and p99.9 < 2 ms from send. Each round runs it twice, with the load average of the
# moment beside it, since on a shared machine the tail is mostly other processes' CPU:
#   - spawn: idbench load --spawn --stack grpc-go (idkitd in the load generator's process);
#   - cpus: idkitd as its own process on CPU 0 (GOMAXPROCS=1 taskset -c 0) and the load
#     generator on CPU 1, as docs/service/report.sh does (needs taskset and 2 CPUs).
# NICE=N runs idkitd and the load generator at that nice value (a negative one, as root, shows
# what the tail is once other processes on the machine wait for them) and writes
# docs/bench/grpc-port-paced-nice.txt instead.
# Run from the repository root: sh docs/bench/grpc-port-paced.sh [ROUNDS] (default 5; ~12 s a
# round).
set -eu
rounds=${1:-5}
out=docs/bench/grpc-port-paced.txt
n=""
if [ -n "${NICE:-}" ]; then
  out=docs/bench/grpc-port-paced-nice.txt
  n="nice -n $NICE"
fi
bin=$(mktemp -d)
srv=""
cleanup() {
  if [ -n "$srv" ]; then kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; fi
  rm -rf "$bin"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
go build -o "$bin/idbench" ./cmd/idbench
go build -o "$bin/idkitd" ./cmd/idkitd
gaddr=""
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  GOMAXPROCS=1 $n taskset -c 0 "$bin/idkitd" --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --shutdown-delay 0 \
    --gen orders=snowflake:layout=twitter,node=1 2>"$bin/idkitd.log" &
  srv=$!
  for _ in $(seq 100); do
    gaddr=$(grep -o 'grpc_addr=[0-9.:]*' "$bin/idkitd.log" | cut -d= -f2 || true)
    [ -n "$gaddr" ] && break
    sleep 0.1
  done
  [ -n "$gaddr" ] || { echo "idkitd did not start:" >&2; cat "$bin/idkitd.log" >&2; exit 1; }
fi
row() { # name: one line from idbench's JSON on stdin
  jq -r --arg n "$1" --arg l "$(cut -d' ' -f1-3 /proc/loadavg)" --argjson r "$round" '.results[] | select(.kind=="next") |
    "round \($r) \($n): \(.requests_per_sec|round) req/s, p50 \(.latency.p50_us) µs, p99 \(.latency.p99_us) µs, p99.9 \(.latency.p999_us) µs from send; from schedule p99 \(.latency_from_schedule.p99_us) µs; load average \($l)"'
}
{
  echo "# sh docs/bench/grpc-port-paced.sh $rounds  (commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(go version | cut -d' ' -f3), $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "# spawn: idbench load --spawn --stack grpc-go --rate 10000 --no-floor --duration 4s --warmup 500ms --json"
  echo "# cpus:  GOMAXPROCS=1 taskset -c 0 idkitd --grpc-listen 127.0.0.1:0 …; GOMAXPROCS=1 taskset -c 1 idbench load --addr GRPC_ADDR --rate 10000 (same flags)"
  [ -z "$n" ] || echo "# both at nice ${NICE}: ahead of the machine's other processes"
  echo "# target: p99 < 1000 µs and p99.9 < 2000 µs from send"
  echo
  for round in $(seq "$rounds"); do
    $n "$bin/idbench" load --spawn --stack grpc-go --rate 10000 --no-floor --duration 4s --warmup 500ms --json | row spawn
    if [ -n "$gaddr" ]; then
      GOMAXPROCS=1 $n taskset -c 1 "$bin/idbench" load --addr "$gaddr" --rate 10000 --no-floor --duration 4s --warmup 500ms --json | row cpus
    fi
  done
  echo
  echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
