#!/bin/sh
# instructions.sh BASE: instructions per ID of BenchmarkFloor's three ops (one goroutine),
# counted by valgrind's callgrind for the idkit of git revision BASE and for the working
# tree. Unlike time, the count does not depend on the machine's load. Each op runs twice,
# 200,000 and 400,000 IDs, and the difference divided by 200,000 leaves out the process's
# start-up and the benchmark's set-up. Writes instructions.txt here.
#
# The binaries are built without cgo and run with asynchronous preemption off: callgrind
# stops on the runtime's preemption signals otherwise. The clock read under valgrind is the
# vDSO's code or the system call, whichever valgrind lets the runtime find, the same for
# every op, so the counts compare the ops, not the clock read with a real one.
set -eu
cd "$(dirname "$0")"
base=${1:?usage: instructions.sh BASE}
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/base"
git -C ../../.. archive "$base" | tar -x -C "$tmp/base"
sed "s#=> ../../..#=> $tmp/base#" go.mod >"$tmp/go.mod"
cp go.sum "$tmp/go.sum"
CGO_ENABLED=0 go test -c -o "$tmp/base.test" -modfile "$tmp/go.mod" .
CGO_ENABLED=0 go test -c -o "$tmp/head.test" .
count() { # count BINARY OP N: total instructions of a run
	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
		"$1" -test.run='^$' -test.bench="Floor/op=$2\$" -test.cpu=1 -test.benchtime="${3}x" 2>&1 >/dev/null |
		sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
{
	echo "# instructions per ID, callgrind, (count at 400,000 IDs - count at 200,000) / 200,000"
	echo "# base: $base ($(git -C ../../.. rev-parse --short "$base")), head: the working tree at $(git -C ../../.. rev-parse --short HEAD)"
	for bin in base head; do
		for op in 'clock\+add' 'clock\+cas' core; do
			a=$(count "$tmp/$bin.test" "$op" 200000)
			b=$(count "$tmp/$bin.test" "$op" 400000)
			echo "$bin op=$(echo "$op" | tr -d '\\') $(( (b - a) / 200000 ))"
		done
	done
} >instructions.txt
cat instructions.txt
