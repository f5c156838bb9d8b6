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

// TestTransient: which errors a request retries. The INTERNAL rows with a cut-off body are
// what a client sees when the service is SIGKILLed while it answers.
func TestTransient(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
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
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("%s: transient(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
