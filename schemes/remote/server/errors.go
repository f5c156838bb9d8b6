package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Errors a person can read, at every edge: a request the service cannot decode is told which
// message it should have been and what is wrong with it, in protobuf's terms (never a Go type,
// which connect-go's own codecs name); a JSON field the message does not have is refused by
// name rather than skipped; a POST to an RPC without a content type the service speaks is told
// what to send; and a path the service does not serve is answered in the caller's protocol.

// codecOptions are the Connect handler options that replace connect-go's protobuf and JSON
// codecs with ones whose errors read as above.
func codecOptions() []connect.HandlerOption {
	return []connect.HandlerOption{
		connect.WithCodec(protoCodec{}),
		connect.WithCodec(jsonCodec{name: "json"}),
		connect.WithCodec(jsonCodec{name: "json; charset=utf-8"}),
	}
}

// decodeError says which message a request should have been, in which encoding, and what is
// wrong with it. protobuf's own text starts with "proto:" and a no-break space, which it puts
// there so that nobody matches on the text; it is dropped.
func decodeError(m proto.Message, enc string, err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "proto:"); ok {
		msg = strings.TrimLeft(rest, " \u00a0")
	}
	return fmt.Errorf("request is not a valid %s in %s: %s", m.ProtoReflect().Descriptor().FullName(), enc, msg)
}

// notProto is the error for a value that is not a protobuf message: a programming error in the
// server, never the client's.
func notProto(v any) error { return errors.New("server: answer is not a protobuf message") }

// protoCodec is protobuf's binary encoding, as connect-go's own.
type protoCodec struct{}

func (protoCodec) Name() string { return "proto" }

func (protoCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, notProto(v)
	}
	return proto.Marshal(m)
}

func (protoCodec) MarshalAppend(dst []byte, v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, notProto(v)
	}
	return proto.MarshalOptions{}.MarshalAppend(dst, m)
}

func (protoCodec) Unmarshal(b []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return notProto(v)
	}
	if err := proto.Unmarshal(b, m); err != nil {
		return decodeError(m, "protobuf binary", err)
	}
	return nil
}

func (protoCodec) MarshalStable(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, notProto(v)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

func (protoCodec) IsBinary() bool { return true }

// jsonCodec is protobuf's JSON encoding, except that a field the message does not have is an
// error naming it: a misspelt "cuont" would otherwise be dropped and the request served with
// the default.
type jsonCodec struct{ name string }

func (c jsonCodec) Name() string { return c.name }

func (jsonCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, notProto(v)
	}
	return protojson.Marshal(m)
}

func (jsonCodec) MarshalAppend(dst []byte, v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, notProto(v)
	}
	return protojson.MarshalOptions{}.MarshalAppend(dst, m)
}

func (jsonCodec) Unmarshal(b []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return notProto(v)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return fmt.Errorf("request is not a valid %s in JSON: the body is empty (send a JSON object, {} for no fields)", m.ProtoReflect().Descriptor().FullName())
	}
	if err := protojson.Unmarshal(b, m); err != nil {
		return decodeError(m, "JSON", err)
	}
	return nil
}

