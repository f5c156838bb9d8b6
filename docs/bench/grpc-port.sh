#!/bin/sh
# Writes docs/bench/grpc-port.txt: issue 28 item 1's targets, measured in one run with the
# rounds interleaved (every stack once per round, ROUNDS rounds, medians at the end):
#   - gRPC as README and docs/service.md show it first: idkitd's gRPC port (--grpc-listen, on by
#     default at 127.0.0.1:7071), which is grpc-go's own server, so "the default gRPC path" and
#     "grpc-go's own server" are one stack (idbench load --spawn --stack grpc-go);
#   - the same grpc-go client on the main port (net/http with Connect), for comparison;
#   - Connect (binary) and gRPC-Web on the main port, as a ratio of grpc-go's gRPC;
#   - the default gRPC path paced at 10,000 single-ID requests/s: p99 and p99.9 from send;
#   - plain GET /v1/next/orders on an idkitd process vs an empty net/http handler, under wrk, and
#     beside them a net/http handler that writes what GET /v1/next/orders writes and nothing else
#     (the same headers and a 20-byte body, no work): the floor of any answer with a body.
# Every figure is compared with the fastest stack of its kind in the same round.
# BASE=DIR, a checkout of another commit (such as main's), adds that commit's idbench and idkitd
# to every round, after or before this one's in turn, each compared with its own round's
# fastest stack; their rows are marked (base).
# Run from the repository root: sh docs/bench/grpc-port.sh [ROUNDS] (default 5; ~45 s a round,
# twice that with BASE).
set -eu
rounds=${1:-5}
out=${OUT:-docs/bench/grpc-port.txt} # OUT=FILE writes elsewhere and keeps no JSON (report.sh)
before=$(cut -d' ' -f1-3 /proc/loadavg)
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
variants=new
if [ -n "${BASE:-}" ]; then
  (cd "$BASE" && go build -o "$bin/base-idbench" ./cmd/idbench && go build -o "$bin/base-idkitd" ./cmd/idkitd)
  variants="new base"
fi
command -v wrk >/dev/null || { echo "wrk not installed (apt-get install -y wrk)" >&2; exit 1; }
cat > "$bin/empty.go" <<'GO'
// An empty net/http handler, the floor for GET /v1/next under wrk, and a handler that writes
// what GET /v1/next/orders writes (the headers idkitd sets and a 20-byte body) and does nothing
// else.
package main

import (
	"net"
	"net/http"
	"os"
)

func serve(h http.HandlerFunc) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go http.Serve(ln, h)
	return ln.Addr().String()
}

func main() {
	body := []byte("7399051282637086720\n")
	a := serve(func(http.ResponseWriter, *http.Request) {})
	b := serve(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(body)
	})
	os.Stdout.WriteString(a + " " + b + "\n")
	select {}
}
GO
(cd "$bin" && go build -o empty empty.go)
"$bin/empty" > "$bin/empty.addr" &
pids="$pids $!"
for v in $variants; do
  p=""; [ "$v" = base ] && p=base-
  "$bin/${p}idkitd" --listen 127.0.0.1:0 --grpc-listen off --shutdown-delay 0 \
    --gen orders=snowflake:layout=twitter,node=1 2>"$bin/${p}idkitd.log" &
  pids="$pids $!"
done
eaddr="" baddr="" addr="" base_addr=""
for _ in $(seq 100); do
  read -r eaddr baddr < "$bin/empty.addr" || true
  addr=$(grep -so 'msg=serving addr=[0-9.:]*' "$bin/idkitd.log" | cut -d= -f3 || true)
  [ -z "${BASE:-}" ] || base_addr=$(grep -so 'msg=serving addr=[0-9.:]*' "$bin/base-idkitd.log" | cut -d= -f3 || true)
  [ -n "$eaddr" ] && [ -n "$addr" ] && { [ -z "${BASE:-}" ] || [ -n "$base_addr" ]; } && break
  sleep 0.1
