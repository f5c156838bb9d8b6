package remote

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/grpc/status"
)

// An answer that no retry can change is final (ErrRefused): 415 and 405 say the address does
// not take the protocol or the method, and an HTML page comes from something that is not the
// service (a proxy's error page, a login portal). A proxy's answers while the service is away
// (429, 502, 503, 504) stay transient, HTML or not: the service restarting behind a proxy
// looks like that.

// refusal returns the ErrRefused error for an answer with status code and content type ctype
// from addr, or nil when the answer may be the service's (or a retry may change it).
func refusal(addr string, code int, ctype string) error {
	media, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		media = strings.ToLower(strings.TrimSpace(ctype))
	}
	var why string
	switch {
	case code == http.StatusUnsupportedMediaType:
		why = "the address does not take this protocol's content type: is it an idkit service, and does a proxy in front of it pass gRPC and Connect through?"
	case code == http.StatusMethodNotAllowed:
		why = "the address does not take POST: another server, or a proxy that does not pass RPCs, answers there"
	case media == "text/html":
		switch code {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return nil // a proxy's page while the service is away: retried
		}
		why = "an HTML page, from a proxy, load balancer or portal rather than the service"
	default:
		return nil
	}
	if ctype == "" {
		ctype = "none"
	}
	return fmt.Errorf("%w: %s answered HTTP %d %s with content type %s: %s", ErrRefused, addr, code, http.StatusText(code), strconv.Quote(ctype), why)
}

// refusingClient is the HTTP client of connect-go's calls: it turns a final answer into an
// error that connect-go passes on as it is (not a wire error, and not UNAVAILABLE, UNKNOWN or
// INTERNAL, which transient may retry), so the caller sees the status and content type
// instead of connect-go's reading of an answer that is not an RPC's.
type refusingClient struct {
	next connect.HTTPClient
	addr string
}

func (c refusingClient) Do(req *http.Request) (*http.Response, error) {
	res, err := c.next.Do(req)
	if err != nil {
		return res, err
	}
	if rerr := refusal(c.addr, res.StatusCode, res.Header.Get("Content-Type")); rerr != nil {
		io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // lets the connection be reused
		res.Body.Close()
		return nil, connect.NewError(connect.CodeFailedPrecondition, rerr)
	}
	return res, nil
}

// grpcRefusal returns the ErrRefused error for grpc-go's err when grpc-go got an answer that
// was not gRPC's and refusal finds it final; nil otherwise. grpc-go reports such an answer
// with a status whose message begins "unexpected HTTP status code received from server: N
// (Text); transport: received unexpected content-type "T"" (the same text since grpc-go
// 1.2x); any other error stays as it is.
func grpcRefusal(addr string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	msg, ok := strings.CutPrefix(st.Message(), "unexpected HTTP status code received from server: ")
	if !ok {
		return nil
	}
	num, rest, _ := strings.Cut(msg, " ")
	code, perr := strconv.Atoi(num)
	if perr != nil {
		return nil
	}
	var ctype string
	if _, after, ok := strings.Cut(rest, `received unexpected content-type "`); ok {
		ctype, _, _ = strings.Cut(after, `"`)
	}
	return refusal(addr, code, ctype)
}

// refused reports whether err is a final answer found by refusingClient or grpcRefusal.
func refused(err error) bool { return errors.Is(err, ErrRefused) }
