# The README's commands. `make test` is what CI runs (through .ci/run).
GO ?= go

.PHONY: test test-short bench fuzz run

# All tests, with the race detector. PostgreSQL tests use IDKIT_TEST_PG or start a private
# cluster from the installed server binaries; etcd tests use IDKIT_TEST_ETCD or a private etcd.
test:
	$(GO) vet ./...
	$(GO) test -race -timeout 15m ./...

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
