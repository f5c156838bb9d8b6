package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// maskEnv names the environment variable the mask tests keep their key in.
const maskEnv = "IDKIT_TEST_SERVER_MASK"

// apiGens are generators of every kind of time order and text form.
func apiGens() server.Config {
	return server.Config{Generators: []server.Generator{
		{Name: "orders", Spec: "snowflake:layout=twitter,worker=3"},
		{Name: "sf", Spec: "sonyflake:machine=7"},
		{Name: "sessions", Spec: "ulid"},
		{Name: "v7", Spec: "uuidv7"},
		{Name: "v4", Spec: "uuidv4"},
		{Name: "users", Spec: "typeid:prefix=user"},
		{Name: "ord", Spec: "snowflake:layout=twitter,worker=4,prefix=ord"},
		{Name: "hidden", Spec: "snowflake:layout=twitter,worker=5,mask=env:" + maskEnv},
		{Name: "hidden7", Spec: "uuidv7:mask=env:" + maskEnv},
	}, MaxCount: 1000}
}

// apiClient is one way of calling the RPCs this file tests, on one stack, with errors as
// connect codes.
type apiClient struct {
	name   string
	next   func(*v1.NextRequest) (*v1.NextResponse, error)
	decode func(*v1.DecodeRequest) (*v1.DecodeResponse, error)
	bounds func(*v1.BoundsRequest) (*v1.BoundsResponse, error)
}

// apiClients are connect-go over each protocol on the net/http stack, and the stock grpc-go
// client on both stacks.
func apiClients(t *testing.T, r *running) []apiClient {
	ctx := context.Background()
	var out []apiClient
	for _, p := range protocols {
		c := idkitv1connect.NewIDServiceClient(h2(), r.url, p.opts...)
		out = append(out, apiClient{
			name: "connect-" + p.name,
			next: func(req *v1.NextRequest) (*v1.NextResponse, error) {
				res, err := c.Next(ctx, connect.NewRequest(req))
				return msgOf(res, err)
			},
			decode: func(req *v1.DecodeRequest) (*v1.DecodeResponse, error) {
				res, err := c.Decode(ctx, connect.NewRequest(req))
				return msgOf(res, err)
			},
			bounds: func(req *v1.BoundsRequest) (*v1.BoundsResponse, error) {
				res, err := c.Bounds(ctx, connect.NewRequest(req))
				return msgOf(res, err)
			},
		})
	}
	for _, st := range stacks(r) {
		c := v1.NewIDServiceClient(stockAt(t, st.addr))
		out = append(out, apiClient{
			name: "grpc-go-client/" + st.name,
			next: func(req *v1.NextRequest) (*v1.NextResponse, error) {
				res, err := c.Next(ctx, req)
				return res, asConnect(err)
			},
			decode: func(req *v1.DecodeRequest) (*v1.DecodeResponse, error) {
				res, err := c.Decode(ctx, req)
				return res, asConnect(err)
			},
			bounds: func(req *v1.BoundsRequest) (*v1.BoundsResponse, error) {
				res, err := c.Bounds(ctx, req)
				return res, asConnect(err)
			},
		})
	}
	return out
}

func msgOf[T any](res *connect.Response[T], err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return res.Msg, nil
}

// asConnect turns a gRPC status into a *connect.Error with the same code and message.
func asConnect(err error) error {
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	return connect.NewError(connect.Code(st.Code()), errStr(st.Message()))
}

type errStr string

func (e errStr) Error() string { return string(e) }