func (c jsonCodec) MarshalStable(v any) ([]byte, error) {
	b, err := c.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func (jsonCodec) IsBinary() bool { return false }

// rpcContentTypes is what a POST to an RPC may carry, as the answer to one that carries none
// of them says.
const rpcContentTypes = "application/json (Connect JSON: curl -H 'Content-Type: application/json'), " +
	"application/proto (Connect, binary), application/grpc (gRPC) or application/grpc-web+proto (gRPC-Web)"

// rpcContentType reports whether a request's content type is one of the protocols' (gRPC,
// gRPC-Web, Connect unary or streaming), which Connect's handlers answer themselves.
func rpcContentType(ct string) bool {
	rest, ok := strings.CutPrefix(ct, "application/")
	if !ok {
		return false
	}
	return strings.HasPrefix(rest, "grpc") || strings.HasPrefix(rest, "json") ||
		strings.HasPrefix(rest, "proto") || strings.HasPrefix(rest, "connect+")
}

// badContentType answers a POST to an RPC whose content type is none of the protocols': 415,
// saying what to send (Connect would answer with an empty body).
func badContentType(w http.ResponseWriter, ct string) {
	w.Header().Set("Accept-Post", "application/json, application/proto, application/grpc, application/grpc-web+proto")
	what := "no Content-Type"
	if ct != "" {
		what = fmt.Sprintf("Content-Type %q", cut(ct))
	}
	textReply(w, http.StatusUnsupportedMediaType, what+": send "+rpcContentTypes)
}

// notFound answers a path the server does not serve in the caller's protocol: gRPC and gRPC-Web
// get UNIMPLEMENTED (with HTTP 200, as gRPC carries its status in trailers), the Connect
// protocol a JSON error with code unimplemented (HTTP 404), anything else a line of text
// (HTTP 404). The message lists what the server serves.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	msg := fmt.Sprintf("%s %s is not served here: the services are %s (gRPC, gRPC-Web, Connect), and GET /v1/next/{generator}, /v1/decode/{generator}/{id}, /v1/bounds/{generator}, /healthz, /readyz and /metrics",
		r.Method, cut(r.URL.Path), strings.Join(servedServices, ", "))
	reject(w, r, connect.CodeUnimplemented, http.StatusNotFound, msg)
}

// servedServices are the gRPC services of the main listener, as notFound lists them.
var servedServices = []string{v1.IDService_ServiceDesc.ServiceName, healthpb.Health_ServiceDesc.ServiceName, reflectv1.ServerReflection_ServiceDesc.ServiceName}

// idServiceProcedures are the paths of IDService's RPCs, read from idkit.proto's descriptor so
// that a new RPC is served without a change here.
func idServiceProcedures() []string {
	sd := v1.File_idkit_proto.Services().ByName("IDService")
	out := make([]string, 0, sd.Methods().Len())
	for i := range sd.Methods().Len() {
		out = append(out, "/"+string(sd.FullName())+"/"+string(sd.Methods().Get(i).Name()))
	}
	return out
}

// isRPCPath reports whether a path is one of the gRPC services' (served or not): a POST there
// is meant as an RPC.
func isRPCPath(p string) bool {
	return strings.HasPrefix(p, "/idkit.") || strings.HasPrefix(p, "/grpc.")
}

// getOnly answers a method the plain endpoints do not take: 405, saying which they take.
func getOnly(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, HEAD")
	textReply(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: use GET", r.Method, cut(r.URL.Path)))
}

// reasonWriter adds a line of text to the answers that Connect's handlers send without a
// body: 415 for a content type that is not the method's protocol's (the Connect streaming form
// on a unary RPC, or a GET's), 405 for a GET of an RPC Connect serves by POST only, and 505 for
// a bidirectional stream (reflection) over HTTP/1.1.
type reasonWriter struct {
	http.ResponseWriter
	r *http.Request
}

func (w *reasonWriter) WriteHeader(code int) {
	var reason string
	switch code {
	case http.StatusUnsupportedMediaType:
		reason = fmt.Sprintf("%s with Content-Type %q: send a POST with %s", w.r.Method, cut(w.r.Header.Get("Content-Type")), rpcContentTypes)
	case http.StatusMethodNotAllowed:
		reason = fmt.Sprintf("%s %s: send a POST with %s (Connect takes GET only for RPCs without side effects, with ?encoding=json&message=…)", w.r.Method, cut(w.r.URL.Path), rpcContentTypes)
	case http.StatusHTTPVersionNotSupported:
		reason = "this RPC is a bidirectional stream: it needs HTTP/2 (h2c, or TLS with ALPN)"
	default:
		w.ResponseWriter.WriteHeader(code)
		return
	}
	textReply(w.ResponseWriter, code, reason)
}

// Flush and Unwrap keep the writer's optional interfaces reachable (streams need Flush).
func (w *reasonWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *reasonWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
