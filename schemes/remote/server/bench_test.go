package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
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

// BenchmarkProtocols is issue 28's service targets as a benchmark: single-ID Next over each
// protocol of the main port through a real loopback listener, with 4×GOMAXPROCS parallel
// callers on one connection (HTTP/1.1: one each), beside the stock gRPC client on the grpc-go
// port they are compared with, and Ping on the main port's HTTP/2 (the empty message: what
// the stack costs without the service). Client and server share the process, as in idbench
// load --spawn; docs/bench/http-profile.sh profiles the server alone.
//
//	go test -run '^$' -bench Protocols -cpuprofile cpu.out ./schemes/remote/server/
func BenchmarkProtocols(b *testing.B) {
	r := start(b, server.Config{Generators: []server.Generator{{Name: "orders", Spec: "snowflake:layout=twitter,worker=1"}}})
	ctx := context.Background()
	req := &v1.NextRequest{Generator: "orders", Count: 1}
	run := func(b *testing.B, call func() error) {
		b.ReportAllocs()
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := call(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	stock := v1.NewIDServiceClient(stockAt(b, r.grpc))
	b.Run("protocol=grpc/stack=grpc-go", func(b *testing.B) {
		run(b, func() error { _, err := stock.Next(ctx, req); return err })
	})
	for _, p := range []struct {
		name string
		opts []connect.ClientOption
	}{{"connect", nil}, {"grpc-web", []connect.ClientOption{connect.WithGRPCWeb()}}} {
		c := idkitv1connect.NewIDServiceClient(h2(), r.url, p.opts...)
		b.Run("protocol="+p.name+"/stack=net-http", func(b *testing.B) {
			run(b, func() error { _, err := c.Next(ctx, connect.NewRequest(req)); return err })
		})
	}
	c := idkitv1connect.NewIDServiceClient(h2(), r.url)
	b.Run("protocol=connect/stack=net-http/rpc=ping", func(b *testing.B) {
		run(b, func() error { _, err := c.Ping(ctx, connect.NewRequest(&v1.PingRequest{})); return err })
	})
	url := r.url + "/v1/next/orders"
	b.Run("protocol=http-get/stack=net-http", func(b *testing.B) {
		run(b, func() error {
			res, err := r.client.Get(url)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if err == nil && res.StatusCode != http.StatusOK {
				err = fmt.Errorf("GET %s: %s", url, res.Status)
			}
			return err
		})
	})
}
