package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// The standard gRPC health service (grpc.health.v1.Health), so that grpc_health_probe and
// Kubernetes gRPC probes work on the same port: served by grpc-go to gRPC clients and through
// Connect to the rest. The overall service ("") and idkit.v1.IDService are SERVING while the
// server is ready (see /readyz) and NOT_SERVING otherwise, with the reason /readyz gives in the
// response header idkit-not-ready of Check (the health message has no field for it);
// idkit.v1.IDService/NAME is the same for generator NAME alone (a generator that cannot issue,
// such as a segment whose stores refuse or are down, makes it and the server NOT_SERVING);
// List gives them all at once, and Watch (watch.go) streams the changes. On a server with tokens the
// health service, /healthz and /readyz are open, but only a caller with a token is told the
// reason (it names generators, lease stores and other hosts); the rest see the status, and
// the log has the reason.
const healthPath = "/grpc.health.v1.Health/"

// notReadyHeader carries the reason of a NOT_SERVING health answer.
const notReadyHeader = "idkit-not-ready"

// headerText makes err's text fit an HTTP header and gRPC metadata (printable ASCII), at most
// 1 KiB of it.
func headerText(err error) string {
	b := []byte(idkit.Redact(err.Error()))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	if len(b) > 1024 {
		b = append(b[:1021], "..."...)
	}
	return string(b)
}

// mayKnow reports whether a caller with this Authorization header may be told why the server
// is not ready: any caller when the server has no tokens, else one with a token.
func (s *Server) mayKnow(auth string) bool {
	return len(s.cfg.Tokens) == 0 || tokenOK(auth, s.cfg.Tokens)
}

// generatorService prefixes the health service name of one generator:
// "idkit.v1.IDService/NAME" is SERVING while the server is up and generator NAME can issue
// IDs, whatever the other generators do ("" and idkit.v1.IDService need them all).
const generatorService = "idkit.v1.IDService/"

// healthOf is why a health service name is not SERVING (nil when it is), or ok false for a
// name the health service does not know.
func (s *Server) healthOf(service string) (notReady error, ok bool) {
	switch {
	case service == "" || service == "idkit.v1.IDService":
		return s.ready(), true
	case strings.HasPrefix(service, generatorService):
		if g := s.gens[service[len(generatorService):]]; g != nil {
			return s.readyFor(g), true
		}
	}
	return nil, false
}

// health answers a health check for one service name.
func (s *Server) health(req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	notReady, ok := s.healthOf(req.GetService())
	if !ok {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown service %q (known: \"\", idkit.v1.IDService and %sNAME for each generator: %s)", cut(req.GetService()), generatorService, s.names()))
	}
	st := healthpb.HealthCheckResponse_SERVING
	if notReady != nil {
		st = healthpb.HealthCheckResponse_NOT_SERVING
	}
	return &healthpb.HealthCheckResponse{Status: st}, nil
}

// healthServices are the service names the health service knows, as List reports them: the
// server's and each generator's.
func (s *Server) healthServices() []string {
	names := []string{"", "idkit.v1.IDService"}
	for _, g := range s.order {
		names = append(names, generatorService+g.name)
	}
	return names
}

// healthList answers List: every known service's status, a snapshot.
func (s *Server) healthList() *healthpb.HealthListResponse {
	services := s.healthServices()
	out := &healthpb.HealthListResponse{Statuses: make(map[string]*healthpb.HealthCheckResponse, len(services))}
	for _, name := range services {
		res, err := s.health(&healthpb.HealthCheckRequest{Service: name})
		if err == nil {
			out.Statuses[name] = res
		}
	}
	return out
}

// newHealthHandlers returns the health service's Connect handlers by path.
func newHealthHandlers(s *Server, opts ...connect.HandlerOption) map[string]http.Handler {
	check := connect.NewUnaryHandler(healthPath+"Check", func(_ context.Context, req *connect.Request[healthpb.HealthCheckRequest]) (*connect.Response[healthpb.HealthCheckResponse], error) {
		msg, err := s.health(req.Msg)
		if err != nil {
			return nil, err
		}
		res := connect.NewResponse(msg)
		if err, _ := s.healthOf(req.Msg.GetService()); err != nil && msg.Status != healthpb.HealthCheckResponse_SERVING && s.mayKnow(req.Header().Get("Authorization")) {
			res.Header().Set(notReadyHeader, headerText(err))
		}
		return res, nil
	}, opts...)
	watch := connect.NewServerStreamHandlerSimple(healthPath+"Watch", func(ctx context.Context, req *healthpb.HealthCheckRequest, st *connect.ServerStream[healthpb.HealthCheckResponse]) error {
		return s.watchHealth(ctx, req, st.Send)
	}, opts...)
	list := connect.NewUnaryHandler(healthPath+"List", func(context.Context, *connect.Request[healthpb.HealthListRequest]) (*connect.Response[healthpb.HealthListResponse], error) {
		return connect.NewResponse(s.healthList()), nil
	}, opts...)
	return map[string]http.Handler{healthPath + "Check": check, healthPath + "List": list, healthPath + "Watch": watch}
}
