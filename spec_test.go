package idkit_test

import (
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// specErrors drives TestNewErrors and seeds FuzzNew: every way a spec can be wrong, and the
// part of the message that names the offending part.
var specErrors = []struct {
	spec string
	want error
	msg  []string
}{
	{"", idkit.ErrSpec, []string{"no scheme name"}},
	{"   ", idkit.ErrSpec, []string{"no scheme name"}},
	{":layout=twitter", idkit.ErrSpec, []string{"no scheme name"}},
	{"snowflak", idkit.ErrSpec, []string{`unknown scheme "snowflak"`, "snowflake, sonyflake, typeid, ulid, uuidv4, uuidv7"}},
	{"snow flake", idkit.ErrSpec, []string{`"snow flake"`}},
	{"uuid-v7", idkit.ErrSpec, []string{`"uuid-v7"`}},
	{"ulid:", idkit.ErrSpec, []string{"nothing after ':'"}},
	{"ulid: ", idkit.ErrSpec, []string{"nothing after ':'"}},
	{"snowflake:layout=twitter,,node=1", idkit.ErrSpec, []string{"setting 2 is empty"}},
	{"snowflake:layout=twitter,", idkit.ErrSpec, []string{"setting 2 is empty"}},
	{"snowflake:layout", idkit.ErrSpec, []string{`"layout" has no '='`}},
	{"snowflake:=3", idkit.ErrSpec, []string{`"=3" has no key`}},
	{"snowflake:no-de=3", idkit.ErrSpec, []string{`key "no-de"`}},
	{"snowflake:node=", idkit.ErrSpec, []string{"node has no value"}},
	{"snowflake:node= ", idkit.ErrSpec, []string{"node has no value"}},
	{"snowflake:node=1,node=2", idkit.ErrSpec, []string{"node is given twice"}},
	{"snowflake:Node=1,node=2", idkit.ErrSpec, []string{"node is given twice"}},
	{"snowflake:colour=red", idkit.ErrSpec, []string{`unknown key "colour"`, "layout"}},
	{"snowflake:layout=discord,datacenter=1", idkit.ErrSpec, []string{`unknown key "datacenter"`, "process"}},
	{"uuidv4:x=1", idkit.ErrSpec, []string{`unknown key "x"`, "(known: prefix, mask)"}},
	{"uuidv7:monotonic=true", idkit.ErrSpec, []string{`unknown key "monotonic"`}},
	{"ulid:monotonic=maybe", idkit.ErrSpec, []string{"monotonic=maybe", "true or false"}},
	{"ulid:mono=false", idkit.ErrSpec, []string{`unknown key "mono"`, "monotonic"}},
	{"snowflake:layout=flickr", idkit.ErrSpec, []string{"layout=flickr", "unknown preset"}},
	{"snowflake:layout=twit ter", idkit.ErrSpec, []string{"layout=twit ter"}},
	{"snowflake:node=1024", idkit.ErrSpec, []string{"node=1024", "0 to 1023"}},
	{"snowflake:node=-1", idkit.ErrSpec, []string{"node=-1"}},
	{"snowflake:node=abc", idkit.ErrSpec, []string{"node=abc"}},
	{"snowflake:node=env:IDKIT_TEST_SURELY_UNSET", idkit.ErrSpec, []string{"IDKIT_TEST_SURELY_UNSET", "not set"}},
	{"snowflake:layout=mastodon,node=1", idkit.ErrSpec, []string{"node=1", "0 to 0"}},
	{"snowflake:layout=discord,worker=32", idkit.ErrSpec, []string{"worker=32", "0 to 31"}},
	{"snowflake:datacenter=1,node=3", idkit.ErrSpec, []string{"node=3 and datacenter both given"}},
	{"snowflake:layout=instagram,shard=8192", idkit.ErrSpec, []string{"shard=8192", "0 to 8191"}},
	{"snowflake:time_bits=50", idkit.ErrSpec, []string{"72 bits", "50/5+5/12"}},
	{"snowflake:time_bits=65", idkit.ErrSpec, []string{"time_bits=65", "0 to 64"}},
	{"snowflake:seq_bits=0", idkit.ErrSpec, []string{`("seq") has 0 bits`}},
	{"snowflake:time_bits=0", idkit.ErrSpec, []string{`("time") has 0 bits`}},
	{"snowflake:node_bits=x", idkit.ErrSpec, []string{"node_bits=x"}},
	{"snowflake:unit=0", idkit.ErrSpec, []string{"unit=0"}},
	{"snowflake:unit=-1ms", idkit.ErrSpec, []string{"unit=-1ms"}},
	{"snowflake:unit=fast", idkit.ErrSpec, []string{"unit=fast"}},
	{"snowflake:epoch=yesterday", idkit.ErrSpec, []string{"epoch=yesterday", "RFC 3339"}},
	{"snowflake:epoch=-5", idkit.ErrSpec, []string{"epoch=-5"}},
	{"snowflake:lookahead=-1", idkit.ErrSpec, []string{"lookahead=-1"}},
	{"snowflake:lookahead=99999999", idkit.ErrSpec, []string{"lookahead=99999999"}},
	{"snowflake:drift_wait=-5ms", idkit.ErrSpec, []string{"drift_wait=-5ms", "or off"}},
	{"snowflake:drift_continue=soon", idkit.ErrSpec, []string{"drift_continue=soon"}},
	{"snowflake:fields=time:41/seq:12,layout=discord", idkit.ErrSpec, []string{"both given"}},
	{"snowflake:fields=time:41/worker:x/seq:12", idkit.ErrSpec, []string{`"worker:x"`}},
	{"snowflake:fields=time:41/worker/seq:12", idkit.ErrSpec, []string{`"worker"`}},
	{"snowflake:fields=time:41//seq:12", idkit.ErrSpec, []string{`fields: ""`}},
	{"snowflake:fields=time:41/w:0/seq:12", idkit.ErrSpec, []string{`"w:0"`}},
	{"snowflake:fields=time:41/w:65/seq:12", idkit.ErrSpec, []string{`"w:65"`}},
	{"snowflake:fields=time:41/node:10", idkit.ErrSpec, []string{"0 sequence fields"}},
	{"snowflake:fields=time:41/layout:10/seq:12", idkit.ErrSpec, []string{`"layout" cannot name a field`}},
	{"snowflake:fields=time:41/w:10/w:2/seq:12", idkit.ErrSpec, []string{`"w" used twice`}},
	{"snowflake:fields=time:41/w-x:10/seq:12", idkit.ErrSpec, []string{`"w-x:10"`}},
	{"snowflake:fields=time:60/w:10/seq:12", idkit.ErrSpec, []string{"82 bits"}},
	{"sonyflake:machine=70000", idkit.ErrSpec, []string{"machine=70000", "0 to 65535"}},
	{"sonyflake:machine=1,node=2", idkit.ErrSpec, []string{"machine=1 and node=2 both given"}},
	{"sonyflake:start=2999-01-01", schemes.ErrSettings, []string{"in the future"}},
	{"sonyflake:start=1600-01-01", schemes.ErrSettings, []string{"outside the library's range"}},
	{"sonyflake:start=soon", idkit.ErrSpec, []string{"start=soon"}},
	{"sonyflake:worker=1", idkit.ErrSpec, []string{`unknown key "worker"`}},
	{"snowflake:epoch=1700-01-01,time_bits=46,node_bits=6", idkit.ErrSpec, []string{"epoch 1700-01-01T00:00:00Z", "146"}},
	// Settings for range-partitioned databases.
	{"snowflake:shard_bits=16", idkit.ErrSpec, []string{"shard_bits=16", "0 to 15"}},
	{"snowflake:shard_bits=0", idkit.ErrSpec, []string{"shard_bits=0", "leave it out"}},
	{"snowflake:shard_bits=four", idkit.ErrSpec, []string{"shard_bits=four"}},
	{"snowflake:shard_bits=12", idkit.ErrSpec, []string{"shard_bits=12", "12-bit seq field would leave it none"}},
	{"snowflake:shard_bits=4,shard_from=time", idkit.ErrSpec, []string{"cannot come out of the time field"}},
	{"snowflake:shard_bits=4,shard_from=region", idkit.ErrSpec, []string{`no field "region"`}},
	{"snowflake:shard_from=worker", idkit.ErrSpec, []string{"shard_from without shard_bits"}},
	{"snowflake:reverse=yes", idkit.ErrSpec, []string{"reverse=yes", "want true", "time (the time field alone", "or false"}},
	{"snowflake:reverse=true,shard_bits=3", idkit.ErrSpec, []string{"reverse=true with shard bits"}},
	{"snowflake:reverse=time,shard_bits=3", idkit.ErrSpec, []string{"reverse=time with shard bits"}},
	{"snowflake:fields=hash:3/time:41/node:10/seq:9,reverse=time", idkit.ErrSpec, []string{"reverse=time with shard bits"}},
	{"snowflake:layout=discord,reverse=time", idkit.ErrSpec, []string{"reverse=time", "sign bit", "63-bit layout"}},
	{"snowflake:reverse=times", idkit.ErrSpec, []string{"reverse=times", "want true"}},
	{"snowflake:shard_by=tick", idkit.ErrSpec, []string{"shard_by without shard_bits"}},
	{"snowflake:shard_bits=3,shard_by=txn", idkit.ErrSpec, []string{"shard_by=txn", "want id (the default) or tick"}},
	{"snowflake:fields=hash:4/time:41/node:10/seq:8,shard_bits=2", idkit.ErrSpec, []string{"shard_bits and a hash field in fields= both given"}},
	{"snowflake:fields=time:41/hash:4/node:10/seq:8", idkit.ErrSpec, []string{"must be the top field"}},
	{"snowflake:fields=hash:4/node:10/time:41/seq:8", idkit.ErrSpec, []string{"directly above the time field"}},
	{"snowflake:fields=hash:16/time:40/seq:7", idkit.ErrSpec, []string{"at most 15"}},
	{"snowflake:fields=hash:2/hash:2/time:41/seq:8", idkit.ErrSpec, []string{"directly above the time field"}},
	{"snowflake:fields=time:41/reverse:4/seq:8", idkit.ErrSpec, []string{`"reverse" cannot name a field`}},
	// Valid specs whose generator cannot start.
	{"snowflake:layout=baidu", schemes.ErrTimeOverflow, []string{"baidu", "ran out"}},
	{"snowflake:epoch=2999-01-01", schemes.ErrTimeOverflow, []string{"before the epoch"}},
	{"snowflake:epoch=1900-01-01", schemes.ErrTimeOverflow, []string{"ran out"}},
}

func TestNewErrors(t *testing.T) {
	for _, tt := range specErrors {
		t.Run(tt.spec, func(t *testing.T) {
			s, err := idkit.New(tt.spec)
			if !errors.Is(err, tt.want) {
				t.Fatalf("New(%q) = %v, %v; want an error wrapping %v", tt.spec, s, err, tt.want)
			}
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if errors.Is(err, idkit.ErrSpec) && !strings.Contains(err.Error(), "idkit: bad spec") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// TestNewNames: New accepts blanks and any case in names and keys, and Name gives the
// canonical spelling.
func TestNewNames(t *testing.T) {
	t.Setenv("IDKIT_TEST_NODE", " 37 ")
	tests := []struct{ spec, name string }{
		{"snowflake", "snowflake:layout=twitter,datacenter=0,worker=0"},
		{" Snowflake : Layout = Discord , Worker = 3 , process=1 ", "snowflake:layout=discord,worker=3,process=1"},
		{"snowflake:layout=twitter,node=37", "snowflake:layout=twitter,datacenter=1,worker=5"},
		{"snowflake:node=env:IDKIT_TEST_NODE", "snowflake:layout=twitter,datacenter=1,worker=5"},
		{"snowflake:layout=instagram,shard=5", "snowflake:layout=instagram,node=5"},
		{"snowflake:layout=mastodon", "snowflake:layout=mastodon"},
		{"snowflake:lookahead=3,drift_wait=off,drift_continue=1s", "snowflake:layout=twitter,datacenter=0,worker=0,lookahead=3,drift_wait=off,drift_continue=1s"},
		{"snowflake:drift_wait=0", "snowflake:layout=twitter,datacenter=0,worker=0,drift_wait=off"},
		{"snowflake:node_bits=0", "snowflake:fields=time:41/seq:12,unit=1ms,epoch=2010-11-04T01:42:54.657Z"},
		{"snowflake:fields=time:40/region:4/host:8/seq:11,epoch=2024-01-01,unit=10ms,host=9", "snowflake:fields=time:40/region:4/host:8/seq:11,unit=10ms,epoch=2024-01-01T00:00:00Z,region=0,host=9"},
		{"snowflake:node=3,shard_bits=4", "snowflake:layout=twitter,shard_bits=4,datacenter=0,worker=3"},
		{"snowflake:layout=discord,reverse=true,worker=1", "snowflake:layout=discord,reverse=true,worker=1,process=0"},
		{"snowflake:reverse=false", "snowflake:layout=twitter,datacenter=0,worker=0"},
		{"snowflake:reverse=Time,node=3", "snowflake:layout=twitter,reverse=time,datacenter=0,worker=3"},
		{"snowflake:node=3,shard_bits=5,shard_by=TICK", "snowflake:layout=twitter,shard_bits=5,shard_by=tick,datacenter=0,worker=3"},
		{"snowflake:node=3,shard_bits=5,shard_by=id", "snowflake:layout=twitter,shard_bits=5,datacenter=0,worker=3"},
		{"snowflake:fields=hash:3/time:40/node:10/seq:10,unit=1ms,epoch=2024-01-01,node=7,shard_by=tick", "snowflake:fields=hash:3/time:40/node:10/seq:10,unit=1ms,epoch=2024-01-01T00:00:00Z,shard_by=tick,node=7"},
		{"snowflake:fields=time:48/node:10/seq:5,unit=10us,epoch=2015-01-01,reverse=time,node=1", "snowflake:fields=time:48/node:10/seq:5,unit=10µs,epoch=2015-01-01T00:00:00Z,reverse=time,node=1"},
		{"snowflake:shard_bits=2,shard_from=datacenter", "snowflake:fields=hash:2/time:41/datacenter:3/worker:5/seq:12,unit=1ms,epoch=2010-11-04T01:42:54.657Z,datacenter=0,worker=0"},
		{"snowflake:fields=hash:3/time:40/node:10/seq:10,unit=1ms,epoch=2024-01-01,node=7", "snowflake:fields=hash:3/time:40/node:10/seq:10,unit=1ms,epoch=2024-01-01T00:00:00Z,node=7"},
		{"snowflake:layout=instagram,shard_bits=3,reverse=FALSE", "snowflake:layout=instagram,shard_bits=3,node=0"},
		{"ulid", "ulid"},
		{"ULID:monotonic=true", "ulid"},
		{"ulid:monotonic=false", "ulid:monotonic=false"},
		{"uuidv7", "uuidv7"},
		{"UUIDv4", "uuidv4"},
		{"sonyflake", "sonyflake:machine=0"},
		{"sonyflake:node=3,start=2020-01-01", "sonyflake:machine=3,start=2020-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		s, err := idkit.New(tt.spec)
		if err != nil {
			t.Errorf("New(%q): %v", tt.spec, err)
			continue
		}
		if s.Name() != tt.name {
			t.Errorf("New(%q).Name() = %q, want %q", tt.spec, s.Name(), tt.name)
		}
		if c, ok := s.(io.Closer); ok {
			c.Close()
		}
	}
}

func TestLayouter(t *testing.T) {
	s, err := idkit.New("snowflake:layout=discord")
	if err != nil {
		t.Fatal(err)
	}
	l := s.(idkit.Layouter).Layout()
	if l.String() != layouts.Discord.String() {
		t.Errorf("Layout() = %v", l)
	}
	l.Fields[0].Bits = 1 // a copy: changing it changes nothing
	if s.(idkit.Layouter).Layout().Fields[0].Bits != 42 {
		t.Error("Layout() shares memory with the scheme")
	}
}

// FuzzNew: New never panics; every error wraps ErrSpec or a generator's error.
func FuzzNew(f *testing.F) {
	for _, tt := range specErrors {
		f.Add(tt.spec)
	}
	for _, c := range schemeCases {
		f.Add(c.spec)
	}
	f.Add("snowflake:fields=time:41/node:5/worker:5/seq:12,node=100")
	f.Add("snowflake:layout=sonyflake,seq_bits=10,unit=1s,epoch=1700000000000")
	f.Add("snowflake:layout=discord,reverse=true,worker=3")
	f.Add("snowflake:reverse=time,worker=3")
	f.Add("snowflake:shard_bits=5,shard_by=tick,node=3")
	f.Add("snowflake:fields=time:48/node:10/seq:5,unit=10us,epoch=2015-01-01,reverse=TIME,node=1")
	f.Add("snowflake:layout=mastodon,reverse=time")
	f.Add("snowflake:node=3,shard_bits=4")
	f.Add("snowflake:shard_bits=2,shard_from=worker,seq_bits=10")
	f.Add("snowflake:fields=hash:5/time:41/node:10/seq:7,epoch=2024-01-01,node=9")
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := idkit.New(spec)
		if err != nil {
			if !errors.Is(err, idkit.ErrSpec) && !errors.Is(err, schemes.ErrTimeOverflow) && !errors.Is(err, schemes.ErrSettings) {
				t.Fatalf("New(%q): %v wraps neither ErrSpec nor a generator error", spec, err)
			}
			if s != nil {
				t.Fatalf("New(%q) failed but returned a scheme", spec)
			}
			return
		}
		if c, ok := s.(io.Closer); ok {
			defer c.Close()
		}
		// The canonical name is accepted and canonical.
		s2, err := idkit.New(s.Name())
		if err != nil {
			t.Fatalf("New(%q) works, New(its Name %q) fails: %v", spec, s.Name(), err)
		}
		if c, ok := s2.(io.Closer); ok {
			defer c.Close()
		}
		if s2.Name() != s.Name() {
			t.Fatalf("Name %q re-parses to %q", s.Name(), s2.Name())
		}
	})
}

var parseTimeCases = []struct {
	in   string
	want time.Time
	ok   bool
}{
	{"2026-01-01", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), true},
	{"2026-01-01T12:30:00.5Z", time.Date(2026, 1, 1, 12, 30, 0, 5e8, time.UTC), true},
	{"2026-01-01T12:30:00+02:00", time.Date(2026, 1, 1, 10, 30, 0, 0, time.UTC), true},
	{"1420070400000", time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC), true},
	{"0", time.Unix(0, 0).UTC(), true},
	{"-1", time.Time{}, false},
	{"9223372036854776", time.Time{}, false},
	{"yesterday", time.Time{}, false},
	{"2026-13-01", time.Time{}, false},
	{"", time.Time{}, false},
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	for _, tt := range parseTimeCases {
		got, err := idkit.ParseTime(tt.in)
		switch {
		case tt.ok && (err != nil || !got.Equal(tt.want) || got.Location() != time.UTC):
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case !tt.ok && !errors.Is(err, idkit.ErrTime):
			t.Errorf("ParseTime(%q) = %v, %v; want an error wrapping ErrTime", tt.in, got, err)
		case !tt.ok && !strings.Contains(err.Error(), strconv.Quote(tt.in)):
			t.Errorf("ParseTime(%q): error %q does not quote the input", tt.in, err)
		}
	}
}

func FuzzParseTime(f *testing.F) {
	for _, tt := range parseTimeCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := idkit.ParseTime(s)
		if err != nil {
			if !errors.Is(err, idkit.ErrTime) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("%q: %v is not in UTC", s, got)
		}
		if back, err := idkit.ParseTime(idkit.FormatTime(got)); err != nil || !back.Equal(got) {
			t.Fatalf("%q: FormatTime %q reads back as %v, %v", s, idkit.FormatTime(got), back, err)
		}
	})
}

