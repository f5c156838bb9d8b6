package server

import (
	"context"
	"crypto/tls"
	"errors"
	"runtime"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/gzip" // registers gzip: requests may be compressed
	protoenc "google.golang.org/grpc/encoding/proto"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"
)

// grpcServer builds the grpc-go server of Config.GRPCListen: the same RPCs, limits, tokens,
// metrics and health as the Connect handler, over grpc-go's own HTTP/2 transport.
func (s *Server) grpcServer(tlsCfg *tls.Config) *grpc.Server {
	creds := insecure.NewCredentials()
	if tlsCfg != nil {
		c := tlsCfg.Clone()
		c.NextProtos = []string{"h2"}
		creds = credentials.NewTLS(c)
	}
	gs := grpc.NewServer(
		grpc.Creds(budgetCreds{TransportCredentials: creds, limit: int64(s.cfg.MaxConnBytes)}),
		grpc.ForceServerCodecV2(heldCodec{proto: encoding.GetCodecV2(protoenc.Name)}),
		grpc.MaxRecvMsgSize(s.cfg.MaxRequestBytes),
		grpc.MaxHeaderListSize(uint32(s.cfg.MaxRequestBytes)),
		grpc.MaxConcurrentStreams(uint32(s.cfg.MaxStreams)),
		grpc.StaticStreamWindowSize(recvWindow),
		grpc.StaticConnWindowSize(recvConnWindow),
		grpc.ConnectionTimeout(s.cfg.ReadHeaderTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: s.cfg.IdleTimeout}),
		grpc.InTapHandle(s.grpcAuth),
		grpc.UnaryInterceptor(s.grpcObserve),
		grpc.StreamInterceptor(s.grpcStreamCompression),
		// Long-lived workers instead of a goroutine per request: a new goroutine's stack grows
		// (copied, ~2 µs) on the way down to the generator on every request.
		grpc.NumStreamWorkers(uint32(4*runtime.GOMAXPROCS(0))),
	)
	ids := v1.IDService_ServiceDesc
	ids.Methods = slices.Clone(ids.Methods)
	for i := range ids.Methods {
		if ids.Methods[i].MethodName == "Next" {
			ids.Methods[i].Handler = s.grpcNextHandler
		}
	}
	register(gs, &ids, grpcService{s: s})
	register(gs, &healthpb.Health_ServiceDesc, grpcHealth{s: s})
	reflection.Register(gs) // v1 and v1alpha, listing the services above and itself
	return gs
}

// grpcNextHandler is IDService.Next for grpc-go. Unlike the generated handler it may return a
// *heldResponse, an answer counted against its connection's budget until grpc-go has written
// it (see heldCodec).
func (s *Server) grpcNextHandler(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
	in := new(v1.NextRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	h := func(ctx context.Context, req any) (any, error) {
		b := grpcBudget(ctx)
		res, n, err := s.nextIDs(ctx, req.(*v1.NextRequest), b)
		if err != nil {
			return nil, grpcError(err)
		}
		if n > 0 {
			return &heldResponse{msg: res, b: b, n: n}, nil
		}
		return res, nil
	}
	if icpt == nil {
		return h(ctx, in)
	}
	return icpt(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: v1.IDService_Next_FullMethodName}, h)
}

// heldResponse is a Next answer whose bytes its connection's budget counts.
type heldResponse struct {
	msg *v1.NextResponse
	b   *connBudget
	n   int64
}

// heldCodec is grpc-go's protobuf codec, except that it gives back a heldResponse's budget:
// what the encoding does not need at once, and the rest when grpc-go frees the encoded bytes,
// which it does once they are written to the connection or dropped with their stream. The
// encoding gets a buffer of its exact size, not one from grpc-go's pool, whose size classes
// would hand a 110 KB answer a 1 MiB buffer to hold while the client does not read.
type heldCodec struct{ proto encoding.CodecV2 }

func (c heldCodec) Marshal(v any) (mem.BufferSlice, error) {
	h, ok := v.(*heldResponse)
	if !ok {
		return c.proto.Marshal(v)
	}
	size := proto.Size(h.msg)
	if mem.IsBelowBufferPoolingThreshold(size) {
		h.b.release(h.n)
		return c.proto.Marshal(h.msg)
	}
	out, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(make([]byte, 0, size), h.msg)
	if err != nil {
		h.b.release(h.n)
		return nil, err
	}
	keep := min(int64(cap(out)), h.n)
	h.b.release(h.n - keep)
	return mem.BufferSlice{mem.NewBuffer(&out, &releaseOnFree{b: h.b, n: keep})}, nil
}

// Unmarshal says which message a request should have been when it is not one (decodeError).
func (c heldCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.proto.Unmarshal(data, v)
	if m, ok := v.(proto.Message); ok && err != nil {
		return decodeError(m, "protobuf binary", err)
	}
	return err
}

func (c heldCodec) Name() string { return c.proto.Name() }

// releaseOnFree is the mem.BufferPool of one encoded answer: grpc-go puts the buffer back when
// it is done with it, which gives the answer's bytes back to its connection's budget (the
// buffer itself is left to the garbage collector).
type releaseOnFree struct {
	b *connBudget
	n int64
}

