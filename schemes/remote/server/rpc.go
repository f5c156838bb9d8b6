package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
)

// service implements the IDService RPCs.
type service struct{ s *Server }

var _ idkitv1connect.IDServiceHandler = (*service)(nil)

// lookup returns the named generator, or NOT_FOUND naming the known ones.
func (s *Server) lookup(name string) (*generator, error) {
	g, ok := s.gens[name]
	if !ok {
		if name == "" {
			return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("no generator named (want one of "+s.names()+")"))
		}
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown generator %s (known: %s)", strconv.Quote(cut(name)), s.names()))
	}
	if s.isClosed() {
		return nil, connect.NewError(connect.CodeUnavailable, errClosed)
	}
	return g, nil
}

func (s *Server) isClosed() bool { return s.closed.Load() }

func (s *Server) names() string {
	out := ""
	for i, g := range s.order {
		if i > 0 {
			out += ", "
		}
		out += g.name
	}
	return out
}

// cut shortens untrusted text for an error message.
func cut(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// checkCount refuses a count outside 1..MaxCount with INVALID_ARGUMENT.
func (s *Server) checkCount(n int64) error {
	if n < 1 || n > int64(s.cfg.MaxCount) {
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("count %d: want 1 to %d", n, s.cfg.MaxCount))
	}
	return nil
}

// The RPCs, written once: the Connect handler (service) and the gRPC server (grpcService,
// grpc.go) wrap them. Errors are *connect.Error, whose codes are gRPC's.

// nextIDs issues IDs. With a connection budget b it first reserves the answer's size from it
// (waiting while the connection's earlier answers are unread) and returns how much it
// reserved, which the caller gives back once the answer is written; on error it has given it
// back itself.
func (s *Server) nextIDs(ctx context.Context, req *v1.NextRequest, b *connBudget) (*v1.NextResponse, int64, error) {
	g, err := s.lookup(req.GetGenerator())
	if err != nil {
		return nil, 0, err
	}
	n := req.GetCount()
	if err := s.checkCount(int64(n)); err != nil {
		return nil, 0, err
	}
	var held int64
	if b != nil {
		est := heldBytes(int(n), g.bits.Load(), req.GetText())
		if req.GetText() {
			est += int64(n) * g.textExtra
		}
		if est >= minCounted {
			if err := b.acquire(ctx, est); err != nil {
				return nil, 0, connect.NewError(codeOf(err), fmt.Errorf("waiting for the connection's earlier answers to be read: %w", err))
			}
			held = est
		}
	}
	out := &v1.NextResponse{}
	var textErr error
	err = g.next(ctx, int(n), func(ids []idkit.ID) {
		if ids[0].Bits() == 64 {
			out.Ids64 = make([]uint64, len(ids))
			for i, id := range ids {
				out.Ids64[i] = id.Uint64()
			}
		} else {
			back := make([]byte, 16*len(ids))
			out.Ids128 = make([][]byte, len(ids))
			for i, id := range ids {
				b := back[16*i : 16*i+16 : 16*i+16]
				v := id.Bytes16()
				copy(b, v[:])
				out.Ids128[i] = b
			}
		}
		if req.GetText() {
			out.Text = make([]string, len(ids))
			for i, id := range ids {
				// The public text: with the spec's prefix=, masked with its mask=.
				if out.Text[i], textErr = idkit.FormatID(g.s, id); textErr != nil {
					return
				}
			}
		}
	})
	if err == nil && textErr != nil {
		err = connect.NewError(connect.CodeInternal, fmt.Errorf("generator %q: writing the public text: %w", g.name, textErr))
	}
	if err != nil {
		b.release(held)
		return nil, 0, err
	}
	return out, held, nil
}

