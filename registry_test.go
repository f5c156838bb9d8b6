package idkit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idkit/idkit"
)

// counter is a user's own scheme, as a package outside idkit would write it: 64-bit IDs from
// an in-process counter, "counter:start=N". It is a toy (its IDs repeat after a restart), kept
// small so that the registration is what the example shows.
type counter struct {
	next  atomic.Uint64
	start uint64
}

func (c *counter) Name() string { return fmt.Sprintf("counter:start=%d", c.start) }

func (c *counter) Next() (idkit.ID, error) { return idkit.FromUint64(c.next.Add(1) - 1), nil }

func (c *counter) Parse(text string) (idkit.ID, error) {
	id, err := idkit.Parse(text)
	if err != nil {
		return idkit.ID{}, err
	}
	if id.Bits() != 64 {
		return idkit.ID{}, fmt.Errorf("%w: %s is not a counter ID", idkit.ErrScheme, text)
	}
	return id, nil
}

func (c *counter) Decode(id idkit.ID) (idkit.Parts, error) {
	if id.Bits() != 64 {
		return idkit.Parts{}, fmt.Errorf("%w: %s is not a counter ID", idkit.ErrScheme, id)
	}
	return idkit.Parts{Seq: id.Uint64(), HasSeq: true, Fields: []idkit.Field{{Name: "seq", Value: id.Uint64()}}}, nil
}

func buildCounter(_ context.Context, s *idkit.Settings) (idkit.Scheme, error) {
	start, _, err := s.Uint("start", 1<<63)
	if err != nil {
		return nil, err
	}
	if err := s.Done("start"); err != nil {
		return nil, err
	}
	c := &counter{start: start}
	c.next.Store(start)
	return c, nil
}

func init() { idkit.Register("counter", buildCounter) }

// Example_register adds a scheme of one's own to New: a package registers it from init, and
// every spec string, idbench and dbbench can then name it.
func Example_register() {
	// In the package that defines the scheme:
	//
	//	func init() { idkit.Register("counter", buildCounter) }
	s, err := idkit.New("Counter:start=41")
	if err != nil {
		panic(err)
	}
	a, _ := s.Next()
	b, _ := s.Next()
	fmt.Println(s.Name(), a, b)
	_, err = idkit.New("counter:start=x")
	fmt.Println(err)
	_, err = idkit.New("counter:step=2")
	fmt.Println(err)
	// Output:
	// counter:start=41 41 42
	// idkit: bad spec "counter:start=x": start=x: want a whole number from 0 to 9223372036854775808
	// idkit: bad spec "counter:step=2": unknown key "step" for counter (known: start, prefix, mask)
}

func TestRegisterPanics(t *testing.T) {
	build := func(context.Context, *idkit.Settings) (idkit.Scheme, error) { return nil, nil }
	for name, f := range map[string]func(){
		"empty name":        func() { idkit.Register("", build) },
		"not a word":        func() { idkit.Register("my-scheme", build) },
		"nil build":         func() { idkit.Register("nilbuild", nil) },
		"built-in name":     func() { idkit.Register("snowflake", build) },
		"twice, other case": func() { idkit.Register("COUNTER", build) },
		"codec of unknown": func() {
			idkit.RegisterCodec("nosuchscheme", func(*idkit.Settings) (idkit.Codec, error) { return nil, nil })
		},
		"codec of built-in":  func() { idkit.RegisterCodec("ulid", func(*idkit.Settings) (idkit.Codec, error) { return nil, nil }) },
		"nil codec function": func() { idkit.RegisterCodec("counter", nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("no panic")
				}
				if !strings.HasPrefix(fmt.Sprint(r), "idkit: ") {
					t.Errorf("panic %q does not start with the package name", r)
				}
			}()
			f()
		})
	}
	if got := idkit.Schemes(); !slices.Equal(got, []string{"counter", "segment", "snowflake", "sonyflake", "typeid", "ulid", "uuidv4", "uuidv7"}) {
		t.Errorf("Schemes() = %v after the refused registrations", got)
	}
}

