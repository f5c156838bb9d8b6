#!/bin/sh
# Writes docs/service/report.md: the ID service under load (idbench load, each run's command
# and table), its two gRPC stacks side by side (the main port, net/http with Connect, and the
# gRPC port, --grpc-listen, grpc-go's own server, where gRPC clients go by default), a run with
# the server and the load generator on CPUs of their own, the remote scheme's Next beside the
# in-process scheme's (a Go benchmark), and every stack against the fastest one on the machine
# (docs/bench/grpc-port.sh, interleaved rounds).
# Run from the repository root: make load-report (about nine minutes). Needs a quiet machine:
# whatever else runs takes CPU from both sides and shows in the tails.
set -eu
out=docs/service/report.md
bin=$(mktemp -d)
srv=""
cleanup() {
  if [ -n "$srv" ]; then kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; fi
  rm -rf "$bin" "$out.tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
go build -o "$bin/idbench" ./cmd/idbench
go build -o "$bin/idkitd" ./cmd/idkitd
load() { "$bin/idbench" load --spawn --markdown "$@"; }
{
  echo "# idkitd load report"
  echo
  rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git status --porcelain --untracked-files=no -- . ':!docs/service/report.md' 2>/dev/null)" ]; then rev="$rev with uncommitted changes"; fi
  echo "Made by \`make load-report\` (docs/service/report.sh) at commit $rev on $(date -u +%Y-%m-%d), $(go version | cut -d' ' -f3),"
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load average before the run:"
  echo "$(cut -d' ' -f1-3 /proc/loadavg). Loopback only. Unless a section says otherwise the server runs inside"
  echo "the load generator's process (--spawn), so both share the CPUs. Compare figures within one table,"
  echo "not across machines. \`--protocol grpc\` is the stock grpc-go client; \`--stack grpc-go\` sends it to"
  echo "idkitd's gRPC port (--grpc-listen, on by default at 127.0.0.1:7071: grpc-go's own server, where gRPC"
  echo "clients go), otherwise it goes to the main port (net/http with Connect, which serves every protocol)."
  echo "\`--protocol grpc-connect\` sends the same gRPC requests through connect-go's client (see"
  echo "docs/service.md). Each table compares a stack with itself (its floor); the last section compares"
  echo "every stack with the fastest one on the machine."
  echo
  echo "## Single IDs on the gRPC port (grpc-go), beside the floor (the same stack answering Ping)"
  echo
  load --duration 12s --clients 4 --stack grpc-go
  echo "## Single IDs on the main port (net/http with Connect), stock grpc-go client"
  echo
  load --duration 12s --clients 4 --stack net-http
  echo "## The same through connect-go's gRPC client"
  echo
  load --duration 12s --clients 4 --protocol grpc-connect
  echo "## Paced at 10,000 requests/s (Twitter's stated minimum), open loop"
  echo
  load --duration 12s --rate 10000 --no-floor --stack grpc-go
  load --duration 12s --rate 10000 --no-floor --stack net-http
  echo "## Paced at 10,000 requests/s, idkitd and the load generator on a CPU each"
  echo
  if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    GOMAXPROCS=1 taskset -c 0 "$bin/idkitd" --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --shutdown-delay 0 \
      --gen orders=snowflake:layout=twitter,node=1 2>"$bin/idkitd.log" &
    srv=$!
    addr=""
    gaddr=""
    for _ in $(seq 100); do
      addr=$(grep -o 'msg=serving addr=[0-9.:]*' "$bin/idkitd.log" | cut -d= -f3 || true)
      gaddr=$(grep -o 'grpc_addr=[0-9.:]*' "$bin/idkitd.log" | cut -d= -f2 || true)
      [ -n "$addr" ] && [ -n "$gaddr" ] && break
      sleep 0.1
    done
    [ -n "$addr" ] && [ -n "$gaddr" ] || { echo "idkitd did not start:" >&2; cat "$bin/idkitd.log" >&2; exit 1; }
    echo "idkitd as its own process on CPU 0: \`GOMAXPROCS=1 taskset -c 0 idkitd --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --gen orders=snowflake:layout=twitter,node=1\`;"
    echo "the load generator on CPU 1: \`GOMAXPROCS=1 taskset -c 1 idbench load --addr …\`, GRPC_ADDR being the grpc-go port"
    echo "and ADDR the main one."
    echo
    for a in "$gaddr" "$addr"; do
      name=ADDR
      [ "$a" = "$gaddr" ] && name=GRPC_ADDR
      GOMAXPROCS=1 taskset -c 1 "$bin/idbench" load --addr "$a" --markdown --duration 12s --rate 10000 --no-floor |
        sed "s/$a/$name/g"
      GOMAXPROCS=1 taskset -c 1 "$bin/idbench" load --addr "$a" --markdown --duration 12s --clients 4 |
        sed "s/$a/$name/g"
    done
    kill "$srv"; wait "$srv" 2>/dev/null || true; srv=""
  else
    echo "Not run: it needs taskset and at least 2 CPUs."
    echo
  fi
  echo "## Batches of 1,000, one connection, Twitter layout (cap 4,096,000 IDs/s per node)"
  echo
  load --duration 12s --clients 2 --batch 1000 --no-floor --stack grpc-go
  echo "## Batches of 1,000, a layout with 21 sequence bits (no practical cap)"
  echo
  load --duration 12s --clients 2 --batch 1000 --no-floor --stack grpc-go --gen 'wide=snowflake:fields=time:41/node:1/seq:21'
  load --duration 12s --clients 4 --batch 1000 --no-floor --stack grpc-go --gen 'wide=snowflake:fields=time:41/node:1/seq:21'
  load --duration 12s --clients 4 --batch 1000 --no-floor --stack net-http --gen 'wide=snowflake:fields=time:41/node:1/seq:21'
  echo "## Other protocols, single IDs"
  echo
  load --duration 6s --clients 4 --protocol connect
  load --duration 6s --clients 4 --protocol json
  load --duration 6s --clients 4 --protocol http
  echo "## Next in process, through the service with prefetch, and one request per ID"
  echo
  echo "\`go test -run '^\$' -bench 'BenchmarkNext\$' -benchtime 2s -count 3 ./schemes/remote/\`"
  echo
  echo '```'
  go test -run '^$' -bench 'BenchmarkNext$' -benchtime 2s -count 3 ./schemes/remote/ | grep -E '^(Benchmark|goos|goarch|cpu)'
  echo '```'
  echo
  echo "## Every stack against the fastest on this machine"
  echo
  echo "\`sh docs/bench/grpc-port.sh 5\`: five interleaved rounds, each stack once a round, every figure"
  echo "divided by the fastest stack's (grpc-go's gRPC port for RPCs, an empty net/http handler under wrk"
  echo "for GET /v1/next) in the same round; medians:"
  echo
  if command -v wrk >/dev/null && command -v jq >/dev/null; then
    echo '```'
    OUT="$bin/cmp.txt" sh docs/bench/grpc-port.sh 5 >/dev/null 2>&1
    sed -n '/^## Medians/,/^Load average/p' "$bin/cmp.txt" | grep -v '^## Medians' | grep -v '^Load average' | sed '/^$/d'
    echo '```'
  else
    echo "Not run: it needs wrk and jq (apt-get install -y wrk jq)."
  fi
  echo
  echo "Load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)."
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
