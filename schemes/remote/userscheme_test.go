package remote_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench"
	"github.com/idkit/idkit/schemes/remote/server"
)

// counter is a user's own scheme, registered below as "counter" the way any package adds one:
// 64-bit IDs counting up from start=N. It is not a good ID scheme (it forgets its place on
// restart); it shows that the service, the remote scheme and dbbench take any registered name.
type counter struct {
	mu   sync.Mutex
	n    uint64
	name string
}

func init() {
	idkit.Register("counter", func(_ context.Context, sp *idkit.Settings) (idkit.Scheme, error) {
		start, _, err := sp.Uint("start", 1<<63)
		if err != nil {
			return nil, err
		}
		if err := sp.Done("start"); err != nil {
			return nil, err
		}
		return &counter{n: start, name: fmt.Sprintf("counter:start=%d", start)}, nil
	})
}

func (c *counter) Name() string { return c.name }

func (c *counter) Next() (idkit.ID, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return idkit.FromUint64(c.n), nil
}

// NextBatch reserves the whole batch under one lock, as the service asks of a Batcher.
func (c *counter) NextBatch(dst []idkit.ID) error {
	c.mu.Lock()
	first := c.n + 1
	c.n += uint64(len(dst))
	c.mu.Unlock()
	for i := range dst {
		dst[i] = idkit.FromUint64(first + uint64(i))
	}
	return nil
}

func (c *counter) Parse(text string) (idkit.ID, error) {
	id, err := idkit.Parse(text)
	if err == nil && id.Bits() != 64 {
		err = fmt.Errorf("%w: %q is not a counter ID", idkit.ErrScheme, text)
	}
	return id, err
}

func (c *counter) Decode(id idkit.ID) (idkit.Parts, error) {
	return idkit.Parts{Seq: id.Uint64(), HasSeq: true}, nil
}

// TestUserSchemeEverywhere serves the user's scheme from the service and benchmarks it with
// dbbench twice, in process and through the service, like any built-in scheme.
func TestUserSchemeEverywhere(t *testing.T) {
	addr, _ := serve(t, "127.0.0.1:0", server.Generator{Name: "mine", Spec: "counter:start=1000"})
	remoteSpec := "remote:addr=" + addr + ",generator=mine,prefetch=1000"
	rep, err := dbbench.Run(context.Background(), dbbench.Config{
		DB:         dbbench.EngineSQLite,
		Schemes:    []string{"counter", remoteSpec, "snowflake"},
		Rows:       3000,
		Repeat:     1,
		WarmupRows: -1,
		Lookups:    20,
		Points:     5,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"counter:start=0", remoteSpec} {
		r := rep.Results[i]
		if r.Spec != want || r.Rows != 3000 || r.RowsPerSec <= 0 || r.ColumnType != "BIGINT" {
			t.Errorf("row %d: spec %q, %d rows at %v/s in %s; want %q, 3000 rows", i, r.Spec, r.Rows, r.RowsPerSec, r.ColumnType, want)
		}
	}
}

// Example_userScheme serves a scheme of the program's own ("counter", registered in an init
// function of this file) from an in-process idkitd, and draws IDs from it through the remote
// scheme.
func Example_userScheme() {
	srv, err := server.New(server.Config{
		Listen:        "127.0.0.1:0",
		Generators:    []server.Generator{{Name: "mine", Spec: "counter:start=41"}},
		ShutdownDelay: -1, // stop at once: no load balancer to tell first
	})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	addrs, wait, err := srv.Start(ctx)
	if err != nil {
		panic(err)
	}

	s, err := idkit.New("remote:addr=" + addrs.HTTP + ",generator=mine")
	if err != nil {
		panic(err)
	}
	for range 3 {
		id, _ := s.Next()
		fmt.Println(id)
	}
	s.(interface{ Close() error }).Close()
	stop()
	fmt.Println("served until stopped:", wait())
	// Output:
	// 42
	// 43
	// 44
	// served until stopped: <nil>
}

// opaque is a counter whose name no codec in the client can read, so the remote scheme parses
// and decodes its IDs through the service.
type opaque struct{ counter }

func (o *opaque) Name() string { return "opaque (no local codec)" }

func init() {
	idkit.Register("opaque", func(_ context.Context, sp *idkit.Settings) (idkit.Scheme, error) {
		return &opaque{}, sp.Done()
	})
}

// TestRemoteDecodeThroughService parses and decodes through the service, over every protocol:
// the service's INVALID_ARGUMENT for an ID of another scheme is idkit.ErrScheme. The generator
// "ord" has a prefix, so its public text is one this program cannot write without a codec: the
// remote scheme sends the stored form and says so (before it did, every Parse and Decode of
// "ord" failed).
func TestRemoteDecodeThroughService(t *testing.T) {
	addr, _ := serve(t, "127.0.0.1:0", server.Generator{Name: "o", Spec: "opaque"}, server.Generator{Name: "ord", Spec: "opaque:prefix=ord"})
	for _, c := range []struct{ gen, extra string }{
		{"o", ""}, {"o", ",protocol=connect"}, {"o", ",protocol=json"},
		{"ord", ""}, {"ord", ",protocol=connect"}, {"ord", ",protocol=json"},
	} {
		t.Run(c.gen+"/"+cmp.Or(strings.TrimPrefix(c.extra, ","), "default"), func(t *testing.T) {
			s := open(t, "remote:addr="+addr+",generator="+c.gen+c.extra)
			id, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			back, err := s.Parse(id.String())
			if err != nil || back != id {
				t.Fatalf("Parse(%v) = %v, %v", id, back, err)
			}
			p, err := s.Decode(id)
			if err != nil || !p.HasSeq || p.Seq != id.Uint64() {
				t.Fatalf("Decode(%v) = %+v, %v", id, p, err)
			}
			if _, err := s.Parse("01ARZ3NDEKTSV4RRFFQ69G5FAV"); !errors.Is(err, idkit.ErrScheme) {
				t.Errorf("Parse of a ULID: %v, want ErrScheme", err)
			}
			if _, err := s.Parse("12x"); !errors.Is(err, idkit.ErrSyntax) {
				t.Errorf("Parse of bad text: %v, want ErrSyntax", err)
			}
		})
	}
}
