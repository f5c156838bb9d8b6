package server_test

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
)

// BenchmarkRPC compares single-ID Next with Ping, the same stack answering an empty message,
// over gRPC on one loopback h2c connection with parallel callers.
func BenchmarkRPC(b *testing.B) {
	r := start(b, server.Config{Generators: []server.Generator{{Name: "orders", Spec: "snowflake:layout=twitter,worker=1"}}})
	c := idkitv1connect.NewIDServiceClient(h2(), r.url, connect.WithGRPC())
	ctx := context.Background()
	b.Run("rpc=next", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Next(ctx, connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 1})); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("rpc=ping", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Ping(ctx, connect.NewRequest(&v1.PingRequest{})); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkStockRPC is BenchmarkRPC with the stock grpc-go client, against both stacks: net/http
// with Connect (Config.Listen) and grpc-go's own server (Config.GRPCListen).
func BenchmarkStockRPC(b *testing.B) {
	r := start(b, server.Config{Generators: []server.Generator{{Name: "orders", Spec: "snowflake:layout=twitter,worker=1"}}})
	ctx := context.Background()
	req := &v1.NextRequest{Generator: "orders", Count: 1}
	for _, st := range stacks(r) {
		c := v1.NewIDServiceClient(stockAt(b, st.addr))
		b.Run("stack="+st.name+"/rpc=next", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Next(ctx, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run("stack="+st.name+"/rpc=ping", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Ping(ctx, &v1.PingRequest{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
