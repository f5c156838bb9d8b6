package server

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// grpcServer builds the grpc-go server that answers the gRPC connections Serve receives (see
// split.go): the same RPCs, limits, tokens and metrics as the Connect handler, which still
// answers gRPC on Handler for servers that embed it.
func (s *Server) grpcServer() *grpc.Server {
	gs := grpc.NewServer(
		grpc.MaxRecvMsgSize(s.cfg.MaxRequestBytes),
		grpc.MaxHeaderListSize(uint32(s.cfg.MaxRequestBytes)),
		grpc.ConnectionTimeout(s.cfg.ReadHeaderTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: s.cfg.IdleTimeout}),
		grpc.InTapHandle(s.grpcAuth),
		grpc.UnaryInterceptor(s.grpcObserve),
		// Long-lived workers instead of a goroutine per request: a new goroutine's stack grows
		// (copied, ~2 µs) on the way down to the generator on every request.
		grpc.NumStreamWorkers(uint32(4*runtime.GOMAXPROCS(0))),
	)
	register(gs, &v1.IDService_ServiceDesc, grpcService{s: s})
	register(gs, &healthpb.Health_ServiceDesc, grpcHealth{s: s})
	return gs
}

// register registers a service whose methods answer a request they cannot unmarshal with
// INVALID_ARGUMENT, as Connect does: grpc-go itself says INTERNAL, which blames the server for
// the client's bytes.
func register(gs *grpc.Server, desc *grpc.ServiceDesc, impl any) {
	d := *desc
	d.Methods = slices.Clone(d.Methods)
	for i := range d.Methods {
		h := d.Methods[i].Handler
		d.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			return h(srv, ctx, func(m any) error {
				err := dec(m)
				if st, ok := status.FromError(err); ok && st.Code() == codes.Internal {
					return status.Error(codes.InvalidArgument, st.Message())
				}
				return err
			}, icpt)
		}
	}
	gs.RegisterService(&d, impl)
}

// grpcAuth refuses a gRPC request without a valid bearer token before its message is read;
// the health service stays open for probes, as on the HTTP side.
func (s *Server) grpcAuth(ctx context.Context, info *tap.Info) (context.Context, error) {
	if len(s.cfg.Tokens) == 0 || strings.HasPrefix(info.FullMethodName, healthPath) {
		return ctx, nil
	}
	var auth string
	if v := info.Header.Get("authorization"); len(v) > 0 {
		auth = v[0]
	}
	if !s.tokenOK(auth) {
		return nil, status.Error(codes.Unauthenticated, unauthenticatedMsg)
	}
	return ctx, nil
}

// idServicePrefix starts the full method name of every IDService RPC, built once rather than
// on every request.
var idServicePrefix = "/" + v1.IDService_ServiceDesc.ServiceName + "/"

// grpcObserve times the IDService RPCs into idkit_request_duration_seconds, as the Connect
// interceptor does.
func (s *Server) grpcObserve(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	res, err := handler(ctx, req)
	if m, ok := strings.CutPrefix(info.FullMethod, idServicePrefix); ok {
		s.m.observe(m, connect.Code(status.Code(err)), start)
	}
	return res, err
}

// grpcService is the IDService for grpc-go.
type grpcService struct {
	v1.UnimplementedIDServiceServer
	s *Server
}

func (x grpcService) Next(ctx context.Context, req *v1.NextRequest) (*v1.NextResponse, error) {
	return grpcResult(x.s.nextIDs(ctx, req))
}

func (x grpcService) Decode(_ context.Context, req *v1.DecodeRequest) (*v1.DecodeResponse, error) {
	return grpcResult(x.s.decode(req))
}

func (x grpcService) Generators(context.Context, *v1.GeneratorsRequest) (*v1.GeneratorsResponse, error) {
	return x.s.generators(), nil
}

func (x grpcService) Ping(context.Context, *v1.PingRequest) (*v1.PingResponse, error) {
	return &v1.PingResponse{}, nil
}

// grpcHealth is grpc.health.v1.Health for grpc-go; Watch stays unimplemented.
type grpcHealth struct {
	healthpb.UnimplementedHealthServer
	s *Server
}

func (h grpcHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	msg, err := h.s.health(req)
	if err == nil && msg.Status != healthpb.HealthCheckResponse_SERVING {
		if why := h.s.ready(); why != nil {
			_ = grpc.SetHeader(ctx, metadata.Pairs(notReadyHeader, headerText(why)))
		}
	}
	return grpcResult(msg, err)
}

// grpcResult turns an RPC's *connect.Error into the gRPC status with the same code and message.
func grpcResult[T any](msg *T, err error) (*T, error) {
	if err == nil {
		return msg, nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return nil, status.Error(codes.Code(ce.Code()), ce.Message())
	}
	return nil, status.Error(codes.Code(codeOf(err)), err.Error())
}
