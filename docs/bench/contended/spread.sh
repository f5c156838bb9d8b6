#!/bin/sh
# spread.sh FILE: for each benchmark of FILE (run.sh's head.txt or base.txt), the CPU time per
# ID of every round, sorted, and in how many rounds the process used more than 1.5 times as
# much CPU as wall time (cpu-ns/op > 1.5 x ns/op): rounds in which two goroutines really ran
# at once, on both cores. A generator whose waiting goroutines sleep (a mutex) shows fewer
# such rounds whatever the load; a lock-free one shows them whenever the machine had a core
# to spare. The medians benchstat gives mix both kinds of round.
set -eu
awk '$1 ~ /^Benchmark/ {
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "ns/op") wall = $i
		if ($(i+1) == "cpu-ns/op") cpu = $i
	}
	v[$1] = v[$1] " " cpu
	if (cpu > 1.5 * wall) par[$1]++
	n[$1]++
}
END {
	for (b in v) {
		m = split(substr(v[b], 2), a, " ")
		for (i = 2; i <= m; i++) { x = a[i]; j = i - 1; while (j > 0 && a[j] + 0 > x + 0) { a[j+1] = a[j]; j-- } a[j+1] = x }
		s = ""; for (i = 1; i <= m; i++) s = s " " a[i]
		printf "%-40s %d of %d rounds on both cores; cpu-ns/op:%s\n", b, par[b] + 0, n[b], s
	}
}' "${1:?usage: spread.sh FILE}" | sort
