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
	"google.golang.org/protobuf/protoadapt"
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
		grpc.Creds(budgetCreds{TransportCredentials: creds}),
		grpc.ForceServerCodecV2(heldCodec{proto: encoding.GetCodecV2(protoenc.Name)}),
		grpc.MaxRecvMsgSize(s.cfg.MaxRequestBytes),
		grpc.MaxHeaderListSize(uint32(s.cfg.MaxRequestBytes)),
		grpc.MaxConcurrentStreams(uint32(s.cfg.MaxStreams)),
		grpc.StaticStreamWindowSize(recvWindow),
		grpc.StaticConnWindowSize(recvConnWindow),
		grpc.ConnectionTimeout(s.cfg.ReadHeaderTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: s.cfg.IdleTimeout}),
		grpc.InTapHandle(s.grpcAdmit),
		grpc.UnaryInterceptor(s.grpcObserve),
		grpc.StreamInterceptor(s.grpcStream),
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

// heldResponse is an answer that is tracked until grpc-go has written it: its bytes counted
// against its connection's budget (Next), its place among the connection's pending answers
// (watchStalls) and its stream's slots under the server-wide bounds.
type heldResponse struct {
	msg proto.Message
	b   *connBudget
	n   int64
	st  *connState
	t   *ticket
}

// heldCodec is grpc-go's protobuf codec, except that it tracks a heldResponse until it is
// written: it gives back what the encoding does not need of the budget at once, and the rest,
// the answer's pending mark and its stream's ticket when grpc-go frees the encoded bytes,
// which it does once they are written to the connection or dropped with their stream (or,
// failing that, when the connection closes). The encoding gets a buffer of its exact size (at
// least the size grpc-go hands back to its pool), not one from grpc-go's pool, whose size
// classes would hand a 110 KB answer a 1 MiB buffer to hold while the client does not read.
type heldCodec struct{ proto encoding.CodecV2 }

func (c heldCodec) Marshal(v any) (mem.BufferSlice, error) {
	h, ok := v.(*heldResponse)
	if !ok {
		return c.proto.Marshal(v)
	}
	size := proto.Size(h.msg)
	out, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(make([]byte, 0, max(size, pooledSize)), h.msg)
	if err != nil {
		h.b.release(h.n)
		return nil, err
	}
	keep := min(int64(cap(out)), h.n)
	h.b.release(h.n - keep)
	a := &answerBuf{st: h.st}
	a.start = time.Now()
	b, t := h.b, h.t
	t.ref()
	a.done = func() {
		b.release(keep)
		t.unref()
	}
	if !h.st.track(&a.answer) {
		a.finish(h.st) // the connection is gone: nothing will be written
	}
	return mem.BufferSlice{mem.NewBuffer(&out, a)}, nil
}

// pooledSize is the smallest buffer mem.NewBuffer hands back to its pool (calling Put, which
// is how heldCodec learns it was written) rather than leaving to the garbage collector.
const pooledSize = 1<<10 + 1

// Unmarshal says which message a request should have been when it is not one (decodeError).
func (c heldCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.proto.Unmarshal(data, v)
	if m, ok := v.(proto.Message); ok && err != nil {
		return decodeError(m, "protobuf binary", err)
	}
	return err
}

func (c heldCodec) Name() string { return c.proto.Name() }

// answerBuf is the mem.BufferPool of one encoded answer: grpc-go puts the buffer back when it
// is done with it, which gives back what the answer held (the buffer itself is left to the
// garbage collector).
type answerBuf struct {
	answer
	st *connState
}

func (a *answerBuf) Get(length int) *[]byte {
	b := make([]byte, length)
	return &b
}

func (a *answerBuf) Put(*[]byte) { a.finish(a.st) }

// track makes an answer of the stream ctx belongs to a heldResponse, so that heldCodec tracks
// it until it is written.
func (s *Server) track(ctx context.Context, res any) any {
	t, _ := ctx.Value(ticketKey{}).(*ticket)
	st := grpcState(ctx)
	if t == nil && st == nil {
		return res
	}
	h, ok := res.(*heldResponse)
	if !ok {
		m, ok := res.(proto.Message)
		if !ok {
			return res
		}
		h = &heldResponse{msg: m}
	}
	h.st, h.t = st, t
	return h
}

