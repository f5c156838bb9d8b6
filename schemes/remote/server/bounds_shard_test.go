package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// TestShardedBounds: a generator with a sharded layout answers Bounds on every stack, and GET
// /v1/bounds, with one range per shard (idkit.ShardBounds) and a where that ORs them, and its
// live IDs lie in their own shard's range of their tick; a reversed layout is refused with
// INVALID_ARGUMENT saying why.
func TestShardedBounds(t *testing.T) {
	t.Parallel()
	specs := map[string]string{"tidb": "snowflake:worker=3,shard_bits=3", "spanner": "snowflake:worker=4,reverse=true"}
	r := start(t, server.Config{Generators: []server.Generator{{Name: "tidb", Spec: specs["tidb"]}, {Name: "spanner", Spec: specs["spanner"]}}, MaxCount: 100})
	codec, err := idkit.NewCodec(specs["tidb"])
	if err != nil {
		t.Fatal(err)
	}
	from, to := time.Date(2026, 1, 1, 9, 30, 0, 0, time.UTC), time.Date(2026, 1, 1, 9, 31, 0, 0, time.UTC)
	want, err := idkit.ShardBounds(codec, from, to)
	if err != nil || len(want) != 8 {
		t.Fatalf("ShardBounds: %v, %v", want, err)
	}
	for _, c := range apiClients(t, r) {
		t.Run(c.name, func(t *testing.T) {
			res, err := c.bounds(&v1.BoundsRequest{Generator: "tidb", From: idkit.FormatTime(from), To: idkit.FormatTime(to)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Shards) != 8 || res.Where != idkit.Where("id", want) || res.Lo64 != want[0].Lo.Uint64() || res.Hi64 != want[7].Hi.Uint64() ||
				res.LoTime != "2026-01-01T09:30:00.000Z" || res.HiTime != "2026-01-01T09:30:59.999Z" {
				t.Fatalf("Bounds = %v", res)
			}
			for i, s := range res.Shards {
				if s.Shard != uint64(i) || s.Lo64 != want[i].Lo.Uint64() || s.Hi64 != want[i].Hi.Uint64() || s.LoText != want[i].Lo.String() || s.HiText != want[i].Hi.String() {
					t.Errorf("shard %d: %v, want %+v", i, s, want[i])
				}
			}
			// Live IDs lie in their shard's range of their own tick.
			next, err := c.next(&v1.NextRequest{Generator: "tidb", Count: 20})
			if err != nil {
				t.Fatal(err)
			}
			l := codec.(idkit.Layouter).Layout()
			for _, v := range next.Ids64 {
				p := l.Decompose(v)
				own, err := c.bounds(&v1.BoundsRequest{Generator: "tidb", From: idkit.FormatTime(p.Time), To: idkit.FormatTime(p.Time.Add(time.Millisecond))})
				if err != nil {
					t.Fatal(err)
				}
				if s := own.Shards[p.Hash]; v < s.Lo64 || v > s.Hi64 {
					t.Fatalf("ID %d of shard %d outside its shard's range %v", v, p.Hash, s)
				}
			}
			at, err := c.bounds(&v1.BoundsRequest{Generator: "tidb", At: idkit.FormatTime(from)})
			if err != nil || len(at.Shards) != 8 || strings.Count(at.Where, " AND ") != 8 {
				t.Fatalf("Bounds at: %v, %v", at, err)
			}
			_, err = c.bounds(&v1.BoundsRequest{Generator: "spanner", From: idkit.FormatTime(from)})
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "reversed") {
				t.Errorf("Bounds of a reversed layout: %v", err)
			}
		})
	}
	// GET /v1/bounds answers the same message.
	rpc, err := idkitv1connect.NewIDServiceClient(h2(), r.url).Bounds(context.Background(), connect.NewRequest(&v1.BoundsRequest{Generator: "tidb", From: "2026-01-01", To: "2026-01-02"}))
	if err != nil {
		t.Fatal(err)
	}
	body, status := plainGet(t, r, "/v1/bounds/tidb?from=2026-01-01&to=2026-01-02")
	var got v1.BoundsResponse
	if status != 200 || protojson.Unmarshal([]byte(body), &got) != nil || !proto.Equal(&got, rpc.Msg) || !strings.Contains(body, `"shards":[`) {
		t.Fatalf("GET /v1/bounds/tidb: %d %s; want %v", status, body, rpc.Msg)
	}
	if body, status := plainGet(t, r, "/v1/bounds/spanner?from=2026-01-01"); status != 400 || !strings.Contains(body, "reversed") {
		t.Errorf("GET /v1/bounds/spanner: %d %s", status, body)
	}
}
