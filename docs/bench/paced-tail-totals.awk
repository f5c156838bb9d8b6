# Adds up docs/bench/paced-tail.txt's per-round tables by build and mode: for each kind of
# event, how many of all requests, of those over 1 ms and of those over the round's p99.9
# overlapped it by at least 100 µs, summed over the rounds. paced-tail.sh appends its output.
# Usage: awk -f docs/bench/paced-tail-totals.awk docs/bench/paced-tail.txt
/^## round / { key = $4 " " $5; if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }; rounds[key]++; next }
key != "" && / \| / {
  n = split($0, col, "|")
  name = col[1]; sub(/ +$/, "", name)
  if (name == "window overlaps") {
    for (i = 2; i <= n; i++) { v = col[i]; sub(/^.*: /, "", v); tot[key, "requests", i] += v }
    next
  }
  if (name !~ /^  /) parent = name
  else name = parent ": " substr(name, 5)
  if (!((key, name) in named)) { named[key, name] = 1; names[key, ++nn[key]] = name }
  for (i = 2; i <= n; i++) { v = col[i]; sub(/^ +/, "", v); split(v, w, " "); tot[key, name, i] += w[1] }
}
function pct(a, b) { return b ? sprintf("%d (%.0f%%)", a, 100 * a / b) : "0" }
END {
  for (k = 1; k <= nk; k++) {
    key = keys[k]
    if (!nn[key]) continue
    printf "\nTotals, %s, %d rounds: requests whose window overlaps each kind of event by ≥ 100 µs\n", key, rounds[key]
    printf "%-47s | %-16s | %-16s | %s\n", "window overlaps", "all: " tot[key, "requests", 2], "> 1 ms: " tot[key, "requests", 3], "> p99.9: " tot[key, "requests", 4]
    for (j = 1; j <= nn[key]; j++) {
      name = names[key, j]
      printf "%-47s | %-16s | %-16s | %s\n", name, pct(tot[key, name, 2], tot[key, "requests", 2]), pct(tot[key, name, 3], tot[key, "requests", 3]), pct(tot[key, name, 4], tot[key, "requests", 4])
    }
  }
}
