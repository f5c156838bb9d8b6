package remote

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/bearer"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// grpcRPC calls the service with google.golang.org/grpc, the stock gRPC client, on whichever
// of the service's ports addr names: the main one (net/http and Connect) or its --grpc-listen
// port (grpc-go's own server, which costs less CPU per request and has a far shorter latency
// tail).
type grpcRPC struct {
	cc *grpc.ClientConn
	c  v1.IDServiceClient
}

// dialGRPC builds the grpc-go client for c. It connects lazily, on the first call.
func dialGRPC(c Config) (*grpcRPC, error) {
	creds := insecure.NewCredentials()
	if c.TLS {
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12}) // system roots
	}
	// A response holds up to MaxCount IDs of at most 18 bytes each (a 128-bit ID as a bytes
	// field); grpc-go's default limit of 4 MiB would refuse large max_count settings.
	recv := int(min(max(4<<20, 18*int64(c.MaxCount)+64<<10), math.MaxInt32))
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// Reconnect as the retry loop retries (10 ms doubling to 500 ms) instead of grpc-go's
		// default, which waits a second after the first failure and up to two minutes later:
		// a service restarted at once would be refused for that long.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 10 * time.Millisecond, Multiplier: 2, Jitter: 0.5, MaxDelay: 500 * time.Millisecond},
			MinConnectTimeout: c.Timeout,
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(recv)),
	}
	if c.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer.Credentials(c.Token)))
	}
	// passthrough: each connection attempt resolves the host anew, as net/http does, instead
	// of grpc-go's DNS resolver, which re-resolves at most every 30 s.
	cc, err := grpc.NewClient("passthrough:///"+c.Addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: remote: addr=%s: %w", idkit.ErrSpec, c.Addr, err)
	}
	return &grpcRPC{cc: cc, c: v1.NewIDServiceClient(cc)}, nil
}

func (x *grpcRPC) next(ctx context.Context, req *v1.NextRequest) (*v1.NextResponse, error) {
	return x.c.Next(ctx, req)
}

func (x *grpcRPC) decode(ctx context.Context, req *v1.DecodeRequest) (*v1.DecodeResponse, error) {
	return x.c.Decode(ctx, req)
}

func (x *grpcRPC) generators(ctx context.Context) (*v1.GeneratorsResponse, error) {
	return x.c.Generators(ctx, &v1.GeneratorsRequest{})
}

// close closes the connection; closing it again does nothing.
func (x *grpcRPC) close() error {
	if err := x.cc.Close(); err != nil && status.Code(err) != codes.Canceled { // Canceled: closed before
		return fmt.Errorf("remote: closing the gRPC connection: %w", err)
	}
	return nil
}
