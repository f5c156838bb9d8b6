package server

import (
	"context"
	"errors"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// errShuttingDown ends the health Watch streams when the server stops accepting: a stream left
// open would hold the drain.
var errShuttingDown = errors.New("server shutting down")

// watchHealth is grpc.health.v1.Health/Watch on both stacks: it sends the service's status
// now and again whenever it changes (readiness is looked at when the server begins shutting
// down and when a generator's fence changes), until the client goes or the server stops
// accepting. grpc-go's client-side health checking (healthCheckConfig) uses it to take a
// server out of its round robin while the server still serves. An unknown service name gets
// SERVICE_UNKNOWN and the stream stays open, as the protocol asks.
func (s *Server) watchHealth(ctx context.Context, req *healthpb.HealthCheckRequest, send func(*healthpb.HealthCheckResponse) error) error {
	last := healthpb.HealthCheckResponse_ServingStatus(-1)
	for {
		changed := s.readyWait() // before reading the status, so that no change is missed
		st := healthpb.HealthCheckResponse_SERVICE_UNKNOWN
		if res, err := s.health(req); err == nil {
			st = res.Status
		}
		if st != last {
			if err := send(&healthpb.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			last = st
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.endWatches:
			return connect.NewError(connect.CodeUnavailable, errShuttingDown)
		}
	}
}
