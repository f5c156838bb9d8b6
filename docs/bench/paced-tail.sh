#!/bin/sh
# Writes docs/bench/paced-tail.txt: where the slowest requests of issue 28's paced run go
# (idkitd's gRPC port at 10,000 single-ID requests/s, idkitd and the load generator on a CPU
# each, as the "cpus" rows of docs/bench/grpc-port-paced.sh). Each round records, in the same
# seconds:
#   - the load generator's --timeline: every request's due, send and answer times on
#     CLOCK_MONOTONIC;
#   - perf record -k mono -a (the same clock) of sched:sched_switch and sched:sched_wakeup,
#     and uprobes on runtime.gcStart and runtime.gcMarkTermination in both binaries;
# and docs/bench/pacedtail lays the requests over 1 ms and over p99.9 beside them: GC in
# either process, a thread of either waiting for its CPU (and behind whom), either process
# busy on its CPU through the whole window; docs/bench/paced-tail-totals.awk adds the rounds'
# tables up at the end.
# Each round runs twice: "plain", as grpc-port-paced.sh does, and "fifo", both processes under
# chrt --fifo 1, which other (SCHED_OTHER) processes cannot preempt: what is left there is the
# two processes' own doing.
# Needs root, perf (linux-perf) with uprobes, taskset, chrt and 2 CPUs. perf's tracing costs
# each context switch a little, so the latencies here run above grpc-port-paced.txt's.
# BASE=DIR, a checkout of another commit (such as main's), adds that commit's idbench and
# idkitd, interleaved with this commit's in every round and labelled "base"; the file ends with
# the medians of each build and mode.
# Run from the repository root: sh docs/bench/paced-tail.sh [ROUNDS] (default 3; ~40 s a round).
set -eu
rounds=${1:-3}
out=docs/bench/paced-tail.txt
bin=$(mktemp -d)
srv=""
prf=""
cleanup() {
  if [ -n "$prf" ]; then kill -INT "$prf" 2>/dev/null || true; wait "$prf" 2>/dev/null || true; fi
  if [ -n "$srv" ]; then kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; fi
  perf probe -q -d 'ptsrv:*' 2>/dev/null || true
  perf probe -q -d 'ptcli:*' 2>/dev/null || true
  rm -rf "$bin"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
go build -o "$bin/head/idbench" ./cmd/idbench
go build -o "$bin/head/idkitd" ./cmd/idkitd
go build -o "$bin/pacedtail" ./docs/bench/pacedtail
builds="head"
if [ -n "${BASE:-}" ]; then
  (cd "$BASE" && go build -o "$bin/base/idbench" ./cmd/idbench && go build -o "$bin/base/idkitd" ./cmd/idkitd)
  builds="base head"
fi
# One round: $1 build, $2 plain or fifo. Prints pacedtail's report.
one() {
  d=$bin/$1
  pre=""
  [ "$2" = fifo ] && pre="chrt --fifo 1"
  perf probe -q -d 'ptsrv:*' 2>/dev/null || true
  perf probe -q -d 'ptcli:*' 2>/dev/null || true
  perf probe -q -x "$d/idkitd" -a 'ptsrv:srvgcstart=runtime.gcStart' -a 'ptsrv:srvgcmarkterm=runtime.gcMarkTermination' 2>"$bin/probe.log" || { cat "$bin/probe.log" >&2; exit 1; }
  perf probe -q -x "$d/idbench" -a 'ptcli:cligcstart=runtime.gcStart' -a 'ptcli:cligcmarkterm=runtime.gcMarkTermination' 2>"$bin/probe.log" || { cat "$bin/probe.log" >&2; exit 1; }
  rm -f "$bin/idkitd.log" # the previous round's address must not be read as this one's
  : >"$bin/idkitd.log"
  GOMAXPROCS=1 $pre taskset -c 0 "$d/idkitd" --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --shutdown-delay 0 \
    --gen orders=snowflake:layout=twitter,node=1 >/dev/null 2>"$bin/idkitd.log" &
  srv=$!
  gaddr=""
  for _ in $(seq 100); do
    gaddr=$(grep -o 'grpc_addr=[0-9.:]*' "$bin/idkitd.log" | cut -d= -f2 || true)
    [ -n "$gaddr" ] && break
    sleep 0.1
  done
  [ -n "$gaddr" ] || { echo "idkitd did not start:" >&2; cat "$bin/idkitd.log" >&2; exit 1; }
  perf record -q -k mono -a -e sched:sched_switch -e sched:sched_wakeup -e 'ptsrv:*' -e 'ptcli:*' -o "$bin/perf.data" 2>/dev/null &
  prf=$!
  sleep 0.5
  tl="--timeline $bin/timeline.txt"
  [ "$1" = base ] && tl="" # an idbench from before --timeline: its JSON summary only
  GOMAXPROCS=1 $pre taskset -c 1 "$d/idbench" load --addr "$gaddr" --rate 10000 --no-floor --duration 4s --warmup 500ms \
    --json $tl >"$bin/load.json" &
  cli=$!
  wait $cli
  kill -INT $prf
  wait $prf || true
  prf=""
  # idkitd's own view: how long its Next handler took (idkit_request_duration_seconds counts
  # from the handler's start to its return, warm-up included), to set beside the latency
  # from send.
  maddr=$(grep -o 'msg=serving addr=[0-9.:]*' "$bin/idkitd.log" | cut -d= -f3)
  handler=$(curl -s "http://$maddr/metrics" | awk '
    /^idkit_request_duration_seconds_bucket/ && /rpc="Next"/ && /code="ok"/ {
      match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5)
      if (le == "0.0001") a = $NF; if (le == "0.001") b = $NF; if (le == "+Inf") n = $NF }
    END { if (n) printf "idkitd'"'"'s Next handler (idkit_request_duration_seconds, warm-up included): %d requests, %.2f%% within 100 µs, %d over 1 ms", n, 100 * a / n, n - b }')
  kill "$srv"; wait "$srv" 2>/dev/null || true
  spid=$srv
  srv=""
  label="round $round $1 $2 (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  if [ -z "$tl" ]; then
    jq -r --arg l "$label" '.results[0] | "## \($l)\n\(.requests) requests answered; from send p50 \(.latency.p50_us|floor) µs, p99 \(.latency.p99_us|floor) µs, p99.9 \(.latency.p999_us|floor) µs, max \(.latency.max_us|floor) µs\n"' "$bin/load.json"
    rm -f "$bin/perf.data"
    return
  fi
  perf script -i "$bin/perf.data" -F comm,pid,tid,cpu,time,event,trace --ns >"$bin/perf.txt" 2>/dev/null
  "$bin/pacedtail" -timeline "$bin/timeline.txt" -perf "$bin/perf.txt" -server-pid "$spid" -client-pid "$cli" \
    -label "$label" -note "$handler"
  rm -f "$bin/perf.data" "$bin/perf.txt"
}
{
  echo "# sh docs/bench/paced-tail.sh $rounds  (commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(go version | cut -d' ' -f3), $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "# GOMAXPROCS=1 taskset -c 0 idkitd --grpc-listen 127.0.0.1:0 …; GOMAXPROCS=1 taskset -c 1 idbench load --addr GRPC_ADDR --rate 10000 --no-floor --duration 4s --warmup 500ms --timeline FILE"
  [ -z "${BASE:-}" ] || echo "# base rows: BASE=$BASE at $(git -C "$BASE" log -1 --format=%h 2>/dev/null || echo "an unknown commit"); head rows: this commit"
  echo "# plain: as above; fifo: both under chrt --fifo 1. perf record -k mono -a -e sched:sched_switch -e sched:sched_wakeup + GC uprobes throughout"
  echo
  for round in $(seq "$rounds"); do
    for b in $builds; do
      one "$b" plain
      one "$b" fifo
    done
  done
  echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out.tmp"
# Medians over the rounds of each build and mode, from the reports' summary lines.
{
  echo
  echo "Medians over the rounds (latency from send, µs):"
  for b in $builds; do
    for mode in plain fifo; do
      awk -v b="$b" -v m="$mode" '
        /^## round / { keep = ($4 == b && $5 == m) }
        keep && /requests answered; from send/ {
          for (i = 1; i <= NF; i++) { if ($i == "p99") p99[n] = $(i+1); if ($i == "p99.9") p999[n] = $(i+1); if ($i == "p50") p50[n] = $(i+1) }
          n++
        }
        function med(a, n,   i, j, t) { for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
          return n % 2 ? a[int(n/2)] : (a[n/2-1] + a[n/2]) / 2 }
        END { if (n) printf "%s %s: %d rounds, p50 %s, p99 %s, p99.9 %s\n", b, m, n, med(p50, n), med(p99, n), med(p999, n) }' "$out.tmp"
    done
  done
} >>"$out.tmp"
# The rounds' tables added up by build and mode.
awk -f docs/bench/paced-tail-totals.awk "$out.tmp" >"$bin/totals.txt"
cat "$bin/totals.txt" >>"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
