package remote

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// rpc is the service as the scheme calls it: grpc-go's client (grpc.go) for protocol=grpc,
// connect-go's (connect.go) for the Connect protocol, JSON, and gRPC over a caller's HTTP
// client. Errors are the client's own (*connect.Error or a grpc-go status), for transient and
// codeOf to read.
type rpc interface {
	next(context.Context, *v1.NextRequest) (*v1.NextResponse, error)
	decode(context.Context, *v1.DecodeRequest) (*v1.DecodeResponse, error)
	generators(context.Context) (*v1.GeneratorsResponse, error)
	close() error
}

// dialRPC builds the client for c. grpc-go cannot send its requests through an http.Client,
// so a caller's HTTPClient keeps protocol=grpc on connect-go's gRPC.
func dialRPC(c Config) (rpc, error) {
	if c.Protocol == "grpc" && c.HTTPClient == nil {
		return dialGRPC(c)
	}
	return dialConnect(c), nil
}

// transient reports whether an attempt's error may pass. The caller has checked that its own
// context is still live. Retrying Next is safe: a request that was answered but whose answer
// was lost only loses IDs.
//
// From connect-go: UNAVAILABLE from the service or the transport (connection refused), an
// attempt past its own deadline, and a request cut off by its connection when the service
// dies mid-request, which connect reports, without a status from the wire, as CANCELED or
// UNKNOWN (a reset stream) or INTERNAL (a response body that ends early).
//
// From grpc-go: UNAVAILABLE and DEADLINE_EXCEEDED. grpc-go reports every transport failure as
// UNAVAILABLE (connection refused, a connection closed or reset mid-request, a channel waiting
// out its reconnect backoff) and an attempt past its deadline as DEADLINE_EXCEEDED; it keeps
// no mark of whether a status came from the wire, so any other code is taken as the
// service's, and final.
//
// Any other error (an answer that decoded but does not hold what was asked) is final.
func transient(err error) bool {
	var ce *connect.Error
	if errors.As(err, &ce) {
		switch ce.Code() {
		case connect.CodeUnavailable, connect.CodeDeadlineExceeded:
			return true
		case connect.CodeCanceled, connect.CodeUnknown:
			// A status the service sent is final; a transport failure carries no wire status.
			return !connect.IsWireError(ce)
		case connect.CodeInternal:
			return !connect.IsWireError(ce) && cutOff(ce)
		}
		return false
	}
	switch status.Code(err) { // codes.Unknown for an error that is not a grpc-go status
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

// cutOff reports an error caused by a connection that ended or was reset.
func cutOff(err error) bool {
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &ne)
}

// codeOf returns the RPC code of an error from either client (gRPC and Connect share the
// numbers), or connect.CodeUnknown for an error that carries none.
func codeOf(err error) connect.Code {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Code()
	}
	return connect.Code(status.Code(err))
}
