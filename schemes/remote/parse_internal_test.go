package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FuzzParse reads arbitrary remote specs without dialing: every spec either gives a Config
// with an address and a generator or an error wrapping idkit.ErrSpec; none panics, and no
// message shows a password.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"remote:addr=127.0.0.1:7070,generator=orders",
		"remote:addr=[::1]:7070,generator=orders,prefetch=1000,protocol=json,tls=true",
		"remote:addr=h:1,generator=g,timeout=1s,retry_for=0s,max_count=0",
		"remote:addr=h:1,generator=g,token_env=HOME",
		"remote:addr=postgres://u:hunter2@h:1/db,generator=x",
		"remote:generator=orders,prefetch=-1",
		"remote",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		sp, err := idkit.ParseSpec(spec)
		if err != nil {
			return
		}
		c, err := parse(sp)
		if err != nil {
			if !errors.Is(err, idkit.ErrSpec) {
				t.Fatalf("%q: error %v does not wrap ErrSpec", spec, err)
			}
			if !strings.Contains(idkit.Redact(spec), "hunter2") && strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("%q: error shows the password: %v", spec, err)
			}
			return
		}
		if c.Addr == "" || c.Generator == "" || c.MaxCount < 1 || c.Timeout <= 0 || c.RetryFor <= 0 {
			t.Fatalf("%q: accepted an incomplete config %+v", spec, c)
		}
	})
}

// TestLoopback: which addresses may receive a bearer token over cleartext without
// insecure_token=true.
func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7070": true, "127.8.9.10:1": true, "[::1]:7070": true, "[::ffff:127.0.0.1]:1": true,
		"localhost:7070": true, "LOCALHOST.:1": true,
		// Go asks the network's DNS for names under .localhost (issue 24, item 8).
		"idkitd.localhost:1": false, "a.b.localhost.:1": false, "x.LOCALHOST:1": false,
		"10.0.0.1:7070": false, "[::2]:1": false, "idkitd:7070": false, "localhost.example:1": false,
		"0.0.0.0:1": false, "nocolon": false, "[::1%lo]:1": true,
	} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestTransient: which errors a request retries, from connect-go and from grpc-go. The
// connect INTERNAL rows with a cut-off body are what connect-go reports when the service is
// SIGKILLed while it answers; grpc-go says UNAVAILABLE. The rows marked live are errors a
// grpc-go client really returned, from servers set up to fail that way (liveGRPCErrors), so
// that a grpc-go upgrade that reports a failure differently shows here.
func TestTransient(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	type row struct {
		name string
		err  error
		want bool
	}
	rows := []row{
		{"unavailable", connect.NewError(connect.CodeUnavailable, errors.New("refused")), true},
		{"unavailable from the service", connect.NewWireError(connect.CodeUnavailable, errors.New("fenced")), true},
		{"attempt deadline", connect.NewError(connect.CodeDeadlineExceeded, context.DeadlineExceeded), true},
		{"reset stream", connect.NewError(connect.CodeCanceled, reset), true},
		{"canceled by the service", connect.NewWireError(connect.CodeCanceled, errors.New("x")), false},
		{"body cut off", connect.NewError(connect.CodeInternal, fmt.Errorf("protocol error: incomplete envelope: %w", io.ErrUnexpectedEOF)), true},
		{"connection reset while reading", connect.NewError(connect.CodeInternal, reset), true},
		{"bad message", connect.NewError(connect.CodeInternal, errors.New("unmarshal: bad wire type")), false},
		{"internal from the service", connect.NewWireError(connect.CodeInternal, io.ErrUnexpectedEOF), false},
		{"not found", connect.NewWireError(connect.CodeNotFound, errors.New("no such generator")), false},
		{"invalid argument", connect.NewWireError(connect.CodeInvalidArgument, errors.New("count 0")), false},
		{"wrapped connect error", fmt.Errorf("remote: x: %w", connect.NewError(connect.CodeUnavailable, errors.New("refused"))), true},

		{"grpc-go: connection refused", status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`), true},
		{"grpc-go: connection cut mid-request", status.Error(codes.Unavailable, "error reading from server: EOF"), true},
		{"grpc-go: connection reset", status.Error(codes.Unavailable, "error reading from server: read tcp 127.0.0.1:2->127.0.0.1:1: read: connection reset by peer"), true},
		{"grpc-go: attempt deadline", status.Error(codes.DeadlineExceeded, context.DeadlineExceeded.Error()), true},
		{"grpc-go: wrapped", fmt.Errorf("remote: x: %w", status.Error(codes.Unavailable, "fenced")), true},
		{"grpc-go: internal", status.Error(codes.Internal, "server closed the stream without sending trailers"), false},
		{"grpc-go: canceled", status.Error(codes.Canceled, "x"), false},
		{"grpc-go: unknown", status.Error(codes.Unknown, "x"), false},
		{"grpc-go: not found", status.Error(codes.NotFound, "no such generator"), false},
		{"grpc-go: invalid argument", status.Error(codes.InvalidArgument, "count 0"), false},
		{"grpc-go: unauthenticated", status.Error(codes.Unauthenticated, "missing or unknown bearer token"), false},

		{"an answer without the IDs asked", errors.New("remote: h:1 sent 3 IDs for 4 asked"), false},
	}
	for _, l := range liveGRPCErrors(t) {
		rows = append(rows, row{"live grpc-go: " + l.name, l.err, l.want})
	}
	for _, tc := range rows {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("%s: transient(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestCodeOf: remoteDecode reads INVALID_ARGUMENT from either client.
func TestCodeOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want connect.Code
	}{
		{connect.NewWireError(connect.CodeInvalidArgument, errors.New("x")), connect.CodeInvalidArgument},
		{fmt.Errorf("remote: x: %w", connect.NewError(connect.CodeNotFound, errors.New("x"))), connect.CodeNotFound},
		{status.Error(codes.InvalidArgument, "x"), connect.CodeInvalidArgument},
		{fmt.Errorf("remote: x: %w", status.Error(codes.Unavailable, "x")), connect.CodeUnavailable},
		{errors.New("plain"), connect.CodeUnknown},
	} {
		if got := codeOf(tc.err); got != tc.want {
			t.Errorf("codeOf(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
