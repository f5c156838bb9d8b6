package mysqlstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/mysqlstore"
)

// TestClass decides the durability class of the replication states a test cannot give a real
// server cheaply (the failover tests under make fault run the real ones).
func TestClass(t *testing.T) {
	semi := mysqlstore.Replication{LogBin: "ON", ReadOnly: "OFF", Dumps: 1, SemiEnabled: "ON", SemiStatus: "ON", WaitPoint: "AFTER_SYNC", SemiClients: 1}
	with := func(f func(*mysqlstore.Replication)) mysqlstore.Replication { r := semi; f(&r); return r }
	for _, tc := range []struct {
		r      mysqlstore.Replication
		want   segment.Class
		reason string
	}{
		{mysqlstore.Replication{LogBin: "OFF", ReadOnly: "OFF"}, segment.ClassSingle, "log_bin is OFF"},
		{with(func(r *mysqlstore.Replication) { r.Dumps = 0; r.SemiEnabled, r.SemiStatus = "OFF", "OFF" }), segment.ClassSingle, "no replica"},
		{with(func(r *mysqlstore.Replication) { r.Dumps = 0; r.SemiStatus = "OFF" }), segment.ClassAsync, "Rpl_semi_sync_master_status is OFF"},
		{semi, segment.ClassSync, "AFTER_SYNC"},
		{with(func(r *mysqlstore.Replication) { r.SemiStatus = "OFF" }), segment.ClassAsync, "Rpl_semi_sync_master_status is OFF"},
		{with(func(r *mysqlstore.Replication) { r.SemiEnabled, r.SemiStatus = "", "" }), segment.ClassAsync, "no semi-sync plugin"},
		{with(func(r *mysqlstore.Replication) { r.WaitPoint = "AFTER_COMMIT" }), segment.ClassAsync, "rpl_semi_sync_master_wait_point is AFTER_COMMIT"},
		{with(func(r *mysqlstore.Replication) { r.Dumps, r.SemiClients = 2, 2 }), segment.ClassAsync, "2 replicas"},
		{with(func(r *mysqlstore.Replication) { r.ReadOnly = "ON" }), segment.ClassUnknown, "read_only"},
		{mysqlstore.Replication{LogBin: "ON", ReadOnly: "OFF", Dumps: 2, WsrepOn: "ON", WsrepStatus: "Primary", WsrepSession: "ON"}, segment.ClassSync, "Galera"},
		{mysqlstore.Replication{LogBin: "ON", ReadOnly: "OFF", WsrepOn: "ON", WsrepStatus: "Primary", WsrepSession: "OFF"}, segment.ClassAsync, "wsrep_on is OFF in this session"},
		{mysqlstore.Replication{LogBin: "ON", ReadOnly: "OFF", WsrepOn: "ON", WsrepStatus: "non-Primary", WsrepSession: "ON"}, segment.ClassUnknown, "non-Primary"},
	} {
		got, reason := mysqlstore.ClassOf(tc.r)
		if got != tc.want || !strings.Contains(reason, tc.reason) {
			t.Errorf("%+v: %v, %q; want %v, %q", tc.r, got, reason, tc.want, tc.reason)
		}
	}
}

// TestDurabilitySingle: a private server without replicas is single, with or without the
// binary log, and its epoch is its server_id and GTID domain.
func TestDurabilitySingle(t *testing.T) {
	dsn, _ := privateDatabase(t, "--log-bin=binlog", "--sync-binlog=1", "--server-id=7")
	st := open(t, dsn)
	b, err := st.Take(context.Background(), segment.Request{Key: "k", Step: 10, Count: 1, Gap: 1000})
	if err != nil {
		t.Fatal(err)
	}
	d := st.Durability()
	if d.Class != segment.ClassSingle || d.Epoch != "7/0" || b.Epoch != "7/0" || b.Synchronous {
		t.Errorf("durability %v, block %+v; want single, epoch 7/0", d, b)
	}
	t.Log(d)
}
