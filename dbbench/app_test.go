package dbbench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench"
	"github.com/idkit/idkit/dbbench/pgtest"
)

// smallApp is an app-workload configuration that runs in a few seconds per scheme.
func smallApp(db string, schemes ...string) dbbench.Config {
	return dbbench.Config{
		DB:       db,
		Schemes:  schemes,
		Workload: dbbench.WorkloadApp,
		Rows:     400,
		Repeat:   1,
		Lookups:  20,
		Baseline: true,
	}
}

// checkApp checks the figures every app result must have.
func checkApp(t *testing.T, rep *dbbench.Report, ops int64) {
	t.Helper()
	if rep.Workload != dbbench.WorkloadApp || len(rep.Results) != 0 {
		t.Fatalf("workload %q with %d table results", rep.Workload, len(rep.Results))
	}
	for _, r := range rep.App {
		if r.Operations != ops || r.OpsPerSec <= 0 || r.WALBytesPerOp <= 0 || r.BytesPerOp <= 0 {
			t.Errorf("%s: %d ops at %.0f/s, %.1f WAL B/op, %.1f B/op", r.Scheme, r.Operations, r.OpsPerSec, r.WALBytesPerOp, r.BytesPerOp)
		}
		roles := map[string]bool{}
		for _, s := range r.Structures {
			roles[s.Role] = true
			if s.Bytes <= 0 || !strings.HasPrefix(s.Name, r.Label+"_") {
				t.Errorf("%s: structure %+v", r.Scheme, s)
			}
		}
		if !roles["child foreign-key index"] || roles["parent created_at index"] != r.CreatedAtIndex {
			t.Errorf("%s: structures %+v (created_at index %v)", r.Scheme, r.Structures, r.CreatedAtIndex)
		}
		if r.TimeQuery == nil || r.TimeQuery.Latency.Count == 0 || r.TimeQuery.Plan == "" {
			t.Errorf("%s: time query %+v", r.Scheme, r.TimeQuery)
		} else if want := map[bool]string{true: "key bounds", false: "created_at index"}[r.TimeOrdered]; r.TimeQuery.Via != want {
			t.Errorf("%s: time query via %q, want %q", r.Scheme, r.TimeQuery.Via, want)
		}
		if r.ParentWithChildren.Count == 0 {
			t.Errorf("%s: no parent-with-children queries", r.Scheme)
		}
		if r.TimeOrdered != (r.Check != nil) {
			t.Errorf("%s: time ordered %v, check %+v", r.Scheme, r.TimeOrdered, r.Check)
		}
		if c := r.Check; c != nil && (c.Windows == 0 || c.Rows == 0 || c.Mismatches != 0) {
			t.Errorf("%s: check %+v", r.Scheme, *c)
		}
	}
	if b := rep.AppBaseline; b == nil || b.OpsPerSec <= 0 || b.Ratio <= 0 {
		t.Errorf("baseline %+v", rep.AppBaseline)
	}
}

func TestPostgresApp(t *testing.T) {
	dsn := pgtest.DSN(t)
	schemasBefore, _, _ := objects(t, dsn)
	for _, mode := range []string{dbbench.ModeTx, dbbench.ModeCopy} {
		t.Run(mode, func(t *testing.T) {
			schemes := []string{"bigserial", "snowflake", "ulid", "uuidv7", "uuidv4", "ulid-text"}
			if mode == dbbench.ModeCopy {
				schemes = schemes[1:]
			}
			cfg := smallApp(dsn, schemes...)
			cfg.Mode = mode
			cfg.Clients = 2
			rep, err := dbbench.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.App) != len(schemes) {
				t.Fatalf("%d results, want %d", len(rep.App), len(schemes))
			}
			checkApp(t, rep, 400)
			if schemas, _, _ := objects(t, dsn); schemas != schemasBefore {
				t.Errorf("%d idbench schemas after the run, %d before", schemas, schemasBefore)
			}
		})
	}
}

func TestMySQLApp(t *testing.T) {
	url, dsn := mysqlURL(t)
	dbsBefore, _ := mysqlState(t, dsn)
	for _, mode := range []string{dbbench.ModeTx, dbbench.ModeCopy} {
		t.Run(mode, func(t *testing.T) {
			schemes := []string{"auto-increment", "snowflake", "ulid", "uuidv7", "uuidv4", "ulid-text"}
			if mode == dbbench.ModeCopy {
				schemes = schemes[1:]
			}
			cfg := smallApp(url, schemes...)
			cfg.Mode = mode
			cfg.Clients = 2
			rep, err := dbbench.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.App) != len(schemes) {
				t.Fatalf("%d results, want %d", len(rep.App), len(schemes))
			}
			checkApp(t, rep, 400)
			if dbs, _ := mysqlState(t, dsn); dbs != dbsBefore {
				t.Errorf("%d idbench databases after the run, %d before", dbs, dbsBefore)
			}
		})
	}
}
