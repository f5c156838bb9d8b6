#!/bin/sh
# Writes docs/bench/http-profile.txt: where idkitd's CPU and allocations go per request, for each
# protocol of issue 28's service targets, under the same load generators as grpc-port.sh:
#   - GET /v1/next/orders under wrk (-t1 -c4), and an empty net/http handler under the same wrk;
#   - Connect (binary) and gRPC-Web on the main port, and gRPC on the grpc-go port, under
#     idbench load --addr (4 clients, 1 connection, single IDs).
# The server runs in a process of its own (a small main in a temporary directory of this module:
# server.New with the generator idkitd's benchmarks use, its two listeners, and net/http/pprof on
# a third), so that the profile is the server's alone. For each load it takes a CPU profile and
# the allocations made during the load, and divides the process's CPU time and mallocs by the
# requests answered (its idkit_ids_issued_total; wrk's count for the empty handler).
# Run from the repository root: sh docs/bench/http-profile.sh [SECONDS] (default 6); KEEP=DIR keeps
# the profiles and the harness binary there, for go tool pprof -list/-peek; ONLY="NAME …" runs
# only those loads.
set -eu
secs=${1:-6}
out=${OUT:-docs/bench/http-profile.txt}
before=$(cut -d' ' -f1-3 /proc/loadavg)
dir=$(mktemp -d ./.http-profile.XXXXXX) # inside the module, so the harness can import it
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$dir"/*.cpu "$dir"/*.allocs "$dir/h" "$KEEP"/ 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
command -v wrk >/dev/null || { echo "wrk not installed (apt-get install -y wrk)" >&2; exit 1; }
mkdir "$dir/harness"
cat > "$dir/harness/main.go" <<'GO'
// A profiling harness: idkitd's server (or, with -empty, an empty net/http handler) and
// net/http/pprof plus /stats (CPU ns, mallocs, IDs issued) on a listener of their own.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"syscall"

	"github.com/idkit/idkit/schemes/remote/server"
)