// TestNewCodec decodes IDs of specs whose generator cannot start or would reach out to a
// store: decoding needs only the layout.
func TestNewCodec(t *testing.T) {
	t.Setenv("IDKIT_TEST_UNSET_NODE", "")
	for _, c := range []struct {
		spec, id string
		want     string // Fields as name=value, space-separated
	}{
		// Baidu's 28-bit seconds ran out in 2024: New fails, decoding still works.
		{"snowflake:layout=baidu", "180363646902239241", "time=5249273 worker=4 seq=9"},
		// An epoch in the future.
		{"snowflake:epoch=2999-01-01", "4194305", "time=1 datacenter=0 worker=0 seq=1"},
		// Node sources that would read the host, the environment or a store.
		{"snowflake:node=ip", "4194305", "time=1 datacenter=0 worker=0 seq=1"},
		{"snowflake:node=env:IDKIT_TEST_UNSET_NODE", "4194305", "time=1 datacenter=0 worker=0 seq=1"},
		{"snowflake:node=etcd://127.0.0.1:1/never/dialled", "4194305", "time=1 datacenter=0 worker=0 seq=1"},
		{"snowflake:layout=discord,worker=1,lease=pg://u:pw@127.0.0.1:1/db,marks=lease", "175928847299117063", "time=41944705796 worker=1 process=0 seq=7"},
		{"sonyflake:machine=3,start=2200-01-01", "16777219", "time=1 seq=0 machine=3"},
		{"ulid:monotonic=false", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "time=1469922850259"},
		{"uuidv7", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "time=1645557742000 rand_a=3267"},
		{"COUNTER:start=3", "77", "seq=77"},
	} {
		codec, err := idkit.NewCodec(c.spec)
		if err != nil {
			t.Errorf("NewCodec(%q): %v", c.spec, err)
			continue
		}
		id, err := codec.Parse(c.id)
		if err != nil {
			t.Errorf("NewCodec(%q).Parse(%s): %v", c.spec, c.id, err)
			continue
		}
		p, err := codec.Decode(id)
		if err != nil {
			t.Errorf("NewCodec(%q).Decode(%s): %v", c.spec, c.id, err)
			continue
		}
		var got []string
		for _, f := range p.Fields {
			got = append(got, fmt.Sprintf("%s=%d", f.Name, f.Value))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("NewCodec(%q) decodes %s as %q, want %q", c.spec, c.id, strings.Join(got, " "), c.want)
		}
		if _, isScheme := codec.(idkit.Scheme); isScheme && !strings.HasPrefix(strings.ToLower(c.spec), "counter") {
			t.Errorf("NewCodec(%q) returned a Scheme (%T): a codec must not generate", c.spec, codec)
		}
	}
	for _, c := range []struct{ spec, want string }{
		{"snowflake:layout=nosuch", "layout=nosuch"},
		{"snowflake:bogus=1", `unknown key "bogus"`},
		{"snowflake:time_bits=60", "more than 64"},
		{"sonyflake:machine=70000", "machine=70000"},
		{"uuidv4:x=1", `unknown key "x"`},
		{"nosuch", `unknown scheme "nosuch"`},
	} {
		_, err := idkit.NewCodec(c.spec)
		if !errors.Is(err, idkit.ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewCodec(%q) = %v, want ErrSpec mentioning %q", c.spec, err, c.want)
		}
	}
}

// TestSpecMessages covers values that read naturally but were refused or explained badly.
func TestSpecMessages(t *testing.T) {
	for _, c := range []struct{ spec, name string }{
		{"snowflake:drift_wait=0s", "snowflake:layout=twitter,datacenter=0,worker=0,drift_wait=off"},
		{"snowflake:drift_wait=0ms,drift_continue=OFF", "snowflake:layout=twitter,datacenter=0,worker=0,drift_wait=off,drift_continue=off"},
		{"snowflake:drift_continue=Off", "snowflake:layout=twitter,datacenter=0,worker=0,drift_continue=off"},
		{"ulid:monotonic=FALSE", "ulid:monotonic=false"},
	} {
		s, err := idkit.New(c.spec)
		if err != nil {
			t.Errorf("New(%q): %v", c.spec, err)
			continue
		}
		if s.Name() != c.name {
			t.Errorf("New(%q).Name() = %q, want %q", c.spec, s.Name(), c.name)
		}
	}
	for _, c := range []struct{ spec, want string }{
		{"snowflake:node=env:", "node=env: names no environment variable"},
		{"snowflake:drift_wait=-1ms", "drift_wait=-1ms: want a positive duration"},
		{"snowflake:node=3,lease=etcd://127.0.0.1:1/x,lease_ttl=0s", "lease_ttl cannot be off"},
	} {
		_, err := idkit.New(c.spec)
		if !errors.Is(err, idkit.ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q) = %v, want ErrSpec mentioning %q", c.spec, err, c.want)
		}
	}
}

func TestParseSpec(t *testing.T) {
	s, err := idkit.ParseSpec(" SnowFlake : Node = 3 , LAYOUT=discord ")
	if err != nil {
		t.Fatal(err)
	}
	if s.Scheme() != "snowflake" || !slices.Equal(s.Keys(), []string{"node", "layout"}) {
		t.Errorf("ParseSpec: scheme %q keys %v", s.Scheme(), s.Keys())
	}
	if v, ok := s.Lookup("layout"); !ok || v != "discord" {
		t.Errorf("Lookup(layout) = %q, %v", v, ok)
	}
	s, err = idkit.ParseSpec("snowflake:node=pg://u:hunter2@h/db")
	if err != nil || strings.Contains(s.String(), "hunter2") {
		t.Errorf("ParseSpec(…).String() = %q, %v: want the password redacted", s, err)
	}
	if _, err := idkit.ParseSpec("snowflake:node"); !errors.Is(err, idkit.ErrSpec) {
		t.Errorf("ParseSpec without '=': %v", err)
	}
}