done
[ -n "$eaddr" ] && [ -n "$addr" ] && { [ -z "${BASE:-}" ] || [ -n "$base_addr" ]; } || { echo "servers did not start" >&2; cat "$bin"/*idkitd.log >&2; exit 1; }
j="$bin/runs.jsonl"
: > "$j"
L() { # name, then idbench load flags; appends {"name":…, report} to runs.jsonl
  name=$1; shift
  "$bin/${p}idbench" load --spawn --json --duration 4s --warmup 500ms "$@" |
    jq -c --arg n "$name" --arg v "$v" --argjson r "$round" '{name:$n, variant:$v, round:$r} + .' >> "$j"
}
W() { # name, URL: wrk's requests/s
  rps=$(wrk -t1 -c4 -d4s "$2" | awk '/^Requests\/sec:/ {print $2}')
  jq -nc --arg n "$1" --arg v "$v" --argjson r "$round" --argjson x "$rps" '{name:$n, variant:$v, round:$r, wrk_rps:$x}' >> "$j"
}
for round in $(seq "$rounds"); do
  echo "round $round of $rounds" >&2
  order=$variants
  [ $((round % 2)) -eq 0 ] && [ -n "${BASE:-}" ] && order="base new"
  for v in $order; do
    p=""; a=$addr
    [ "$v" = base ] && { p=base-; a=$base_addr; }
    L grpc-port --stack grpc-go --clients 4
    L main-port-grpc --stack net-http --clients 4 --no-floor
    L main-port-connect --protocol connect --clients 4 --no-floor
    L main-port-grpc-web --protocol grpc-web --clients 4 --no-floor
    L grpc-port-paced-10k --stack grpc-go --rate 10000 --no-floor
    W wrk-empty-handler "http://$eaddr/"
    W wrk-body-floor "http://$baddr/"
    W wrk-v1-next "http://$a/v1/next/orders"
  done
done
{
  echo "# sh docs/bench/grpc-port.sh $rounds  (commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(go version | cut -d' ' -f3), $(nproc) CPUs, load average before: $before)"
  [ -z "${BASE:-}" ] || echo "# (base) rows: BASE=$BASE at $(git -C "$BASE" log -1 --format="%h %s" 2>/dev/null || echo "an unknown commit"), interleaved with this commit's, each round"
  echo "# idbench load runs: --spawn --json --duration 4s --warmup 500ms, 4 clients on 1 connection, single IDs,"
  echo "# idkitd in the load generator's process (CPU per request counts both sides)."
  echo "# wrk runs: wrk -t1 -c4 -d4s against an idkitd process (--listen 127.0.0.1:0 --grpc-listen off) and an"
  echo "# empty net/http handler process (http.Serve with func(http.ResponseWriter, *http.Request) {}); wrk-body-floor:"
  echo "# a handler in that process writing GET /v1/next/orders's headers and a 20-byte body, nothing else."
  echo
  echo "## Per round (next requests/s; CPU µs per request; ratio to the grpc-go gRPC port in the same round)"
  jq -rs '
    def lbl: .name + (if (.variant // "new") == "new" then "" else " (\(.variant))" end);
    group_by([.round, (.variant // "new")])[] as $r
    | ($r[] | select(.name=="grpc-port") | .results[] | select(.kind=="next") | .requests_per_sec) as $fast
    | ($r[] | select(.name=="wrk-empty-handler") | .wrk_rps) as $empty
    | $r[]
    | if .wrk_rps then "round \(.round) \(lbl): \(.wrk_rps) req/s, \((.wrk_rps/$empty*1000|round)/1000)x the empty handler"
      else (.results[] | select(.kind=="next")) as $n
        | ([.results[] | select(.kind=="floor") | .requests_per_sec] | first) as $floor
        | "round \(.round) \(lbl): \($n.requests_per_sec|round) req/s, \($n.cpu_us_per_request*10|round/10) µs CPU, \(($n.requests_per_sec/$fast*1000|round)/1000)x grpc-port"
          + (if $floor then ", floor (Ping, same stack) \($floor|round) req/s" else "" end)
          + (if .rate then ", p99 \($n.latency.p99_us) µs p99.9 \($n.latency.p999_us) µs from send, from schedule p99 \($n.latency_from_schedule.p99_us) µs p99.9 \($n.latency_from_schedule.p999_us) µs, unsent \($n.unsent // 0)" else "" end)
      end' "$j"
  echo
  echo "## Medians over $rounds rounds"
  jq -rs '
    def med: sort | if length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end;
    def r3: (. * 1000 | round) / 1000;
    def lbl: .name + (if (.variant // "new") == "new" then "" else " (\(.variant))" end);
    (group_by([.round, (.variant // "new")]) | map(
      (.[] | select(.name=="grpc-port") | .results[] | select(.kind=="next")) as $f
      | (.[] | select(.name=="wrk-empty-handler") | .wrk_rps) as $e
      | map(if .wrk_rps then {name: lbl, rps: .wrk_rps, ratio: (.wrk_rps / $e)}
            else (.results[] | select(.kind=="next")) as $n
              | {name: lbl, rps: $n.requests_per_sec, cpu: $n.cpu_us_per_request, ratio: ($n.requests_per_sec / $f.requests_per_sec),
                 cpuratio: ($n.cpu_us_per_request / $f.cpu_us_per_request), p99: $n.latency.p99_us, p999: $n.latency.p999_us} end)
    ) | flatten | group_by(.name)) as $g
    | $g[] | .[0].name as $name
    | if $name | startswith("wrk") then "\($name): \(map(.rps) | med | round) req/s, \(map(.ratio) | med | r3)x the empty handler"
      elif $name | contains("paced") then "\($name): p99 \(map(.p99) | med) µs, p99.9 \(map(.p999) | med) µs from send (worst round: p99 \(map(.p99) | max) µs, p99.9 \(map(.p999) | max) µs)"
      else "\($name): \(map(.rps) | med | round) req/s, \(map(.cpu) | med * 10 | round / 10) µs CPU/request; ratio to grpc-port in its round: \(map(.ratio) | med | r3)x requests/s, \(map(.cpuratio) | med | r3)x CPU" end' "$j"
  echo
  echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out.tmp"
mv "$out.tmp" "$out"
if [ -z "${OUT:-}" ]; then
  cp "$j" docs/bench/grpc-port.jsonl
  echo "wrote $out and docs/bench/grpc-port.jsonl"
else
  echo "wrote $out"
fi
