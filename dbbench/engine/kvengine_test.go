package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseTableStatement(t *testing.T) {
	for _, c := range []struct {
		q    string
		want TableStatement
		err  string
	}{
		{q: "SELECT payload FROM t_1 WHERE id = $1", want: TableStatement{Kind: StmtLookup, Table: "t_1"}},
		{q: "SELECT id, payload FROM t2 WHERE id > $1 ORDER BY id LIMIT 100", want: TableStatement{Kind: StmtNext, Table: "t2", Next: 100}},
		{q: "SELECT count(*) FROM t3", want: TableStatement{Kind: StmtCount, Table: "t3"}},
		{q: "SELECT id, payload FROM t2 WHERE id > $1 ORDER BY id LIMIT 99999999999999999999", err: "LIMIT 99999999999999999999"},
		{q: "SELECT * FROM t", err: "SELECT * FROM t"},
		{q: "select payload from t where id = $1", err: "select payload"},
		{q: "", err: "table workload"},
	} {
		got, err := ParseTableStatement(c.q)
		if c.err != "" {
			if !errors.Is(err, ErrTableStatement) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want ErrTableStatement naming %q", c.q, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q = %+v, %v; want %+v", c.q, got, err, c.want)
		}
	}
}

// FuzzParseTableStatement: never panics; an error is ErrTableStatement, an accepted
// statement names a table and reads no negative number of rows.
func FuzzParseTableStatement(f *testing.F) {
	f.Add("SELECT payload FROM t WHERE id = $1")
	f.Add("SELECT id, payload FROM t WHERE id > $1 ORDER BY id LIMIT 7")
	f.Add("SELECT count(*) FROM t")
	f.Fuzz(func(t *testing.T, q string) {
		st, err := ParseTableStatement(q)
		if err != nil {
			if !errors.Is(err, ErrTableStatement) {
				t.Fatalf("%q: %v is not ErrTableStatement", q, err)
			}
			return
		}
		if st.Table == "" || st.Next < 0 {
			t.Fatalf("%q: %+v", q, st)
		}
	})
}

func TestKVColumns(t *testing.T) {
	if _, err := KVColumns("rocksdb", Row{Label: "x-text-icu", Col: ColTextICU}); err == nil || !strings.Contains(err.Error(), "the rocksdb engine") {
		t.Errorf("ICU text: %v, want an error naming the engine", err)
	}
	if _, err := KVColumns("pebble", Row{Label: "uuidv7-native", Col: ColUUIDNative}); err == nil {
		t.Error("MariaDB's UUID type accepted")
	}
	r, err := KVColumns("pebble", Row{Label: "snowflake", Col: ColUint64, Unsigned: true})
	if err != nil || r.Unsigned {
		t.Errorf("snowflake: %+v, %v: want it accepted, Unsigned cleared", r, err)
	}
}

func TestSampleMaxAndWaitQuiet(t *testing.T) {
	var max atomic.Int64
	var n atomic.Int64
	stop := SampleMax(&max, func() int64 { return 10 - (n.Add(1)-3)*(n.Load()-3) }) // peaks at 10 on the 3rd sample
	busy := 0
	if err := WaitQuiet(context.Background(), 5*time.Second, func() bool { busy++; return busy < 4 }); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); n.Load() < 3 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond) // a loaded machine may delay the sampler's ticks
	}
	stop()
	if max.Load() != 10 || busy != 5 {
		t.Errorf("max %d after %d samples, busy polled %d times: want 10 and 5 (3 busy, 2 quiet)", max.Load(), n.Load(), busy)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitQuiet(ctx, time.Minute, func() bool { return true }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
