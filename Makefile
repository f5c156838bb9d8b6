# The README's commands. `make test` is what CI runs (through .ci/run).
GO ?= go

.PHONY: test fault test-short bench fuzz run generate load-report

# All tests, with the race detector; then the million-ID round trips of the public text forms
# without it, which it slows tenfold (under it they run 100,000). PostgreSQL tests use IDKIT_TEST_PG or start a private
# cluster from the installed server binaries; etcd tests use IDKIT_TEST_ETCD or a private etcd.
test:
	$(GO) vet ./...
	$(GO) test -race -timeout 15m ./...
	$(GO) test -run '^TestPublicTextMillion$$' -count=1 .

# Real-process fault reproductions too heavy for `make test` (about six minutes), each with
# its control (tests built with -tags fault): idkitd processes frozen with SIGSTOP past their
# node lease on a private etcd and PostgreSQL; one connection flooding idkitd with 2,000 unread
# streams (an RSS bound); rolling restarts of two idkitd processes under a health-checking
# round-robin client at 5,000 req/s (no failed call, no repeated ID); the segment stores'
# failover matrix (PostgreSQL primary + standby, Redis primary + replica, MariaDB primary +
# semi-sync replica: primaries SIGKILLed and standbys promoted five times per row, each
# protected row with its control; docs/segment.md "Replicated stores"). CI runs it after
# `make test`.
fault:
	$(GO) vet -tags fault ./cmd/idkitd/ ./schemes/segment/...
	$(GO) test -tags fault -count=1 -timeout 10m -run '^TestFault' -v ./cmd/idkitd/
	$(GO) test -tags fault -count=1 -timeout 10m -run '^TestFaultFailover' -v ./schemes/segment/...

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
