package remote

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit/internal/bearer"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
)

// connectRPC calls the service with connectrpc.com/connect over net/http: the Connect
// protocol, its JSON form, or gRPC over a caller's HTTP client.
type connectRPC struct {
	c  idkitv1connect.IDServiceClient
	hc *http.Client // nil when the caller supplied one
}

// dialConnect builds the connect-go client for c, over c.HTTPClient when set.
func dialConnect(c Config) *connectRPC {
	x := &connectRPC{}
	hc := c.HTTPClient
	if hc == nil {
		tr := &http.Transport{Protocols: new(http.Protocols), ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 16,
			DialContext: (&net.Dialer{Timeout: c.Timeout, KeepAlive: 30 * time.Second}).DialContext}
		if c.TLS {
			tr.Protocols.SetHTTP2(true)
			tr.Protocols.SetHTTP1(c.Protocol != "grpc")
			tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		} else {
			tr.Protocols.SetUnencryptedHTTP2(true)
		}
		x.hc = &http.Client{Transport: tr}
		hc = x.hc
	}
	scheme := "http://"
	if c.TLS {
		scheme = "https://"
	}
	var opts []connect.ClientOption
	switch c.Protocol {
	case "grpc":
		opts = append(opts, connect.WithGRPC())
	case "json":
		opts = append(opts, connect.WithProtoJSON())
	}
	if c.Token != "" {
		opts = append(opts, connect.WithInterceptors(bearer.Interceptor(c.Token)))
	}
	x.c = idkitv1connect.NewIDServiceClient(refusingClient{next: hc, addr: c.Addr}, scheme+c.Addr, opts...)
	return x
}

func (x *connectRPC) next(ctx context.Context, req *v1.NextRequest) (*v1.NextResponse, error) {
	res, err := x.c.Next(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, err
	}
	return res.Msg, nil
}

func (x *connectRPC) decode(ctx context.Context, req *v1.DecodeRequest) (*v1.DecodeResponse, error) {
	res, err := x.c.Decode(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, err
	}
	return res.Msg, nil
}

func (x *connectRPC) generators(ctx context.Context) (*v1.GeneratorsResponse, error) {
	res, err := x.c.Generators(ctx, connect.NewRequest(&v1.GeneratorsRequest{}))
	if err != nil {
		return nil, err
	}
	return res.Msg, nil
}

// close closes idle connections of the client Dial built; a caller's client is the caller's.
func (x *connectRPC) close() error {
	if x.hc != nil {
		x.hc.CloseIdleConnections()
	}
	return nil
}
