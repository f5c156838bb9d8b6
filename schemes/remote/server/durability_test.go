package server_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
)

// durToy is toy with stores behind it: an idkit.Durabler whose report the test sets.
type durToy struct {
	*toy
	dur atomic.Pointer[[]idkit.Durability]
}

func (d *durToy) Durability() []idkit.Durability { return *d.dur.Load() }

var durToys sync.Map // key -> *durToy

func init() {
	idkit.Register("toydur", func(_ context.Context, sp *idkit.Settings) (idkit.Scheme, error) {
		key, _ := sp.Lookup("key")
		if err := sp.Done("key"); err != nil {
			return nil, err
		}
		d := &durToy{toy: &toy{name: "toydur"}}
		d.dur.Store(&[]idkit.Durability{{Store: "store 1 postgres://ids:hunter2@db.example:5432/ids", Class: "sync",
			Reason: "synchronous_standby_names = 'ANY 1 (s1)', s1 sync", Epoch: "7312/3", Failovers: 2}})
		if strings.HasPrefix(key, "async") { // an asynchronous standby, accepted from the start
			d.dur.Store(&[]idkit.Durability{{Store: "store 1 postgres://db.example:5432/ids?durability=async", Class: "async",
				Reason: "standby s1 async", Epoch: "7312/3", AsyncAccepted: true}})
		}
		durToys.Store(key, d)
		return d, nil
	})
}

// TestDurabilityShown: a generator whose scheme rests on a store shows the store's durability
// class, reason, epoch and failovers in the Generators answer, on /readyz to a caller with a
// token only (without one, /readyz says "ready" and nothing else), and in the log at start and
// again when the class changes, as a warning when the class is async (also an async store
// accepted from the start, which was logged at INFO); the store's password is never shown.
func TestDurabilityShown(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Tokens = []string{"s3cret"}
	cfg.Generators = append(cfg.Generators, server.Generator{Name: "blocks", Spec: "toydur:key=shown"},
		server.Generator{Name: "lagging", Spec: "toydur:key=async-start"})
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	r := start(t, cfg)

	c := idkitv1connect.NewIDServiceClient(h2(), r.url, connect.WithProtoJSON())
	req := connect.NewRequest(&v1.GeneratorsRequest{})
	req.Header().Set("Authorization", "Bearer s3cret")
	g, err := c.Generators(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	gens := g.Msg.Generators
	i := slices.IndexFunc(gens, func(g *v1.Generator) bool { return g.Name == "blocks" })
	if i < 0 || len(gens[i].Durability) != 1 {
		t.Fatalf("Generators: %v", gens)
	}
	d := gens[i].Durability[0]
	if d.Store != "store 1 postgres://ids:xxxxx@db.example:5432/ids" || d.Class != "sync" || d.Epoch != "7312/3" ||
		d.Failovers != 2 || d.AsyncAccepted || !strings.Contains(d.Reason, "synchronous_standby_names") {
		t.Errorf("blocks durability = %v", d)
	}
	for _, o := range gens {
		if o.Name != "blocks" && o.Name != "lagging" && len(o.Durability) != 0 {
			t.Errorf("%s has no store but lists durability %v", o.Name, o.Durability)
		}
	}
	if _, err := c.Generators(context.Background(), connect.NewRequest(&v1.GeneratorsRequest{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("Generators without a token: %v", err)
	}

	readyz := func(auth string) (int, string) {
		t.Helper()
		code, b := getAuth(t, r, "/readyz", auth)
		return code, string(b)
	}
	if code, body := readyz(""); code != 200 || body != "ready\n" {
		t.Errorf("/readyz without a token: %d %q, want 200 \"ready\\n\"", code, body)
	}
	want := "ready\n" + `generator "blocks" durability: store 1 postgres://ids:xxxxx@db.example:5432/ids: sync: ` +
		`synchronous_standby_names = 'ANY 1 (s1)', s1 sync; epoch 7312/3; failovers seen 2` + "\n"
	want += `generator "lagging" durability: store 1 postgres://db.example:5432/ids?durability=async: async ` +
		`(accepted by durability=async: failover fencing is the only protection): standby s1 async; epoch 7312/3` + "\n"
	if code, body := readyz("Bearer s3cret"); code != 200 || body != want {
		t.Errorf("/readyz with a token: %d\n%s\nwant\n%s", code, body, want)
	}

	logs.waitFor(t, `level=INFO msg="generator durability" generator=blocks store="store 1 postgres://ids:xxxxx@db.example:5432/ids" class=sync`)
	logs.waitFor(t, `level=WARN msg="generator durability" generator=lagging store="store 1 postgres://db.example:5432/ids?durability=async" class=async`)
	toy, _ := durToys.Load("shown")
	toy.(*durToy).dur.Store(&[]idkit.Durability{{Store: "store 1 postgres://ids:hunter2@db.example:5432/ids", Class: "async",
		Reason: "standby s1 async", Epoch: "7312/3", AsyncAccepted: true, Failovers: 2}})
	logs.waitFor(t, `level=WARN msg="generator durability changed" generator=blocks store="store 1 postgres://ids:xxxxx@db.example:5432/ids" class=async reason="standby s1 async" epoch=7312/3 async_accepted=true failovers=2`)
	if code, body := readyz("Bearer s3cret"); code != 200 || !strings.Contains(body, "async (accepted by durability=async") {
		t.Errorf("/readyz after the change: %d %q", code, body)
	}
	logs.mu.Lock()
	all := logs.b.String()
	logs.mu.Unlock()
	if strings.Contains(all, "hunter2") {
		t.Errorf("the log shows the store's password:\n%s", all)
	}
}
