package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/idkit/idkit/layouts"
)

// fleetKeys draws n keys of spec from a simulated fleet of k nodes.
func fleetKeys(t *testing.T, spec string, k, n int, fs FleetSettings) []Value {
	t.Helper()
	r, err := ResolveRow(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	r.Fleet = fs
	src, err := NewSource(r, k)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Fleet == nil {
		t.Fatal("no fleet simulated")
	}
	out := make([]Value, n)
	for i := range out {
		if err := src.Next(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func less(a, b Value, col Column) bool {
	switch col {
	case ColBigint:
		return a.I64 < b.I64
	case ColText:
		return a.Str < b.Str
	}
	return bytes.Compare(a.B16[:], b.B16[:]) < 0
}

// keyMillis returns the Unix millisecond (or, for Snowflake, the tick) a key carries.
func keyMillis(v Value, col Column) int64 {
	if col == ColBigint {
		return layouts.Twitter.Decompose(uint64(v.I64)).Tick
	}
	return int64(binary.BigEndian.Uint64(v.B16[:8]) >> 16)
}

// inversions counts keys smaller than their predecessor: how far the table sees the keys
// from arriving in order.
func inversions(vs []Value, col Column) int {
	n := 0
	for i := 1; i < len(vs); i++ {
		if less(vs[i], vs[i-1], col) {
			n++
		}
	}
	return n
}

func TestFleetOrder(t *testing.T) {
	t.Parallel()
	const n = 20000
	for _, tt := range []struct {
		spec string
		col  Column
	}{{"snowflake", ColBigint}, {"ulid", ColUUID}, {"uuidv7", ColUUID}} {
		t.Run(tt.spec, func(t *testing.T) {
			t.Parallel()
			// One node: its keys strictly increase, as a single generator's do.
			one := fleetKeys(t, tt.spec, 1, n, FleetSettings{Rate: 100000, Skew: time.Millisecond, Seed: 1})
			if inv := inversions(one, tt.col); inv != 0 {
				t.Errorf("1 node: %d keys below their predecessor, want 0", inv)
			}
			// Perfectly agreeing clocks: keys may swap within a millisecond (node order,
			// random bits) but their time never goes back.
			synced := fleetKeys(t, tt.spec, 64, n, FleetSettings{Rate: 100000, Skew: 0, Seed: 1})
			for i := 1; i < n; i++ {
				if keyMillis(synced[i], tt.col) < keyMillis(synced[i-1], tt.col) {
					t.Fatalf("synced clocks: key %d is from ms %d, after ms %d", i, keyMillis(synced[i], tt.col), keyMillis(synced[i-1], tt.col))
				}
			}
			// Skewed clocks: more nodes, more keys that land behind the right edge.
			prev := -1
			for _, k := range []int{1, 16, 256} {
				vs := fleetKeys(t, tt.spec, k, n, FleetSettings{Rate: 100000, Skew: time.Millisecond, Seed: 1})
				inv := inversions(vs, tt.col)
				if k > 1 && inv <= prev {
					t.Errorf("%d nodes: %d inversions, not more than %d with fewer nodes", k, inv, prev)
				}
				prev = inv
				seen := make(map[Value]bool, n)
				for _, v := range vs {
					if seen[v] {
						t.Fatalf("%d nodes: duplicate key %+v", k, v)
					}
					seen[v] = true
				}
			}
		})
	}
}

// TestFleetRate checks that simulated time advances at the fleet rate: n keys at R per
// second span n/R seconds of key time, whatever the number of nodes.
func TestFleetRate(t *testing.T) {
	t.Parallel()
	const n, rate = 50000, 100000.0
	for _, k := range []int{1, 16, 1024} {
		vs := fleetKeys(t, "ulid", k, n, FleetSettings{Rate: rate, Skew: 0, Seed: 1})
		span := time.Duration(keyMillis(vs[n-1], ColUUID)-keyMillis(vs[0], ColUUID)) * time.Millisecond
		want := time.Duration(n / rate * float64(time.Second))
		if span < want*9/10 || span > want*11/10 {
			t.Errorf("%d nodes: keys span %v, want about %v", k, span, want)
		}
	}
}

// TestFleetNodes checks that every simulated Snowflake node uses its own node value.
func TestFleetNodes(t *testing.T) {
	t.Parallel()
	vs := fleetKeys(t, "snowflake", 1024, 20000, FleetSettings{Rate: 100000, Skew: time.Millisecond, Seed: 1})
	nodes := map[uint64]bool{}
	for _, v := range vs {
		nodes[layouts.Twitter.Decompose(uint64(v.I64)).Node] = true
	}
	// 20,000 Poisson arrivals over 1,024 equal nodes miss a node with probability e^-19.5.
	if len(nodes) != 1024 {
		t.Errorf("%d distinct node values, want 1024", len(nodes))
	}
	sony := fleetKeys(t, "sonyflake", 4, 100, FleetSettings{Rate: 1000, Seed: 1})
	machines := map[uint64]bool{}
	for _, v := range sony {
		machines[layouts.Sonyflake.Decompose(uint64(v.I64)).Node] = true
	}
	if len(machines) != 4 {
		t.Errorf("sonyflake: %d machines, want 4", len(machines))
	}
}

func TestFleetUUIDv7(t *testing.T) {
	t.Parallel()
	vs := fleetKeys(t, "uuidv7", 4, 1000, FleetSettings{Rate: 1000, Skew: 0, Seed: 1})
	now := time.Now()
	for _, v := range vs {
		u := uuid.UUID(v.B16)
		if u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("%s: version %d variant %v", u, u.Version(), u.Variant())
		}
		sec, nsec := u.Time().UnixTime()
		if d := now.Sub(time.Unix(sec, nsec)); d < -2*time.Second || d > 2*time.Second {
			t.Fatalf("%s: time %v, %v from now", u, time.Unix(sec, nsec), d)
		}
	}
}

func TestFleetErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		spec string
		k    int
		fs   FleetSettings
		want string
	}{
		{"snowflake:node_bits=2", 16, FleetSettings{Rate: 1}, "holds 4 nodes, fewer than --nodes 16"},
		{"snowflake", 2, FleetSettings{Rate: 0}, "want a positive number"},
		{"snowflake", 2, FleetSettings{Rate: 1, Skew: -1}, "want 0 or more"},
	} {
		r, err := ResolveRow(context.Background(), tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		_, err = newFleet(r, tt.k, tt.fs)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s with %d nodes: err %v, want %q", tt.spec, tt.k, err, tt.want)
		}
	}
}

// TestFleetClockNeverGoesBack is the regression test of issue 17 item 10: with two nodes at the
// default fleet rate a sonyflake node issues 500 IDs per 10 ms tick, more than its 256
// sequence numbers, so its generator sleeps into the next tick. The fleet then set the node's
// clock back to the true time of its next arrival, and the generator failed with "clock moved
// backwards". A simulated clock, like a real one, only moves forward.
func TestFleetClockNeverGoesBack(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		spec string
		k    int
	}{
		{"sonyflake", 2},
		{"sonyflake", 1},
		{"snowflake:seq_bits=2", 4}, // 4 IDs per ms a node, 25 arrive
	} {
		t.Run(fmt.Sprintf("%s/nodes=%d", tt.spec, tt.k), func(t *testing.T) {
			vs := fleetKeys(t, tt.spec, tt.k, 20000, FleetSettings{Rate: DefaultFleetRate, Skew: DefaultClockSkew, Seed: 1})
			seen := make(map[int64]bool, len(vs))
			for _, v := range vs {
				if seen[v.I64] {
					t.Fatalf("duplicate key %d", v.I64)
				}
				seen[v.I64] = true
			}
		})
	}
}
