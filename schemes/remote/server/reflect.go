package server

import (
	"context"
	"errors"
	"io"
	"net/http"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	reflectv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
)

// gRPC server reflection (grpc.reflection.v1 and the older v1alpha that many tools still ask
// for), so that grpcurl, grpcui, Postman, Evans and ghz call the service without its .proto.
// Both listeners answer it with grpc-go's own implementation: grpc-go registers it beside the
// services; on net/http a Connect bidi-stream handler runs the same implementation, so both
// stacks give the same answers. Reflection needs HTTP/2 (it is a bidi stream). It is open on
// a server with tokens, like the health service: it describes only idkit.proto and the public
// health and reflection protos, never a generator or the server's state, and tools resolve
// every method through it, the open health methods too (grpcurl cannot call Health/Check
// without it; ghz would need the token twice, in --metadata and --reflect-metadata).

// reflectedServices are the services the main listener serves over gRPC, as reflection lists
// them.
var reflectedServices = map[string]grpc.ServiceInfo{
	v1.IDService_ServiceDesc.ServiceName:                    {},
	healthpb.Health_ServiceDesc.ServiceName:                 {},
	reflectv1.ServerReflection_ServiceDesc.ServiceName:      {},
	reflectv1alpha.ServerReflection_ServiceDesc.ServiceName: {},
}

// serviceList is the reflection.ServiceInfoProvider of the main listener.
type serviceList map[string]grpc.ServiceInfo

func (l serviceList) GetServiceInfo() map[string]grpc.ServiceInfo { return l }

// newReflectHandlers returns the reflection services' Connect handlers by path.
func newReflectHandlers(opts ...connect.HandlerOption) map[string]http.Handler {
	ro := reflection.ServerOptions{Services: serviceList(reflectedServices)}
	v1srv := reflection.NewServerV1(ro)
	alpha := reflection.NewServer(ro)
	return map[string]http.Handler{
		reflectv1.ServerReflection_ServerReflectionInfo_FullMethodName: connect.NewBidiStreamHandler(reflectv1.ServerReflection_ServerReflectionInfo_FullMethodName,
			func(ctx context.Context, st *connect.BidiStream[reflectv1.ServerReflectionRequest, reflectv1.ServerReflectionResponse]) error {
				return v1srv.ServerReflectionInfo(bidiAdapter[reflectv1.ServerReflectionRequest, reflectv1.ServerReflectionResponse]{ctx: ctx, st: st})
			}, opts...),
		reflectv1alpha.ServerReflection_ServerReflectionInfo_FullMethodName: connect.NewBidiStreamHandler(reflectv1alpha.ServerReflection_ServerReflectionInfo_FullMethodName,
			func(ctx context.Context, st *connect.BidiStream[reflectv1alpha.ServerReflectionRequest, reflectv1alpha.ServerReflectionResponse]) error {
				return alpha.ServerReflectionInfo(bidiAdapter[reflectv1alpha.ServerReflectionRequest, reflectv1alpha.ServerReflectionResponse]{ctx: ctx, st: st})
			}, opts...),
	}
}

// bidiAdapter lets grpc-go's reflection implementation run on a Connect bidi stream. The
// implementation only receives, sends and reads the context; headers and trailers set
// through it go to the Connect stream's.
type bidiAdapter[Req, Res any] struct {
	ctx context.Context
	st  *connect.BidiStream[Req, Res]
}

var _ grpc.BidiStreamingServer[reflectv1.ServerReflectionRequest, reflectv1.ServerReflectionResponse] = bidiAdapter[reflectv1.ServerReflectionRequest, reflectv1.ServerReflectionResponse]{}

// Recv returns io.EOF itself at the end of the client's messages (Connect wraps it), which
// grpc-go's implementation compares with ==.
func (a bidiAdapter[Req, Res]) Recv() (*Req, error) {
	m, err := a.st.Receive()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	return m, err
}

func (a bidiAdapter[Req, Res]) Send(m *Res) error { return a.st.Send(m) }

func (a bidiAdapter[Req, Res]) Context() context.Context { return a.ctx }

func (a bidiAdapter[Req, Res]) SetHeader(md metadata.MD) error {
	for k, vs := range md {
		for _, v := range vs {
			a.st.ResponseHeader().Add(k, v)
		}
	}
	return nil
}

func (a bidiAdapter[Req, Res]) SendHeader(md metadata.MD) error {
	a.SetHeader(md)
	return a.st.Send(nil) // sends the headers alone
}

func (a bidiAdapter[Req, Res]) SetTrailer(md metadata.MD) {
	for k, vs := range md {
		for _, v := range vs {
			a.st.ResponseTrailer().Add(k, v)
		}
	}
}

func (a bidiAdapter[Req, Res]) SendMsg(m any) error { return a.st.Send(m.(*Res)) }

func (a bidiAdapter[Req, Res]) RecvMsg(m any) error {
	got, err := a.Recv()
	if err != nil {
		return err
	}
	dst := m.(proto.Message)
	proto.Reset(dst)
	proto.Merge(dst, any(got).(proto.Message))
	return nil
}
