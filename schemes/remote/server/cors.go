package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/rs/cors"
)

// CORS, so that browser code on the pages Config.CORSOrigins names can call the service with
// gRPC-Web, the Connect protocol and plain fetch(): off by default (a browser then refuses
// cross-origin calls), answered by github.com/rs/cors with the methods and headers that
// connectrpc.com/cors lists for Connect and gRPC-Web, plus those idkitd itself reads or sends.

// corsAllowedHeaders are the request headers a browser may send: Connect's and gRPC-Web's
// (connectrpc.com/cors's list), their compression headers, and the bearer token.
var corsAllowedHeaders = []string{
	"Content-Type", "Connect-Protocol-Version", "Connect-Timeout-Ms", "Grpc-Timeout", "X-Grpc-Web", "X-User-Agent",
	"Content-Encoding", "Connect-Content-Encoding", "Connect-Accept-Encoding", "Grpc-Encoding", "Grpc-Accept-Encoding",
	"Authorization",
}

// corsExposedHeaders are the response headers browser code may read: gRPC-Web's status
// (connectrpc.com/cors's list), the reason of a NOT_SERVING health answer, the scheme a 401
// asks for, and how long to wait after a 503.
var corsExposedHeaders = []string{"Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin", notReadyHeader, "WWW-Authenticate", "Retry-After"}

// corsMaxAge is how long, in seconds, a browser may keep a preflight's answer.
const corsMaxAge = 7200

// checkOrigin refuses an origin that is not "*", nor a scheme and host (with an optional
// port and at most one '*' for a part of the host, as in https://*.example.com).
func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	rest, ok := strings.CutPrefix(o, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(o, "http://")
	}
	if !ok || rest == "" || strings.ContainsAny(rest, "/?# \t") || strings.Count(o, "*") > 1 {
		return fmt.Errorf("%w: CORS origin %q: want \"*\" or a scheme and host such as https://app.example.com (no path)", ErrConfig, cut(o))
	}
	return nil
}

// withCORS wraps h in the CORS handler when Config.CORSOrigins allows any origin.
func (s *Server) withCORS(h http.Handler) http.Handler {
	if len(s.cfg.CORSOrigins) == 0 {
		return h
	}
	return cors.New(cors.Options{
		AllowedOrigins: s.cfg.CORSOrigins,
		AllowedMethods: []string{http.MethodGet, http.MethodPost},
		AllowedHeaders: corsAllowedHeaders,
		ExposedHeaders: corsExposedHeaders,
		MaxAge:         corsMaxAge,
	}).Handler(h)
}