// wantBounds is what the Bounds RPC must answer: idkit.Bounds of the generator's own codec.
func wantBounds(t *testing.T, spec string, from, to time.Time) (lo, hi idkit.ID) {
	t.Helper()
	c, err := idkit.NewCodec(spec)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi, err = idkit.Bounds(c, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return lo, hi
}

// boundsIDs reads the stored IDs of a Bounds answer from its numbers or bytes, checking them
// against its text.
func boundsIDs(t *testing.T, res *v1.BoundsResponse) (lo, hi idkit.ID) {
	t.Helper()
	if len(res.Lo128) == 16 {
		lo, hi = idkit.FromUUID([16]byte(res.Lo128)), idkit.FromUUID([16]byte(res.Hi128))
	} else {
		lo, hi = idkit.FromUint64(res.Lo64), idkit.FromUint64(res.Hi64)
	}
	pl, err1 := idkit.Parse(res.LoText)
	ph, err2 := idkit.Parse(res.HiText)
	if err1 != nil || err2 != nil || pl.Bytes16() != lo.Bytes16() || ph.Bytes16() != hi.Bytes16() {
		t.Fatalf("bounds text %s, %s do not match the numbers %s, %s (%v %v)", res.LoText, res.HiText, lo, hi, err1, err2)
	}
	return pl, ph
}

// TestBounds: the Bounds RPC on both stacks and every protocol answers what idkit.Bounds of
// the generator's codec answers, in the stored form (also for prefixed and masked
// generators), with times as Decode and idbench inspect print them; the IDs a generator issues
// lie within the bounds of their own tick and outside those of the ticks around it; schemes
// without time order and empty ranges are INVALID_ARGUMENT with the reason.
func TestBounds(t *testing.T) {
	t.Setenv(maskEnv, "0123456789abcdef:fedcba9876543210")
	r := start(t, apiGens())
	from := time.Date(2026, 1, 1, 9, 30, 0, 0, time.UTC)
	to := from.Add(90 * time.Second)
	specs := map[string]string{}
	for _, g := range apiGens().Generators {
		specs[g.Name] = g.Spec
	}
	for _, c := range apiClients(t, r) {
		t.Run(c.name, func(t *testing.T) {
			for _, gen := range []string{"orders", "sf", "sessions", "v7", "users", "ord", "hidden", "hidden7"} {
				res, err := c.bounds(&v1.BoundsRequest{Generator: gen, From: from.Format(time.RFC3339), To: "1767259890000"})
				if err != nil {
					t.Fatalf("%s: %v", gen, err)
				}
				lo, hi := boundsIDs(t, res)
				wlo, whi := wantBounds(t, specs[gen], from, to)
				if lo != wlo || hi != whi {
					t.Errorf("%s: bounds %s..%s, want %s..%s (idkit.Bounds)", gen, lo, hi, wlo, whi)
				}
				if res.LoTime != "2026-01-01T09:30:00.000Z" || !strings.HasPrefix(res.HiTime, "2026-01-01T09:31:29.99") {
					t.Errorf("%s: times %s, %s", gen, res.LoTime, res.HiTime)
				}
				if !strings.Contains(res.Where, "id >= ") || !strings.Contains(res.Note, "exact on ticks of "+res.Tick) || res.Tick == "" {
					t.Errorf("%s: where %q, tick %q, note %q", gen, res.Where, res.Tick, res.Note)
				}

				// Live IDs: inside the bounds of their own tick, outside the neighbours'.
				next, err := c.next(&v1.NextRequest{Generator: gen, Count: 50, Text: true})
				if err != nil {
					t.Fatal(err)
				}
				tick, _ := time.ParseDuration(res.Tick)
				codec, _ := idkit.NewCodec(specs[gen])
				for _, text := range next.Text {
					id, err := codec.Parse(text)
					if err != nil {
						t.Fatal(err)
					}
					p, err := codec.Decode(id)
					if err != nil {
						t.Fatal(err)
					}
					own, err := c.bounds(&v1.BoundsRequest{Generator: gen, From: idkit.FormatTime(p.Time), To: idkit.FormatTime(p.Time.Add(tick))})
					if err != nil {
						t.Fatal(err)
					}
					olo, ohi := boundsIDs(t, own)
					if idkit.Compare(id, olo) < 0 || idkit.Compare(id, ohi) > 0 {
						t.Fatalf("%s: %s (time %s) outside the bounds of its tick %s..%s", gen, id, p.Time, olo, ohi)
					}
					before, err := c.bounds(&v1.BoundsRequest{Generator: gen, To: idkit.FormatTime(p.Time)})
					if err != nil {
						t.Fatal(err)
					}
					after, err := c.bounds(&v1.BoundsRequest{Generator: gen, At: idkit.FormatTime(p.Time.Add(tick))})
					if err != nil {
						t.Fatal(err)
					}
					_, bhi := boundsIDs(t, before)
					alo, _ := boundsIDs(t, after)
					if idkit.Compare(id, bhi) <= 0 || idkit.Compare(id, alo) >= 0 {
						t.Fatalf("%s: %s within the bounds of a neighbouring tick (..%s, %s..)", gen, id, bhi, alo)
					}
					if after.Where != "id >= "+strings.Split(after.Where, " ")[2] || strings.Contains(after.Where, "AND") {
						t.Fatalf("%s: at answers where %q", gen, after.Where)
					}
					break // one ID per generator and client keeps the test short; all 50 were issued
				}
			}
			for _, tc := range []struct {
				req  *v1.BoundsRequest
				code connect.Code
				msg  string
			}{
				{&v1.BoundsRequest{Generator: "v4"}, connect.CodeInvalidArgument, "idkit: IDs not ordered by time: uuidv4: its IDs are not ordered by time"},
				{&v1.BoundsRequest{Generator: "orders", To: "2000-01-01"}, connect.CodeInvalidArgument, "idkit: no IDs in the time range: no ID has a decoded time before 2000-01-01T00:00:00.000Z: its first tick starts at 2010-11-04T01:42:54.657Z"},
				{&v1.BoundsRequest{Generator: "orders", From: "2026-01-01T00:00:00.0001Z", To: "2026-01-01T00:00:00.0002Z"}, connect.CodeInvalidArgument, "idkit: no IDs in the time range"},
				{&v1.BoundsRequest{Generator: "orders", From: "2026-01-02", To: "2026-01-01"}, connect.CodeInvalidArgument, "idkit: no IDs in the time range"},
				{&v1.BoundsRequest{Generator: "orders", From: "yesterday"}, connect.CodeInvalidArgument, `from="yesterday": want an RFC 3339 time`},
				{&v1.BoundsRequest{Generator: "orders", At: "2026-01-01", To: "2026-01-02"}, connect.CodeInvalidArgument, "give at alone, or from and to"},
				{&v1.BoundsRequest{Generator: "nope"}, connect.CodeNotFound, `unknown generator "nope"`},
			} {
				_, err := c.bounds(tc.req)
				if connect.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("Bounds(%v) = %v; want %v with %q", tc.req, err, tc.code, tc.msg)
				}
			}
		})
	}
}