func (r *releaseOnFree) Get(length int) *[]byte {
	b := make([]byte, length)
	return &b
}

func (r *releaseOnFree) Put(*[]byte) { r.b.release(r.n) }

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
// the health and reflection services stay open, as on the HTTP side (openPaths).
func (s *Server) grpcAuth(ctx context.Context, info *tap.Info) (context.Context, error) {
	if len(s.cfg.Tokens) == 0 || openPaths[info.FullMethodName] {
		return ctx, nil
	}
	var auth string
	if v := info.Header.Get("authorization"); len(v) > 0 {
		auth = v[0]
	}
	if !tokenOK(auth, s.cfg.Tokens) {
		return nil, status.Error(codes.Unauthenticated, unauthenticatedMsg)
	}
	return ctx, nil
}

// idServicePrefix starts the full method name of every IDService RPC, built once rather than
// on every request.
var idServicePrefix = "/" + v1.IDService_ServiceDesc.ServiceName + "/"

// noStoreMD marks an answer as not to be stored, as every answer on net/http is.
var noStoreMD = metadata.Pairs("cache-control", "no-store")

// grpcObserve times the IDService RPCs into idkit_request_duration_seconds, as the Connect
// interceptor does, and marks their answers not to be stored.
func (s *Server) grpcObserve(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	m, ids := strings.CutPrefix(info.FullMethod, idServicePrefix)
	if ids {
		grpc.SetHeader(ctx, noStoreMD)
	}
	s.sendCompression(ctx)
	res, err := handler(ctx, req)
	if ids {
		s.m.observe(m, connect.Code(status.Code(err)), start)
	}
	return res, err
}

// sendCompression picks how grpc-go compresses an answer. It would answer a gzip request with
// gzip, whatever the answer's size; idkitd answers uncompressed unless Config.CompressResponses
// is set, and then compresses for every client that accepts gzip.
func (s *Server) sendCompression(ctx context.Context) {
	if s.cfg.CompressResponses {
		_ = grpc.SetSendCompressor(ctx, gzip.Name) // refused for a client that does not take gzip
		return
	}
	// grpc-go's stream says how the request came; only a compressed one needs telling, which
	// saves a grpc-encoding header on every other answer.
	if st, ok := grpc.ServerTransportStreamFromContext(ctx).(interface{ RecvCompress() string }); ok {
		if rc := st.RecvCompress(); rc == "" || rc == encoding.Identity {
			return
		}
	}
	_ = grpc.SetSendCompressor(ctx, encoding.Identity)
}

// grpcStreamCompression applies sendCompression to the streams (health Watch, reflection).
func (s *Server) grpcStreamCompression(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	s.sendCompression(ss.Context())
	return handler(srv, ss)
}

// grpcService is the IDService for grpc-go.
type grpcService struct {
	v1.UnimplementedIDServiceServer
	s *Server
}

func (x grpcService) Decode(_ context.Context, req *v1.DecodeRequest) (*v1.DecodeResponse, error) {
	return grpcResult(x.s.decode(req))
}

func (x grpcService) Bounds(_ context.Context, req *v1.BoundsRequest) (*v1.BoundsResponse, error) {
	return grpcResult(x.s.bounds(req))
}

func (x grpcService) Generators(context.Context, *v1.GeneratorsRequest) (*v1.GeneratorsResponse, error) {
	return x.s.generators(), nil
}

func (x grpcService) Ping(context.Context, *v1.PingRequest) (*v1.PingResponse, error) {
	return &v1.PingResponse{}, nil
}

// grpcHealth is grpc.health.v1.Health for grpc-go.
type grpcHealth struct {
	healthpb.UnimplementedHealthServer
	s *Server
}

func (h grpcHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	msg, err := h.s.health(req)
	if err == nil && msg.Status != healthpb.HealthCheckResponse_SERVING {
		var auth string
		if md, ok := metadata.FromIncomingContext(ctx); ok {
			if v := md.Get("authorization"); len(v) > 0 {
				auth = v[0]
			}
		}
		if why := h.s.ready(); why != nil && h.s.mayKnow(auth) {
			_ = grpc.SetHeader(ctx, metadata.Pairs(notReadyHeader, headerText(why)))
		}
	}
	return grpcResult(msg, err)
}

func (h grpcHealth) List(context.Context, *healthpb.HealthListRequest) (*healthpb.HealthListResponse, error) {
	return h.s.healthList(), nil
}

func (h grpcHealth) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	return grpcError(h.s.watchHealth(stream.Context(), req, stream.Send))
}

// grpcResult turns an RPC's *connect.Error into the gRPC status with the same code and message.
func grpcResult[T any](msg *T, err error) (*T, error) {
	if err != nil {
		return nil, grpcError(err)
	}
	return msg, nil
}

// grpcError is the gRPC status of an RPC's error: a *connect.Error's code and message, or the
// code codeOf gives, with any credential in the message redacted.
func grpcError(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return status.Error(codes.Code(ce.Code()), idkit.Redact(ce.Message()))
	}
	return status.Error(codes.Code(codeOf(err)), idkit.Redact(err.Error()))
}
