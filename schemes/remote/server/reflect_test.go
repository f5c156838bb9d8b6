package server_test

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/bearer"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// wantServices are the services both listeners list through reflection.
var wantServices = []string{
	"grpc.health.v1.Health",
	"grpc.reflection.v1.ServerReflection",
	"grpc.reflection.v1alpha.ServerReflection",
	"idkit.v1.IDService",
}

// TestReflection asks both stacks, through grpc-go's reflection client, for their services,
// then for the file that defines each method of each, as grpcurl does without a .proto; and
// lists the services through the older v1alpha, which many tools still use.
func TestReflection(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	for _, st := range stacks(r) {
		t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cc := stockAt(t, st.addr)
			stream, err := reflectv1.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sent := map[string][]byte{} // every file reflection sent on this stream, by name
			files := func(raw [][]byte) *protoregistry.Files {
				t.Helper()
				for _, b := range raw {
					fd := new(descriptorpb.FileDescriptorProto)
					if err := proto.Unmarshal(b, fd); err != nil {
						t.Fatal(err)
					}
					sent[fd.GetName()] = b
				}
				var all [][]byte
				for _, b := range sent {
					all = append(all, b)
				}
				return fileSet(t, all)
			}
			ask := func(req *reflectv1.ServerReflectionRequest) *reflectv1.ServerReflectionResponse {
				t.Helper()
				if err := stream.Send(req); err != nil {
					t.Fatal(err)
				}
				res, err := stream.Recv()
				if err != nil {
					t.Fatal(err)
				}
				if e := res.GetErrorResponse(); e != nil {
					t.Fatalf("%v: error %d %s", req, e.ErrorCode, e.ErrorMessage)
				}
				return res
			}
			var names []string
			for _, s := range ask(&reflectv1.ServerReflectionRequest{MessageRequest: &reflectv1.ServerReflectionRequest_ListServices{}}).GetListServicesResponse().GetService() {
				names = append(names, s.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, wantServices) {
				t.Fatalf("services %v, want %v", names, wantServices)
			}
			methods := 0
			for _, svc := range names {
				res := ask(&reflectv1.ServerReflectionRequest{MessageRequest: &reflectv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: svc}})
				d, err := files(res.GetFileDescriptorResponse().GetFileDescriptorProto()).FindDescriptorByName(protoreflect.FullName(svc))
				if err != nil {
					t.Fatalf("%s: %v", svc, err)
				}
				sd, ok := d.(protoreflect.ServiceDescriptor)
				if !ok {
					t.Fatalf("%s is not a service", svc)
				}
				for i := range sd.Methods().Len() {
					m := sd.Methods().Get(i)
					res := ask(&reflectv1.ServerReflectionRequest{MessageRequest: &reflectv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: string(m.FullName())}})
					if len(res.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
						t.Fatalf("%s: no file", m.FullName())
					}
					// The request and response types resolve from what reflection sent.
					for _, msg := range []string{string(m.Input().FullName()), string(m.Output().FullName())} {
						res := ask(&reflectv1.ServerReflectionRequest{MessageRequest: &reflectv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: msg}})
						if _, err := files(res.GetFileDescriptorResponse().GetFileDescriptorProto()).FindDescriptorByName(protoreflect.FullName(msg)); err != nil {
							t.Fatalf("%s of %s: %v", msg, m.FullName(), err)
						}
					}
					methods++
				}
			}
			// IDService's 4 (or more), Health's 3, and each reflection service's 1.
			if methods < 4+3+2 {
				t.Fatalf("%d methods found, want at least 9", methods)
			}
			stream.CloseSend()
			if _, err := stream.Recv(); err != io.EOF {
				t.Fatalf("after CloseSend: %v, want io.EOF", err)
			}

			alpha, err := reflectv1alpha.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := alpha.Send(&reflectv1alpha.ServerReflectionRequest{MessageRequest: &reflectv1alpha.ServerReflectionRequest_ListServices{}}); err != nil {
				t.Fatal(err)
			}
			res, err := alpha.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if n := len(res.GetListServicesResponse().GetService()); n != len(wantServices) {
				t.Fatalf("v1alpha lists %d services, want %d", n, len(wantServices))
			}
			alpha.CloseSend()
		})
	}
}