// TestPublicText: generators with prefix= or mask= answer text IDs in their public form on
// every stack and protocol and in plain HTTP, their numbers and bytes in the stored form;
// Decode reads the public form, and refuses masked generators unless AllowUnmask.
func TestPublicText(t *testing.T) {
	t.Setenv(maskEnv, "0123456789abcdef:fedcba9876543210")
	for _, allow := range []bool{false, true} {
		cfg := apiGens()
		cfg.AllowUnmask = allow
		r := start(t, cfg)
		for _, c := range apiClients(t, r) {
			for _, g := range cfg.Generators {
				codec, err := idkit.NewCodec(g.Spec)
				if err != nil {
					t.Fatal(err)
				}
				masked := strings.Contains(g.Spec, "mask=")
				res, err := c.next(&v1.NextRequest{Generator: g.Name, Count: 20, Text: true})
				if err != nil {
					t.Fatalf("%s %s: %v", c.name, g.Name, err)
				}
				for i, stored := range toIDs(t, res) {
					id, err := codec.Parse(res.Text[i])
					if err != nil || id.Bytes16() != stored.Bytes16() || id.Bits() != stored.Bits() {
						t.Fatalf("%s %s: text %q parses to %s, %v; want the stored %s", c.name, g.Name, res.Text[i], id, err, stored)
					}
					want, err := idkit.FormatID(codec, id)
					if err != nil || res.Text[i] != want {
						t.Fatalf("%s %s: text %q, want the public text %q (%v)", c.name, g.Name, res.Text[i], want, err)
					}
					if (masked || strings.Contains(g.Spec, "prefix=")) == (want == id.String()) {
						t.Fatalf("%s %s: public text %q against stored %s", c.name, g.Name, want, id)
					}
					if i > 0 {
						continue
					}
					d, err := c.decode(&v1.DecodeRequest{Generator: g.Name, Id: res.Text[i]})
					if masked && !allow {
						if connect.CodeOf(err) != connect.CodePermissionDenied || !strings.Contains(err.Error(), "--allow-unmask") || !strings.Contains(err.Error(), "mask=env:"+maskEnv) {
							t.Fatalf("%s %s: Decode of a masked ID without AllowUnmask: %v; want PERMISSION_DENIED naming --allow-unmask", c.name, g.Name, err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("%s %s: Decode(%q): %v", c.name, g.Name, res.Text[i], err)
					}
					p, _ := codec.Decode(id)
					wantStored := ""
					if want != id.String() {
						wantStored = id.String()
					}
					if d.Text != want || d.Stored != wantStored || d.Time != idkit.FormatTime(p.Time) && !p.Time.IsZero() {
						t.Fatalf("%s %s: Decode = text %q stored %q time %q; want %q, %q, %q", c.name, g.Name, d.Text, d.Stored, d.Time, want, wantStored, idkit.FormatTime(p.Time))
					}
					// The stored form, as a client without the generator's codec sends it, gives
					// the same answer; a ULID's text for a 64-bit generator (and the reverse) is
					// refused as Parse refuses it.
					ds, err := c.decode(&v1.DecodeRequest{Generator: g.Name, Id: id.String(), Stored: true})
					if err != nil || !proto.Equal(ds, d) {
						t.Fatalf("%s %s: Decode of the stored %s = %v, %v; want %v", c.name, g.Name, id, ds, err, d)
					}
					other := "01ARZ3NDEKTSV4RRFFQ69G5FAV"
					if id.Bits() == 128 {
						other = "12345"
					}
					if _, err := c.decode(&v1.DecodeRequest{Generator: g.Name, Id: other, Stored: true}); connect.CodeOf(err) != connect.CodeInvalidArgument {
						t.Fatalf("%s %s: Decode of the stored %s: %v; want INVALID_ARGUMENT", c.name, g.Name, other, err)
					}
				}
			}
		}
		// Plain HTTP: the same public text, and the same refusal.
		for _, g := range cfg.Generators {
			codec, _ := idkit.NewCodec(g.Spec)
			body, status := plainGet(t, r, "/v1/next/"+g.Name+"?n=5")
			if status != 200 {
				t.Fatalf("%s: %d %s", g.Name, status, body)
			}
			for line := range strings.Lines(body) {
				line = strings.TrimSuffix(line, "\n")
				id, err := codec.Parse(line)
				if err != nil {
					t.Fatalf("%s: plain text %q: %v", g.Name, line, err)
				}
				if want, _ := idkit.FormatID(codec, id); want != line {
					t.Fatalf("%s: plain text %q, want %q", g.Name, line, want)
				}
				body, status := plainGet(t, r, "/v1/decode/"+g.Name+"/"+url.PathEscape(line))
				masked := strings.Contains(g.Spec, "mask=")
				switch {
				case masked && !allow:
					if status != 403 || !strings.Contains(body, "--allow-unmask") {
						t.Fatalf("%s: plain decode of a masked ID: %d %q; want 403", g.Name, status, body)
					}
				case status != 200:
					t.Fatalf("%s: plain decode: %d %q", g.Name, status, body)
				default:
					var d v1.DecodeResponse
					if err := protojson.Unmarshal([]byte(body), &d); err != nil || d.Text != line {
						t.Fatalf("%s: plain decode %q: %v", g.Name, body, err)
					}
				}
				break
			}
		}
	}
}

// plainGet GETs a path and returns the body and status.
func plainGet(t *testing.T, r *running, path string) (string, int) {
	t.Helper()
	res, err := r.client.Get(r.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), res.StatusCode
}

// TestPlainDecodeAndBounds: GET /v1/decode and /v1/bounds answer exactly what the RPCs answer
// (as Connect JSON), refuse what they cannot read with a 4xx status and a reason, and read
// their query strings strictly.
func TestPlainDecodeAndBounds(t *testing.T) {
	t.Setenv(maskEnv, "0123456789abcdef:fedcba9876543210")
	r := start(t, apiGens())
	c := idkitv1connect.NewIDServiceClient(h2(), r.url)
	ctx := context.Background()
	next, err := c.Next(ctx, connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 1, Text: true}))
	if err != nil {
		t.Fatal(err)
	}
	id := next.Msg.Text[0]
	rpc, err := c.Decode(ctx, connect.NewRequest(&v1.DecodeRequest{Generator: "orders", Id: id}))
	if err != nil {
		t.Fatal(err)
	}
	body, status := plainGet(t, r, "/v1/decode/orders/"+id)
	var got v1.DecodeResponse
	if status != 200 || protojson.Unmarshal([]byte(body), &got) != nil || !proto.Equal(&got, rpc.Msg) {
		t.Fatalf("GET /v1/decode: %d %s; want %v", status, body, rpc.Msg)
	}
	var plain map[string]any // what a shell script's jq sees
	if err := json.Unmarshal([]byte(body), &plain); err != nil || plain["time"] != rpc.Msg.Time || plain["text"] != id {
		t.Fatalf("GET /v1/decode: %s (%v)", body, err)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(rpc.Msg.Time) {
		t.Errorf("Decode time %q: want RFC 3339 with milliseconds always shown, as idbench inspect prints", rpc.Msg.Time)
	}

	for _, q := range []struct {
		query string
		req   *v1.BoundsRequest
	}{
		{"from=2026-01-01T09:30:00Z&to=2026-01-01T09:31:00Z", &v1.BoundsRequest{From: "2026-01-01T09:30:00Z", To: "2026-01-01T09:31:00Z"}},
		{"from=2026-01-01", &v1.BoundsRequest{From: "2026-01-01"}},
		{"to=1767259800000", &v1.BoundsRequest{To: "1767259800000"}},
		{"at=2026-01-01T09:30:00.0005Z", &v1.BoundsRequest{At: "2026-01-01T09:30:00.0005Z"}},
		{"", &v1.BoundsRequest{}},
	} {
		for _, gen := range []string{"orders", "sessions", "users", "hidden"} {
			req := proto.Clone(q.req).(*v1.BoundsRequest)
			req.Generator = gen
			want, err := c.Bounds(ctx, connect.NewRequest(req))
			if err != nil {
				t.Fatalf("%s %s: %v", gen, q.query, err)
			}
			body, status := plainGet(t, r, "/v1/bounds/"+gen+"?"+q.query)
			var got v1.BoundsResponse
			if status != 200 || protojson.Unmarshal([]byte(body), &got) != nil || !proto.Equal(&got, want.Msg) {
				t.Fatalf("GET /v1/bounds/%s?%s: %d %s; want %v", gen, q.query, status, body, want.Msg)
			}
		}
	}

	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/v1/decode/orders/12x4", 400, `"12x4" is not a decimal ID`},
		{"/v1/decode/nope/1", 404, `unknown generator "nope"`},
		{"/v1/decode/orders/" + id + "?x=1", 400, `unknown query parameter "x" (this path takes none)`},
		{"/v1/decode/orders/" + id + "?n=1;", 400, "semicolon"},
		{"/v1/decode/hidden/123", 403, "--allow-unmask"},
		{"/v1/bounds/v4", 400, "uuidv4: its IDs are not ordered by time"},
		{"/v1/bounds/orders?from=2026-01-01&from=2026-01-02", 400, "from is given more than once"},
		{"/v1/bounds/orders?from=", 400, "from= is empty"},
		{"/v1/bounds/orders?until=2026-01-01", 400, `unknown query parameter "until" (known: from, to, at)`},
		{"/v1/bounds/orders?at=2026-01-01&to=2026-01-02", 400, "give at alone"},
		{"/v1/bounds/orders?to=2000-01-01", 400, "no IDs in the time range"},
		{"/v1/bounds/orders?from=soon", 400, `from="soon": want an RFC 3339 time`},
		{"/v1/bounds/orders?from=%zz", 400, "invalid URL escape"},
		{"/v1/bounds/nope", 404, `unknown generator "nope"`},
	} {
		body, status := plainGet(t, r, tc.path)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: %d %q; want %d with %q", tc.path, status, body, tc.status, tc.want)
		}
	}
}

