#!/bin/sh
# run.sh BASE [ROUNDS]: builds this benchmark twice, against the idkit of git revision BASE
# and against the working tree, and runs the two binaries in turn ROUNDS times (default 6),
# so that the machine's load falls on both alike. Writes base.txt and head.txt here, and
# rounds.txt with the load average at the start of each round; compare with benchstat (see
# README.md).
set -eu
cd "$(dirname "$0")"
base=${1:?usage: run.sh BASE [ROUNDS]}
rounds=${2:-6}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/base"
git -C ../../.. archive "$base" | tar -x -C "$tmp/base"
sed "s#=> ../../..#=> $tmp/base#" go.mod >"$tmp/go.mod"
cp go.sum "$tmp/go.sum"
go test -c -o "$tmp/base.test" -modfile "$tmp/go.mod" .
go test -c -o "$tmp/head.test" .
: >base.txt
: >head.txt
echo "run.sh $base $rounds: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores" >rounds.txt
bench='-test.run=^$ -test.bench=Next/impl=(idkit|idkit-scheme|bwmarrin|mutex|cas|crowd)$ -test.cpu=1,2,8 -test.benchtime=200ms'
floor='-test.run=^$ -test.bench=Floor -test.cpu=1 -test.benchtime=200ms'
for i in $(seq "$rounds"); do
	echo "round $i: $(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a rounds.txt >&2
	"$tmp/base.test" $bench >>base.txt
	"$tmp/head.test" $bench >>head.txt
	"$tmp/base.test" $floor >>base.txt
	"$tmp/head.test" $floor >>head.txt
done
# sony/sonyflake once per binary: capped at 25,600 IDs/s, it is far from the others.
"$tmp/head.test" -test.run='^$' -test.bench='Next/impl=sonyflake$' -test.cpu=1,2,8 -test.benchtime=200ms -test.count=3 >sonyflake.txt
echo "end: $(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)" >>rounds.txt