// decode takes an ID apart: it reads the generator's public text (or its canonical text when
// the two are the same) and refuses a masked generator unless Config.AllowUnmask.
func (s *Server) decode(req *v1.DecodeRequest) (*v1.DecodeResponse, error) {
	g, err := s.lookup(req.GetGenerator())
	if err != nil {
		return nil, err
	}
	if g.maskRef != "" && !s.cfg.AllowUnmask {
		return nil, connect.NewError(connect.CodePermissionDenied, fmt.Errorf(
			"generator %q masks its IDs (mask=%s): decoding one would reveal the time, node and counts the mask hides; the operator can allow it (idkitd --allow-unmask)", g.name, g.maskRef))
	}
	text := req.GetId()
	if text == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("no id given (want an ID's text as Next writes it)"))
	}
	parse := g.s.Parse
	if req.GetStored() {
		parse = func(text string) (idkit.ID, error) { return parseStored(g.s, text) }
	}
	id, err := parse(text)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	p, err := g.s.Decode(id)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	public, err := idkit.FormatID(g.s, id)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	out := &v1.DecodeResponse{Version: int32(p.Version), Text: public}
	if stored := id.String(); stored != public {
		out.Stored = stored
	}
	if !p.Time.IsZero() {
		out.Time = idkit.FormatTime(p.Time)
		out.UnixNanos = p.Time.UnixNano()
	}
	if p.HasNode {
		out.Node = &p.Node
	}
	if p.HasSeq {
		out.Seq = &p.Seq
	}
	for _, f := range p.Fields {
		out.Fields = append(out.Fields, &v1.Field{Name: f.Name, Value: f.Value})
	}
	return out, nil
}

// generators lists the generators.
func (s *Server) generators() *v1.GeneratorsResponse {
	out := &v1.GeneratorsResponse{}
	for _, g := range s.order {
		out.Generators = append(out.Generators, g.describe())
	}
	return out
}

// Next issues IDs. What it reserves from the connection's budget is given back by the handler
// in routes once the answer is written.
func (x *service) Next(ctx context.Context, req *connect.Request[v1.NextRequest]) (*connect.Response[v1.NextResponse], error) {
	h, _ := ctx.Value(heldKey{}).(*held)
	res, n, err := x.s.nextIDs(ctx, req.Msg, h.budget())
	h.add(n)
	return respond(res, err)
}

// Decode takes an ID apart.
func (x *service) Decode(_ context.Context, req *connect.Request[v1.DecodeRequest]) (*connect.Response[v1.DecodeResponse], error) {
	return respond(x.s.decode(req.Msg))
}

// Bounds answers the IDs of a time range.
func (x *service) Bounds(_ context.Context, req *connect.Request[v1.BoundsRequest]) (*connect.Response[v1.BoundsResponse], error) {
	return respond(x.s.bounds(req.Msg))
}

// Generators lists the generators.
func (x *service) Generators(context.Context, *connect.Request[v1.GeneratorsRequest]) (*connect.Response[v1.GeneratorsResponse], error) {
	return connect.NewResponse(x.s.generators()), nil
}

// Ping answers the empty message.
func (x *service) Ping(context.Context, *connect.Request[v1.PingRequest]) (*connect.Response[v1.PingResponse], error) {
	return connect.NewResponse(&v1.PingResponse{}), nil
}

// respond wraps an RPC's result for Connect.
func respond[T any](msg *T, err error) (*connect.Response[T], error) {
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(msg), nil
}

// describe is the generator as Generators lists it.
func (g *generator) describe() *v1.Generator {
	d := &v1.Generator{Name: g.name, Spec: idkit.Redact(g.spec), Scheme: idkit.Redact(g.s.Name()), Bits: g.bits.Load(), Ready: true}
	if n, ok := idkit.As[idkit.Noder](g.s); ok {
		node := n.Node()
		d.Node = &node
	}
	if l, ok := idkit.As[idkit.Layouter](g.s); ok {
		lay := l.Layout()
		d.Layout = lay.String()
		d.IdsPerSecond = lay.IDsPerSecond()
	}
	if err := g.err(); err != nil {
		d.Ready, d.Reason = false, idkit.Redact(err.Error())
	}
	d.Durability = durabilityProto(g.durability())
	return d
}

// parseStored reads the canonical text of a stored ID of scheme s and has s's own Parse check
// it, through its public text, so that an ID of another kind or width is refused as Parse
// refuses it.
func parseStored(s idkit.Scheme, text string) (idkit.ID, error) {
	id, err := idkit.Parse(text)
	if err != nil {
		return idkit.ID{}, err
	}
	public, err := idkit.FormatID(s, id)
	if err != nil {
		return idkit.ID{}, err
	}
	return s.Parse(public)
}