// ticketKey is the context key of a grpc-go stream's *ticket.
type ticketKey struct{}

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
				bodyRead(ctx)
				if st, ok := status.FromError(err); ok && st.Code() == codes.Internal {
					return status.Error(codes.InvalidArgument, st.Message())
				}
				return err
			}, icpt)
		}
	}
	gs.RegisterService(&d, impl)
}

// grpcAdmit refuses a gRPC request without a valid bearer token before its message is read
// (the health and reflection services stay open, as on the HTTP side: openPaths), and one over
// a server-wide bound (limits.go) with UNAVAILABLE; both answers are headers alone. The slots
// it takes are given back once the stream is over and its answers are written.
func (s *Server) grpcAdmit(ctx context.Context, info *tap.Info) (context.Context, error) {
	open := false
	if len(s.cfg.Tokens) > 0 {
		var auth string
		if v := info.Header.Get("authorization"); len(v) > 0 {
			auth = v[0]
		}
		authed := tokenOK(auth, s.cfg.Tokens)
		if authed {
			s.lim.proven(grpcState(ctx))
		}
		if !authed {
			if !openPaths[info.FullMethodName] {
				return nil, status.Error(codes.Unauthenticated, unauthenticatedMsg)
			}
			open = true
		}
	}
	st := grpcState(ctx)
	t := s.lim.admit(st, !open, open && longStream(info.FullMethodName), probePaths[info.FullMethodName])
	if t == nil {
		if open && st != nil {
			st.conn.Close() // as limits.refuse does
		}
		return nil, status.Error(codes.Unavailable, busyMsg)
	}
	// A request whose body has not come within BodyTimeout ends: its context is cancelled,
	// which fails the read its handler waits in (bodyRead stops the timer once it has come;
	// release, once the stream is over).
	bctx, cancel := context.WithCancel(ctx)
	t.body = time.AfterFunc(s.cfg.BodyTimeout, cancel)
	context.AfterFunc(ctx, t.unref) // grpc-go ends the stream's context when the stream is over
	return context.WithValue(bctx, ticketKey{}, t), nil
}

// bodyRead notes that the request of the grpc-go stream ctx belongs to has come: its body
// deadline no longer applies.
func bodyRead(ctx context.Context) {
	if t, _ := ctx.Value(ticketKey{}).(*ticket); t != nil && t.body != nil {
		t.body.Stop()
	}
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
	if err != nil {
		return res, err
	}
	return s.track(ctx, res), nil
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

// grpcStream applies sendCompression to the streams (health Watch, reflection) and tracks
// their answers as grpcObserve tracks the unary ones.
func (s *Server) grpcStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	s.sendCompression(ss.Context())
	return handler(srv, trackedStream{ServerStream: ss, s: s, one: !info.IsClientStream})
}

// trackedStream is a server stream whose messages heldCodec tracks.
type trackedStream struct {
	grpc.ServerStream
	s   *Server
	one bool // the client sends one message (health Watch): its body has come once it is read
}

func (t trackedStream) RecvMsg(m any) error {
	err := t.ServerStream.RecvMsg(m)
	if t.one {
		bodyRead(t.Context())
	}
	return err
}

func (t trackedStream) SendMsg(m any) error {
	return t.ServerStream.SendMsg(t.s.track(t.Context(), m))
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
		if why, _ := h.s.healthOf(req.GetService()); why != nil && h.s.mayKnow(auth) {
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
		st := status.New(codes.Code(ce.Code()), idkit.Redact(ce.Message()))
		for _, d := range ce.Details() { // a retry hint (RetryInfo)
			if m, err := d.Value(); err == nil {
				if withD, err := st.WithDetails(protoadapt.MessageV1Of(m)); err == nil {
					st = withD
				}
			}
		}
		return st.Err()
	}
	return status.Error(codes.Code(codeOf(err)), idkit.Redact(err.Error()))
}
