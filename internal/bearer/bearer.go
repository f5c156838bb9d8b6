// Package bearer sends a bearer token (an "Authorization: Bearer …" header) with every request
// of the ID service's clients, whichever library carries them: the remote scheme and idbench
// load both use it.
package bearer

import (
	"context"

	"connectrpc.com/connect"
	"google.golang.org/grpc/credentials"
)

// Interceptor adds the header to every request of a connect-go client.
func Interceptor(token string) connect.Interceptor {
	header := "Bearer " + token
	return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", header)
			return next(ctx, req)
		}
	})
}

// Credentials sends the header as metadata with every call of a grpc-go client. Unlike
// grpc-go's oauth credentials they do not require transport security, so that cleartext
// loopback and private networks work as with the Connect client.
func Credentials(token string) credentials.PerRPCCredentials {
	return perRPC{md: map[string]string{"authorization": "Bearer " + token}}
}

type perRPC struct {
	md map[string]string // read only: shared by every call
}

// GetRequestMetadata returns the authorization header.
func (p perRPC) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return p.md, nil
}

// RequireTransportSecurity is false: the token goes over cleartext connections too.
func (perRPC) RequireTransportSecurity() bool { return false }
