package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// httpNext serves GET /v1/next/{generator}?n=N: N new IDs (default 1) as canonical text, one
// a line. A bad request gets a 4xx status and a one-line reason; a generator that cannot issue
// IDs right now gets 503. HEAD checks the same and answers the same status without issuing
// IDs (and without a body).
func (s *Server) httpNext(w http.ResponseWriter, r *http.Request) {
	s.nextOf(w, r, r.PathValue("generator"))
}

// nextOf is httpNext for the generator named name; routes calls it without the mux for the
// usual GET /v1/next/NAME.
func (s *Server) nextOf(w http.ResponseWriter, r *http.Request, name string) {
	start := s.m.now()
	code := s.plainNext(w, r, name)
	s.m.observe("http_next", code, start)
}

func (s *Server) plainNext(w http.ResponseWriter, r *http.Request, name string) connect.Code {
	var q url.Values
	if r.URL.RawQuery != "" {
		var err error
		if q, err = url.ParseQuery(r.URL.RawQuery); err != nil { // routes refused one that does not parse
			return httpError(w, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("bad query string: %s", cut(err.Error()))))
		}
	}
	n := int64(1)
	for k, vs := range q {
		if k != "n" {
			return httpError(w, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("unknown query parameter %s (known: n)", strconv.Quote(cut(k)))))
		}
		if len(vs) > 1 {
			return httpError(w, connect.NewError(connect.CodeInvalidArgument, errors.New("n is given more than once")))
		}
		v, err := strconv.ParseInt(vs[0], 10, 64)
		if err != nil {
			return httpError(w, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("n=%s: want a whole number from 1 to %d", strconv.Quote(cut(vs[0])), s.cfg.MaxCount)))
		}
		n = v
	}
	if err := s.checkCount(n); err != nil {
		return httpError(w, err)
	}
	g, err := s.lookup(name)
	if err != nil {
		return httpError(w, err)
	}
	if r.Method == http.MethodHead {
		if err := g.err(); err != nil {
			return httpError(w, connect.NewError(codeOf(err), fmt.Errorf("generator %q: %w", g.name, err)))
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		return 0
	}
	if b := httpBudget(r.Context()); b != nil {
		if est := heldBytes(int(n), g.bits.Load(), true) + int64(n)*g.textExtra; est >= minCounted {
			if err := b.acquire(r.Context(), est); err != nil {
				return httpError(w, connect.NewError(codeOf(err), fmt.Errorf("waiting for the connection's earlier answers to be read: %w", err)))
			}
			defer b.release(est) // once returned, the answer has been written
		}
	}
	var body []byte
	var textErr error
	err = g.next(r.Context(), int(n), func(ids []idkit.ID) {
		body = make([]byte, 0, len(ids)*(ids[0].Bits()/64*18+3+int(g.textExtra/2)))
		for _, id := range ids {
			// The public text: with the spec's prefix=, masked with its mask=.
			if body, textErr = idkit.AppendID(g.s, body, id); textErr != nil {
				return
			}
			body = append(body, '\n')
		}
	})
	if err == nil && textErr != nil {
		err = connect.NewError(connect.CodeInternal, fmt.Errorf("generator %q: writing the public text: %w", g.name, textErr))
	}
	if err != nil {
		return httpError(w, err)
	}
	h := w.Header()
	h["Content-Type"] = textPlain // Cache-Control: routes says no-store
	if len(body) > smallAnswer {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	} // else net/http sets it, without allocating, from the answer it holds whole
	w.Write(body)
	return 0
}

// smallAnswer is the size up to which net/http holds a whole answer before sending its headers,
// and so writes its Content-Length itself (HTTP/1.1's buffer; HTTP/2's is larger).
const smallAnswer = 2048

// textPlain is the Content-Type of the plain endpoints' text, shared by every answer (net/http
// copies header values and never changes them).
var textPlain = []string{"text/plain; charset=utf-8"}

// httpDecode serves GET /v1/decode/{generator}/{id}: the Decode RPC for shells, its answer as
// the Connect protocol's JSON (protojson, the same fields; see jsonReply), its errors as one line of text with
// the status their code maps to. It takes no query parameters.
func (s *Server) httpDecode(w http.ResponseWriter, r *http.Request) {
	start := s.m.now()
	code := s.plainDecode(w, r)
	s.m.observe("http_decode", code, start)
}

