#!/bin/sh
# Writes docs/service/report.md: the ID service under load (idbench load, each run's command
# and table) and the remote scheme's Next beside the in-process scheme's (a Go benchmark).
# Run from the repository root: make load-report (about two minutes).
set -eu
out=docs/service/report.md
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/idbench" ./cmd/idbench
load() { "$bin/idbench" load --spawn --markdown "$@"; }
{
  echo "# idkitd load report"
  echo
  echo "Made by \`make load-report\` (docs/service/report.sh) on $(date -u +%Y-%m-%d), $(go version | cut -d' ' -f3),"
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load average before the run:"
  echo "$(cut -d' ' -f1-3 /proc/loadavg). Loopback only; the server runs inside the load generator's"
  echo "process (--spawn). Compare figures within one table, not across machines."
  echo
  echo "## Single IDs over gRPC, beside the floor (the same stack answering Ping)"
  echo
  load --duration 12s --clients 4
  echo "## Paced at 10,000 requests/s (Twitter's stated minimum)"
  echo
  load --duration 12s --clients 8 --rate 10000 --no-floor
  echo "## Batches of 1,000, one connection, Twitter layout (cap 4,096,000 IDs/s per node)"
  echo
  load --duration 12s --clients 2 --batch 1000 --no-floor
  echo "## Batches of 1,000, a layout with 21 sequence bits (no practical cap)"
  echo
  load --duration 12s --clients 2 --batch 1000 --no-floor --gen 'wide=snowflake:fields=time:41/node:1/seq:21'
  echo "## Other protocols, single IDs"
  echo
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
  echo "Load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)."
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
