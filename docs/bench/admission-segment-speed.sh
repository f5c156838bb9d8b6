#!/bin/sh
# sh docs/bench/admission-segment-speed.sh [ROUNDS] > docs/bench/admission-segment-speed.txt
#
# The service and segment benchmarks at BEFORE (default f3e2702: the commit before idkitd's
# admission bounds, whose per-stream body timer is on every request, and before segment's
# Next decided when to wait for a store) against this checkout's HEAD, in one session:
# both sides' test binaries are built first, then each round runs BEFORE's and HEAD's
# benchmarks one after the other (the order alternates each round), so that a load change
# on the machine falls on both. benchstat (golang.org/x/perf/cmd/benchstat) compares them:
# the medians and the ratio, with a p-value over the ROUNDS (default 10) runs of each side.
# Run it from the repository root.
set -eu
ROUNDS=${1:-10}
BEFORE=${BEFORE:-f3e2702}
BENCHSTAT=${BENCHSTAT:-benchstat}
root=$(pwd)
tmp=$(mktemp -d)
git worktree add -q --detach "$tmp/before" "$BEFORE"
trap 'git -C "$root" worktree remove --force "$tmp/before"; rm -rf "$tmp"' EXIT
ln -s "$root" "$tmp/head"
for side in before head; do
	(cd "$tmp/$side" && go test -c -o "$tmp/server-$side" ./schemes/remote/server/ &&
		go test -c -o "$tmp/segment-$side" ./schemes/segment/)
done
echo "# sh docs/bench/admission-segment-speed.sh $ROUNDS  (before: $(git rev-parse --short "$BEFORE"), head: $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(go env GOVERSION), $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "# per round and side: schemes/remote/server: -test.bench '^BenchmarkProtocols\$' -test.benchmem;"
echo "# schemes/segment: -test.bench '^Benchmark(Next|NextBatch)\$' -test.benchmem, then -test.bench '^BenchmarkBoundary\$' -test.benchtime 20000000x"
run() { # side
	(cd "$tmp/$1/schemes/remote/server" && "$tmp/server-$1" -test.run '^$' -test.bench '^BenchmarkProtocols$' -test.benchmem -test.count 1) >>"$tmp/$1.txt"
	(cd "$tmp/$1/schemes/segment" && "$tmp/segment-$1" -test.run '^$' -test.bench '^Benchmark(Next|NextBatch)$' -test.benchmem -test.count 1) >>"$tmp/$1.txt"
	(cd "$tmp/$1/schemes/segment" && "$tmp/segment-$1" -test.run '^$' -test.bench '^BenchmarkBoundary$' -test.benchtime 20000000x -test.count 1) >>"$tmp/$1.txt"
}
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then run before; run head; else run head; run before; fi
	echo "# round $r done, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
(cd "$tmp" && "$BENCHSTAT" before.txt head.txt)
echo
echo "## raw: before ($BEFORE)"
grep -E '^(Benchmark|goos|goarch|pkg|cpu)' "$tmp/before.txt"
echo
echo "## raw: head"
grep -E '^(Benchmark|goos|goarch|pkg|cpu)' "$tmp/head.txt"