func (s *Server) plainDecode(w http.ResponseWriter, r *http.Request) connect.Code {
	if _, err := readQuery(r, nil); err != nil {
		return httpError(w, err)
	}
	res, err := s.decode(&v1.DecodeRequest{Generator: r.PathValue("generator"), Id: r.PathValue("id")})
	if err != nil {
		return httpError(w, err)
	}
	return jsonReply(w, res)
}

// httpBounds serves GET /v1/bounds/{generator}?from=T1&to=T2 (either may be left out, for a
// range open on that side) or ?at=T: the Bounds RPC for shells, answered as httpDecode does.
func (s *Server) httpBounds(w http.ResponseWriter, r *http.Request) {
	start := s.m.now()
	code := s.plainBounds(w, r)
	s.m.observe("http_bounds", code, start)
}

func (s *Server) plainBounds(w http.ResponseWriter, r *http.Request) connect.Code {
	q, err := readQuery(r, []string{"from", "to", "at"})
	if err != nil {
		return httpError(w, err)
	}
	g, err := s.lookup(r.PathValue("generator"))
	if err != nil {
		return httpError(w, err)
	}
	for _, k := range []string{"from", "to", "at"} {
		if v, ok := q[k]; ok && v == "" {
			return httpError(w, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s= is empty; leave it out for a range open on that side", k)))
		}
	}
	tr, err := readRange(q["from"], q["to"], q["at"])
	if err != nil {
		return httpError(w, err)
	}
	res, err := g.bounds(tr)
	if err != nil {
		return httpError(w, err)
	}
	return jsonReply(w, res)
}

// readQuery reads a plain endpoint's query string strictly: only the known keys, each at most
// once. Errors are INVALID_ARGUMENT naming the key.
func readQuery(r *http.Request, known []string) (map[string]string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery) // routes refused one that does not parse
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("bad query string: %s", cut(err.Error())))
	}
	out := make(map[string]string, len(q))
	for k, vs := range q {
		if !slices.Contains(known, k) {
			if len(known) == 0 {
				return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("unknown query parameter %s (this path takes none)", strconv.Quote(cut(k))))
			}
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("unknown query parameter %s (known: %s)", strconv.Quote(cut(k)), strings.Join(known, ", ")))
		}
		if len(vs) > 1 {
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s is given more than once", k))
		}
		out[k] = vs[0]
	}
	return out, nil
}

// jsonReply writes msg as the Connect protocol's JSON encodes it (protojson), with two
// differences for shell scripts: fields at their zero value are written too (a layout field
// of 0 reads "value":"0", not a missing key), and the answer is one line without blanks
// (protojson varies its spacing from build to build, which a diff should not see).
func jsonReply(w http.ResponseWriter, msg proto.Message) connect.Code {
	raw, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(msg)
	var buf bytes.Buffer
	if err == nil {
		err = json.Compact(&buf, raw)
	}
	if err != nil {
		return httpError(w, connect.NewError(connect.CodeInternal, fmt.Errorf("encoding the answer: %w", err)))
	}
	b := append(buf.Bytes(), '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	return 0
}

// httpError writes err's message as one line with the HTTP status its code maps to, and
// returns the code.
func httpError(w http.ResponseWriter, err error) connect.Code {
	code := connect.CodeOf(err)
	msg := err.Error()
	var ce *connect.Error
	if errors.As(err, &ce) {
		msg = ce.Message()
		if ra := ce.Meta().Get("Retry-After"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
	}
	textReply(w, httpStatus(code), idkit.Redact(msg))
	return code
}

// httpStatus is the HTTP status for a code, as the Connect protocol maps them.
func httpStatus(c connect.Code) int {
	switch c {
	case connect.CodeInvalidArgument, connect.CodeFailedPrecondition, connect.CodeOutOfRange:
		return http.StatusBadRequest
	case connect.CodeNotFound:
		return http.StatusNotFound
	case connect.CodeUnauthenticated:
		return http.StatusUnauthorized
	case connect.CodePermissionDenied:
		return http.StatusForbidden
	case connect.CodeUnavailable:
		return http.StatusServiceUnavailable
	case connect.CodeDeadlineExceeded:
		return http.StatusGatewayTimeout
	case connect.CodeCanceled:
		return 499
	case connect.CodeResourceExhausted:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}