// TestFormatTimeWideYears: the times FormatTime writes past 9999 and before year 1, such as
// the open ends of the uuidv7, ulid, typeid and mastodon bounds (issue 24, item 14), read back
// through ParseTime.
func TestFormatTimeWideYears(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	far := time.Unix(1<<50, 0)
	for _, spec := range []string{"uuidv7", "ulid", "typeid", "snowflake:layout=mastodon", "snowflake:time_bits=60,node_bits=0,seq_bits=3"} {
		c, err := idkit.NewCodec(spec)
		if err != nil {
			t.Fatal(err)
		}
		_, hi, err := idkit.Bounds(c, from, far)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		p, err := c.Decode(hi)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		s := idkit.FormatTime(p.Time)
		if back, err := idkit.ParseTime(s); err != nil || !back.Equal(p.Time) {
			t.Errorf("%s: its last time %v is written %q, which reads back as %v, %v", spec, p.Time, s, back, err)
		}
	}
	for _, tt := range []struct {
		in   string
		want time.Time
	}{
		{"10889-08-02T05:31:50.655Z", time.Date(10889, 8, 2, 5, 31, 50, 655e6, time.UTC)},
		{"10000-02-29T00:00:00Z", time.Date(10000, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"10400-02-29T23:00:00-02:00", time.Date(10400, 3, 1, 1, 0, 0, 0, time.UTC)},
		{"292277026596-12-04T15:30:07.999999999Z", time.Unix(math.MaxInt64, 999999999)},
		{"-0001-12-31T23:59:59Z", time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"-0004-02-29", time.Date(-4, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"12345-06-07", time.Date(12345, 6, 7, 0, 0, 0, 0, time.UTC)},
	} {
		got, err := idkit.ParseTime(tt.in)
		if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{
		"10001-02-29T00:00:00Z", // not a leap year
		"10100-02-29",           // nor this
		"+10889-08-02T05:31:50Z",
		"1000000000000-01-01T00:00:00Z", // 13 digits: past time.Time's range
		"999999999999-01-01T00:00:00Z",  // past time.Time's range: the arithmetic would wrap
		"10889-8-02T05:31:50Z",
		"-1-01-01",
		"12345-06-07T",
	} {
		if got, err := idkit.ParseTime(in); !errors.Is(err, idkit.ErrTime) {
			t.Errorf("ParseTime(%q) = %v, %v; want an error wrapping ErrTime", in, got, err)
		}
	}
}

// FuzzFormatTimeRoundTrip: ParseTime reads back every time FormatTime writes, over the whole
// range of time.Time (every int64 of Unix seconds, every nanosecond, any zone offset).
func FuzzFormatTimeRoundTrip(f *testing.F) {
	f.Add(int64(0), uint32(0), int32(0))
	f.Add(int64(284012524800), uint32(655e6), int32(0)) // 10970
	f.Add(int64(math.MaxInt64), uint32(999999999), int32(-3600))
	f.Add(int64(math.MinInt64), uint32(1), int32(3600))
	f.Add(int64(-62135596801), uint32(0), int32(0)) // the last second of year 0
	f.Fuzz(func(t *testing.T, sec int64, nsec uint32, off int32) {
		in := time.Unix(sec, int64(nsec%1e9)).In(time.FixedZone("", int(off%(18*3600))))
		s := idkit.FormatTime(in)
		back, err := idkit.ParseTime(s)
		if err != nil || !back.Equal(in) {
			t.Fatalf("FormatTime(%v) = %q reads back as %v, %v", in, s, back, err)
		}
		if again := idkit.FormatTime(back); again != s {
			t.Fatalf("FormatTime(%v) = %q, then %q", in, s, again)
		}
	})
}

func TestFormatTime(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 1, 1, 9, 30, 26, 890e6, time.UTC), "2026-01-01T09:30:26.890Z"},
		{time.Date(2026, 1, 1, 9, 30, 26, 0, time.FixedZone("", 2*3600)), "2026-01-01T07:30:26.000Z"},
		{time.Date(2026, 1, 1, 9, 30, 26, 890123e3, time.UTC), "2026-01-01T09:30:26.890123Z"},
		{time.Date(2026, 1, 1, 9, 30, 26, 1, time.UTC), "2026-01-01T09:30:26.000000001Z"},
	} {
		got := idkit.FormatTime(tt.in)
		if got != tt.want {
			t.Errorf("FormatTime(%v) = %q; want %q", tt.in, got, tt.want)
		}
		if back, err := idkit.ParseTime(got); err != nil || !back.Equal(tt.in) {
			t.Errorf("ParseTime(FormatTime(%v)) = %v, %v", tt.in, back, err)
		}
	}
}
