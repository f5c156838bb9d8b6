#!/bin/sh
# The remedies runs behind docs/choosing-an-id.md's "Remedies" table: the app workload on a
# private MariaDB (mariadb-local) at 1, 16 and 64 clients, 20,000 operations per scheme, one
# run each, every remedy an option of idbench db. Run from the repository root:
#   sh docs/report-remedies/run.sh
# then `go test ./dbbench -run TestRemediesTable -update` regenerates the table.
set -e
go build -o /tmp/idbench-remedies ./cmd/idbench
run() { out=$1; shift; /tmp/idbench-remedies db --workload app --db mariadb-local --rows 20000 --repeat 1 --baseline=false --clients 1,16,64 --out "docs/report-remedies/$out" "$@"; }
run innodb-none --schemes auto-increment,snowflake,uuidv7,uuidv4
run innodb-client-block --client-block 200 --schemes snowflake,uuidv7
run innodb-client-batch --client-batch 10 --schemes auto-increment,snowflake,uuidv7,uuidv4
run innodb-ids-in-tx --ids-in-tx --schemes snowflake,uuidv7
run innodb-ids-per-client --ids-per-client --schemes snowflake:fields=node:6/time:41/seq:16,snowflake
run innodb-client-block-1000 --client-block 1000 --schemes snowflake,uuidv7
# Three times the operations at 1 and 16 clients: sizes are counted in whole extents (1 MiB
# per index once it is past 32 pages), 52.4 B/op at 20,000 operations, 17.5 B/op at 60,000.
run60() { out=$1; shift; /tmp/idbench-remedies db --workload app --db mariadb-local --rows 60000 --repeat 1 --baseline=false --clients 1,16 --out "docs/report-remedies/$out" "$@"; }
run60 innodb-60k-none --schemes auto-increment,snowflake,uuidv7
run60 innodb-60k-ids-per-client --ids-per-client --schemes snowflake:fields=node:6/time:41/seq:16
run60 innodb-60k-client-block-1000 --client-block 1000 --schemes snowflake
# PostgreSQL (pg-local), 20,000 operations at 1 and 16 clients: no remedy, one block of 1000
# operations per client, and the per-client field above the time.
runpg() { out=$1; shift; /tmp/idbench-remedies db --workload app --db pg-local --rows 20000 --repeat 1 --baseline=false --clients 1,16 --out "docs/report-remedies/$out" "$@"; }
runpg pg-none --schemes bigserial,snowflake,uuidv7
runpg pg-client-block-1000 --client-block 1000 --schemes snowflake,uuidv7
runpg pg-ids-per-client --ids-per-client --schemes snowflake:fields=node:6/time:41/seq:16