func main() {
	empty := flag.Bool("empty", false, "serve an empty handler instead")
	flag.Parse()
	var srv *server.Server
	var addr, gaddr string
	if *empty {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		addr = ln.Addr().String()
		go http.Serve(ln, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	} else {
		var err error
		srv, err = server.New(server.Config{Listen: "127.0.0.1:0", GRPCListen: "127.0.0.1:0", ShutdownDelay: -1,
			Generators: []server.Generator{{Name: "orders", Spec: "snowflake:layout=twitter,node=1"}}})
		if err != nil {
			panic(err)
		}
		a, _, err := srv.Start(context.Background())
		if err != nil {
			panic(err)
		}
		addr, gaddr = a.HTTP, a.GRPC
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		issued := 0.0
		if srv != nil {
			mfs, _ := srv.Registry().Gather()
			for _, mf := range mfs {
				if mf.GetName() == "idkit_ids_issued_total" {
					for _, m := range mf.GetMetric() {
						issued += m.GetCounter().GetValue()
					}
				}
			}
		}
		fmt.Fprintf(w, "%d %d %.0f\n", ru.Utime.Nano()+ru.Stime.Nano(), ms.Mallocs, issued)
	})
	pln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	if gaddr == "" {
		gaddr = "-"
	}
	fmt.Fprintf(os.Stdout, "%s %s %s\n", addr, gaddr, pln.Addr())
	http.Serve(pln, mux)
}
GO
go build -o "$dir/idbench" ./cmd/idbench
go build -o "$dir/h" "./$dir/harness"
start() { # [-empty]: starts a harness, sets addr, gaddr, paddr
  "$dir/h" "$@" > "$dir/addrs" &
  hpid=$!
  pids="$pids $hpid"
  for _ in $(seq 100); do [ -s "$dir/addrs" ] && break; sleep 0.1; done
  read -r addr gaddr paddr < "$dir/addrs" || true
  : > "$dir/addrs"
}
stop() { kill "$hpid"; wait "$hpid" 2>/dev/null || true; }
stats() { curl -s "http://$paddr/stats"; }
# profile NAME LOAD...: runs LOAD for secs+2 seconds while taking a CPU profile and a delta of
# the allocations over secs seconds; prints µs of CPU and mallocs per request, and the tops.
profile() {
  name=$1; shift
  case " ${ONLY:-$name} " in *" $name "*) ;; *) return 0 ;; esac
  "$@" > "$dir/$name.load" 2>&1 &
  lpid=$!
  sleep 1
  s0=$(stats)
  curl -s -o "$dir/$name.cpu" "http://$paddr/debug/pprof/profile?seconds=$secs" &
  cpid=$!
  curl -s -o "$dir/$name.allocs" "http://$paddr/debug/pprof/allocs?seconds=$secs"
  wait "$cpid"
  s1=$(stats)
  wait "$lpid" || true
  set -- $s0 $s1
  reqs=$(( $6 - $3 ))
  if [ "$reqs" -eq 0 ]; then # the empty handler: wrk's count, scaled to the profiled seconds
    reqs=$(awk -v s="$secs" '/^Requests\/sec:/ {printf "%d", $2*s}' "$dir/$name.load")
  fi
  echo "## $name: $reqs requests in ${secs}s, $(( ($4 - $1) / 1000 / reqs )) µs CPU and $(( ($5 - $2) / reqs )) mallocs per request (whole process)"
  echo "load: $(grep -hE '^Requests/sec|req/s' "$dir/$name.load" | head -3 | tr -s ' ' | tr '\n' ';')"
  echo
  echo "### Where the time goes: CPU per request in the profile (cumulative; the rows overlap)"
  go tool pprof -top -cum -nodecount=100000 "$dir/$name.cpu" 2>/dev/null | awk -v reqs="$reqs" '
    function sec(v) { if (v ~ /ms$/) return substr(v, 1, length(v)-2) / 1e3; if (v ~ /us$/) return substr(v, 1, length(v)-2) / 1e6; return substr(v, 1, length(v)-1) + 0 }
    /Total samples/ { for (i = 1; i <= NF; i++) if ($i == "=") total = sec($(i+1)) }
    { fn = $6; for (i = 7; i <= NF; i++) fn = fn " " $i }
    fn == "internal/runtime/syscall/linux.Syscall6" { row["system calls (read, write, futex)"] = sec($1) }
    fn == "runtime.newstack" { row["stack growth (runtime.newstack)"] = sec($4) }
    fn == "runtime.gcBgMarkWorker" { row["GC marking (runtime.gcBgMarkWorker)"] = sec($4) }
    fn == "runtime.schedule" { row["scheduler (runtime.schedule)"] = sec($4) }
    fn == "runtime.mallocgc" { row["allocation (runtime.mallocgc)"] = sec($4) }
    fn ~ /^github.com\/idkit\/idkit\/schemes\/remote\/server.\(\*Server\).routes.func[0-9]+$/ && sec($4) > row["idkit handler, everything below it (routes)"] { row["idkit handler, everything below it (routes)"] = sec($4) }
    fn == "connectrpc.com/connect.(*Handler).ServeHTTP" { row["  of which connect-go handler"] = sec($4) }
    fn == "github.com/idkit/idkit/schemes/remote/server.growStack" { row["  of which growStack"] = sec($4) }
    fn == "net/http.(*http2serverConn).serve" { row["net/http HTTP/2 serve loop"] = sec($4) }
    fn == "net/http.(*http2serverConn).readFrames" { row["net/http HTTP/2 frame reader"] = sec($4) }
    fn == "net/http.(*http2serverConn).writeFrameAsync" { row["net/http HTTP/2 frame writes (goroutine per write)"] = sec($4) }
    fn == "net/http.(*conn).serve" { row["net/http HTTP/1.1 connection loop"] = sec($4) }
    fn == "net/http.(*response).finishRequest" { row["  of which finishing the answer (write)"] = sec($4) }
    fn == "net/http.(*conn).readRequest" { row["  of which reading the request"] = sec($4) }
    fn == "google.golang.org/grpc.(*Server).processUnaryRPC" { row["grpc-go unary RPC"] = sec($4) }
    fn == "google.golang.org/grpc/internal/transport.(*loopyWriter).run" { row["grpc-go writer (loopy)"] = sec($4) }
    fn == "google.golang.org/grpc/internal/transport.(*http2Server).HandleStreams" { row["grpc-go reader"] = sec($4) }
    END {
      if ("net/http HTTP/2 serve loop" in row) delete row["net/http HTTP/1.1 connection loop"] # h2c runs below it
      printf "profile total %.1f µs/request\n", total / reqs * 1e6
      n = split("idkit handler, everything below it (routes)|  of which connect-go handler|  of which growStack|net/http HTTP/1.1 connection loop|  of which reading the request|  of which finishing the answer (write)|net/http HTTP/2 serve loop|net/http HTTP/2 frame reader|net/http HTTP/2 frame writes (goroutine per write)|grpc-go unary RPC|grpc-go reader|grpc-go writer (loopy)|system calls (read, write, futex)|scheduler (runtime.schedule)|allocation (runtime.mallocgc)|GC marking (runtime.gcBgMarkWorker)|stack growth (runtime.newstack)", order, "|")
      for (i = 1; i <= n; i++) if (order[i] in row) printf "%-52s %6.2f µs/request %5.1f%%\n", order[i], row[order[i]] / reqs * 1e6, 100 * row[order[i]] / total
    }'
  echo
  echo "### CPU, top by cumulative time (go tool pprof -top -cum -nodecount=45)"
  go tool pprof -top -cum -nodecount=45 "$dir/$name.cpu" 2>/dev/null | sed -n '/^ *flat/,$p'
  echo
  echo "### CPU, top by own time (go tool pprof -top -nodecount=25)"
  go tool pprof -top -nodecount=25 "$dir/$name.cpu" 2>/dev/null | sed -n '/^ *flat/,$p'
  echo
  echo "### Allocations during the load, by objects (go tool pprof -sample_index=alloc_objects -top -nodecount=30)"
  go tool pprof -sample_index=alloc_objects -top -nodecount=30 "$dir/$name.allocs" 2>/dev/null | sed -n '/^ *flat/,$p'
  echo
}
dur=$((secs + 2))s
{
  echo "# sh docs/bench/http-profile.sh $secs  (commit $(git log -1 --format="%h, %s" | cut -c1-90)$(git diff --quiet HEAD -- schemes/remote/server || echo ' +uncommitted server changes'), $(date -u +%Y-%m-%dT%H:%MZ), $(go version | cut -d' ' -f3), $(nproc) CPUs, load average before: $before)"
  echo "# Each load runs against a fresh server process; the profile covers ${secs}s of it, starting 1s in."
  echo
  start -empty
  profile wrk-empty-handler wrk -t1 -c4 -d"$dur" "http://$addr/"
  stop
  start
  profile wrk-v1-next wrk -t1 -c4 -d"$dur" "http://$addr/v1/next/orders"
  stop
  start
  profile main-port-connect "$dir/idbench" load --addr "$addr" --protocol connect --clients 4 --no-floor --rounds 1 --warmup 0s --duration "$dur"
  stop
  start
  profile main-port-grpc-web "$dir/idbench" load --addr "$addr" --protocol grpc-web --clients 4 --no-floor --rounds 1 --warmup 0s --duration "$dur"
  stop
  start
  profile grpc-port "$dir/idbench" load --addr "$gaddr" --protocol grpc --clients 4 --no-floor --rounds 1 --warmup 0s --duration "$dur"
  stop
  echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
