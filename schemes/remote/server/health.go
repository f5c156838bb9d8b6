package server

import (
	"context"
	"fmt"
	"net/http"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// The standard gRPC health service (grpc.health.v1.Health), so that grpc_health_probe and
// Kubernetes gRPC probes work on the same port: served by grpc-go to gRPC clients and through
// Connect to the rest. The overall service ("") and idkit.v1.IDService are SERVING while the
// server is ready (see /readyz) and NOT_SERVING otherwise; Watch (watch.go) streams changes.
const healthPath = "/grpc.health.v1.Health/"

// health answers a health check for one service name.
func (s *Server) health(req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	switch req.GetService() {
	case "", "idkit.v1.IDService":
	default:
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown service %q (known: \"\", idkit.v1.IDService)", cut(req.GetService())))
	}
	st := healthpb.HealthCheckResponse_SERVING
	if s.ready() != nil {
		st = healthpb.HealthCheckResponse_NOT_SERVING
	}
	return &healthpb.HealthCheckResponse{Status: st}, nil
}

func newHealthHandler(s *Server, opts ...connect.HandlerOption) (string, http.Handler) {
	check := connect.NewUnaryHandlerSimple(healthPath+"Check", func(_ context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
		return s.health(req)
	}, opts...)
	watch := connect.NewServerStreamHandlerSimple(healthPath+"Watch", func(ctx context.Context, req *healthpb.HealthCheckRequest, st *connect.ServerStream[healthpb.HealthCheckResponse]) error {
		return s.watchHealth(ctx, req, st.Send)
	}, opts...)
	mux := http.NewServeMux()
	mux.Handle(healthPath+"Check", check)
	mux.Handle(healthPath+"Watch", watch)
	return healthPath, mux
}