// TestReflectionOpen: with tokens, reflection answers without one on both stacks, as the
// health service does (it tells only the public protos, and tools resolve even the health
// methods through it), and with one; the IDService still refuses a call without one.
func TestReflectionOpen(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Tokens = []string{"s3cret"}
	r := start(t, cfg)
	for _, st := range stacks(r) {
		t.Run(st.name, func(t *testing.T) {
			for _, tc := range []struct {
				name string
				opts []grpc.DialOption
				want codes.Code
			}{
				{"without", nil, codes.OK},
				{"with", []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(bearer.Credentials("s3cret"))}, codes.OK},
			} {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				stream, err := reflectv1.NewServerReflectionClient(stockAt(t, st.addr, tc.opts...)).ServerReflectionInfo(ctx)
				if err == nil {
					// Send says io.EOF once the server has ended the stream; Recv gives its status.
					if err = stream.Send(&reflectv1.ServerReflectionRequest{MessageRequest: &reflectv1.ServerReflectionRequest_ListServices{}}); err == nil || err == io.EOF {
						_, err = stream.Recv()
					}
				}
				if status.Code(err) != tc.want {
					t.Fatalf("%s a token: %v, want %v", tc.name, err, tc.want)
				}
			}
			if _, err := v1.NewIDServiceClient(stockAt(t, st.addr)).Ping(context.Background(), &v1.PingRequest{}); status.Code(err) != codes.Unauthenticated {
				t.Errorf("Ping without a token: %v, want Unauthenticated", err)
			}
		})
	}
}

// TestHealthList: List reports the overall status and the IDService's, on both stacks, and
// NOT_SERVING for both once the server is shutting down (during the shutdown delay).
func TestHealthList(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Tokens = []string{"s3cret"} // health stays open for probes
	cfg.ShutdownDelay = 3 * time.Second
	r := start(t, cfg)
	list := func(addr string) map[string]healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := healthpb.NewHealthClient(stockAt(t, addr)).List(ctx, &healthpb.HealthListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]healthpb.HealthCheckResponse_ServingStatus{}
		for k, v := range res.GetStatuses() {
			out[k] = v.GetStatus()
		}
		return out
	}
	for _, want := range []healthpb.HealthCheckResponse_ServingStatus{healthpb.HealthCheckResponse_SERVING, healthpb.HealthCheckResponse_NOT_SERVING} {
		if want == healthpb.HealthCheckResponse_NOT_SERVING {
			r.stop() // the shutdown delay begins: not ready, still serving
			time.Sleep(100 * time.Millisecond)
		}
		for _, st := range stacks(r) {
			got := list(st.addr)
			// The server, the service, and each generator (idkit.v1.IDService/NAME).
			if len(got) != 2+len(cfg.Generators) || got[""] != want || got["idkit.v1.IDService"] != want {
				t.Fatalf("%s: List = %v, want \"\", idkit.v1.IDService and each generator %v", st.name, got, want)
			}
			for _, g := range cfg.Generators {
				if got["idkit.v1.IDService/"+g.Name] != want {
					t.Fatalf("%s: List = %v, want idkit.v1.IDService/%s %v", st.name, got, g.Name, want)
				}
			}
		}
	}
}

// fileSet builds a registry from the serialized file descriptors reflection sent, resolving
// imports among them and then from the well-known types.
func fileSet(t *testing.T, raw [][]byte) *protoregistry.Files {
	t.Helper()
	var fds descriptorpb.FileDescriptorSet
	for _, b := range raw {
		fd := new(descriptorpb.FileDescriptorProto)
		if err := proto.Unmarshal(b, fd); err != nil {
			t.Fatal(err)
		}
		fds.File = append(fds.File, fd)
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		t.Fatalf("files from reflection: %v", err)
	}
	return files
}