// TestServiceDocExamples runs the curl commands of docs/service.md that take IDs apart and
// bound time ranges against a server with the same layouts, and checks the answers printed
// under them byte for byte.
func TestServiceDocExamples(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "service.md"))
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, server.Config{Generators: []server.Generator{
		{Name: "orders", Spec: "snowflake:layout=twitter,worker=1"}, // the doc's orders lease their node: same layout
		{Name: "sessions", Spec: "ulid"},
	}})
	lines := strings.Split(string(doc), "\n")
	const prompt = "$ curl -s '127.0.0.1:7070"
	ran := 0
	for i, line := range lines {
		path, ok := strings.CutPrefix(line, prompt)
		if !ok || i+1 == len(lines) || !(strings.HasPrefix(path, "/v1/bounds/") || strings.HasPrefix(path, "/v1/decode/")) {
			continue
		}
		path = strings.TrimSuffix(path, "'")
		body, status := plainGet(t, r, path)
		if status != 200 || strings.TrimSuffix(body, "\n") != lines[i+1] {
			t.Errorf("docs/service.md line %d: GET %s answers %d\n%s\nthe doc shows\n%s", i+1, path, status, body, lines[i+1])
		}
		ran++
	}
	if ran != 3 {
		t.Errorf("ran %d examples of docs/service.md; want its 3 (bounds, bounds at, decode)", ran)
	}
}
