# The README's commands. `make test` is what CI runs (through .ci/run).
GO ?= go

.PHONY: test fault fault-long test-rocksdb test-short bench fuzz run generate load-report

# All tests, with the race detector; then, without it, what it slows tenfold and has nothing to
# find in: the million-ID round trips of the public text forms and of the reversed and sharded
# layouts (under it they run 100,000 and 50,000) and the loads of SQLite (modernc.org/sqlite, C
# translated to Go), which skip under it, and the Pebble load, whose block counts the race build
# (Pebble's invariants) changes. PostgreSQL tests use IDKIT_TEST_PG or start a private
# cluster from the installed server binaries; etcd tests use IDKIT_TEST_ETCD or a private etcd.
# -p 4: two packages a core, since many tests wait on their servers, leases and clocks. The
# slowest packages are named first so that they start first (go test keeps the order, without
# repeats): started last, the server package alone held the run open for a minute and more.
SLOW_PKGS = ./dbbench/ ./schemes/remote/server/ ./cmd/idbench/ ./schemes/segment/pgstore/ ./schemes/remote/
test:
	$(GO) vet ./...
	$(GO) test -race -p 4 -timeout 15m $(SLOW_PKGS) ./...
	$(GO) test -count=1 -run '^(TestPublicTextMillion|TestRangeLayoutsMillion)$$' .
	$(GO) test -count=1 -run 'SQLite|Pebble' ./dbbench/ ./cmd/idbench/

# Real-process fault reproductions too heavy for `make test`, each with
# its control (tests built with -tags fault): idkitd processes frozen with SIGSTOP past their
# node lease on a private etcd and PostgreSQL; one connection flooding idkitd with 2,000 unread
# streams (an RSS bound); 200 connections of unread Watch streams without a token and 24 of
# unread Next streams with one (server-wide RSS bounds); 42 connections of requests whose body
# never comes, and bare TCP connects, from another loopback address (per-address bounds, body
# timeout, probe reserve); rolling restarts of two idkitd processes under a health-checking
# round-robin client at 5,000 req/s (no failed call, no repeated ID); a 3-member etcd
# cluster on loopback under 9 lease-holding writer processes with a follower killed, the leader
# killed and a holder frozen past its lease (about two minutes; 0 repeated IDs, and repeats
# in each control with the high-water marks off; docs/nodes.md "Replicated stores"); five
# failovers of a PostgreSQL lease store (primary killed, standby promoted; controls without
# the failover fence repeat); network partitions of etcd and PostgreSQL lease stores in
# network namespaces (a holder cut off, the etcd leader in the minority, flapping links; needs
# root and iproute2; each history checked by internal/history, controls with the fence off
# repeat; docs/nodes.md); the
# segment stores' failover matrix (PostgreSQL primary + standby, Redis primary + replica,
# MariaDB primary + semi-sync replica: primaries SIGKILLed and standbys promoted five times per
# row, each protected row with its control; docs/segment.md "Replicated stores"; and issue 36's
# cancelled synchronous take with the warning hidden, whose control repeats). One package
# at a time (-p 1): they time leases and failovers on 2 cores. CI runs it after `make test`.
FAULT_PKGS = ./cmd/idkitd/ ./schemes/nodeid/etcdlease/ ./schemes/nodeid/pglease/
fault:
	$(GO) vet -tags fault $(FAULT_PKGS) ./schemes/segment/...
	$(GO) test -tags fault -count=1 -p 1 -timeout 15m -run '^TestFault' -v $(FAULT_PKGS)
	$(GO) test -tags fault -count=1 -p 1 -timeout 10m -run '^TestFaultFailover' -v ./schemes/segment/...

# Fault runs too long for CI (about twenty minutes): the segment stores' failover rows under a
# network partition (PostgreSQL primary and synchronous standby, and asynchronous standby
# streaming through a replication slot, MariaDB semi-sync primary and replica, Redis primary
# and replica, each in network namespaces, the standby's or replica's
# link cut before each failover; needs root and iproute2; about 5, 2-3 and 2 minutes), a
# three-node MariaDB Galera cluster with one node at a time cut off and the store's writer
# node handing keys over (each mariadbd in a namespace of its own; one rsync state transfer per
# joiner at start, so four minutes and more; needs galera-4, rsync and the mysql user), and every partition
# scenario of the lease stores and idkitd, the flapping links and the service's
# leader-minority included (make fault runs the others). Outputs committed in
# docs/bench/partitions/; docs/segment.md and docs/nodes.md quote them.
fault-long:
	$(GO) test -tags fault -count=1 -p 1 -timeout 20m -run '^TestFaultPartition(PG|MariaDB|Redis)$$' -v ./schemes/segment/pgstore/ ./schemes/segment/mysqlstore/ ./schemes/segment/redisstore/
	$(GO) test -tags fault -count=1 -timeout 20m -run '^TestFaultPartitionGalera$$' -v ./schemes/segment/mysqlstore/
	IDKIT_FAULT_LONG=1 $(GO) test -tags fault -count=1 -p 1 -timeout 20m -run '^TestFaultPartition' -v ./schemes/nodeid/etcdlease/ ./schemes/nodeid/pglease/ ./cmd/idkitd/

# The RocksDB engine (idbench db --db rocksdb) needs the C library (apt-get install
# librocksdb-dev, 7.8.3 on Debian 12) and the build tag rocksdb: its load test runs in about
# 5 s, but building the cgo binding takes a minute on a fresh machine, so it is not part of
# `make test` (whose budget is spent); the package's tests without the tag (encodings, the
# cfstats parser, Open's refusal) are.
test-rocksdb:
	$(GO) vet -tags rocksdb ./dbbench/rocksdb/
	$(GO) test -tags rocksdb -count=1 -run '^TestRocksDB' -v ./dbbench/

# Without the race detector, quicker while editing.
test-short:
	$(GO) test -short ./...

# Generation benchmarks with allocation counts; compare runs with benchstat.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=6 ./schemes/ ./ | tee bench.out

# A short run of every fuzzer.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=15s $$pkg || exit 1; \
	  done; \
	done

# The whole comparison, as a newcomer runs it.
run:
	$(GO) run ./cmd/idbench

# Regenerate the ID service's Go code from schemes/remote/idkitv1/idkit.proto. Needs protoc and
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
#   go install connectrpc.com/connect/cmd/protoc-gen-connect-go@v1.21.1
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
generate:
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" $(GO) generate ./schemes/remote/idkitv1

# The ID service under load: docs/service/report.md, which docs/service.md quotes.
load-report:
	sh docs/service/report.sh
