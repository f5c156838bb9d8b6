package main

import (
	"encoding/json"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit"
)

// TestInspectBoundsGolden covers inspect's time-range mode: every kind of time-ordered scheme,
// both output forms, a range inside a tick and across a tick edge, clamping at the epoch,
// open ends, --at, and each refusal.
func TestInspectBoundsGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"twitter", []string{"inspect", "--from", "2026-01-01", "--to", "2026-01-02"}},
		{"twitter_json", []string{"inspect", "--json", "--from", "2026-01-01", "--to", "2026-01-02"}},
		{"unix_ms", []string{"inspect", "--from", "1767225600000", "--to", "1767225600001"}},
		{"sonyflake_inside_ticks", []string{"inspect", "--scheme", "sonyflake", "--from", "2026-01-01T00:00:00.005Z", "--to", "2026-01-01T00:00:00.035Z"}},
		{"baidu_inside_one_tick", []string{"inspect", "--scheme", "snowflake:layout=baidu", "--from", "2020-01-01T00:00:00.1Z", "--to", "2020-01-01T00:00:00.9Z"}},
		{"custom_10ms_json", []string{"inspect", "--scheme", "snowflake:fields=time:39/region:4/host:8/seq:12,unit=10ms,epoch=2024-01-01", "--json", "--from", "2026-01-01T00:00:00.001Z", "--to", "2026-01-01T00:00:01Z"}},
		{"discord_bit63", []string{"inspect", "--scheme", "snowflake:layout=discord", "--from", "2084-09-06T15:47:35.551Z", "--to", "2084-09-06T15:47:35.553Z"}},
		{"clamped_to_epoch", []string{"inspect", "--from", "2000-01-01", "--to", "2010-11-04T01:42:54.659Z"}},
		{"open_from", []string{"inspect", "--scheme", "sonyflake", "--from", "2100-01-01"}},
		{"open_to_json", []string{"inspect", "--json", "--to", "2010-11-04T01:42:54.658Z"}},
		{"ulid", []string{"inspect", "--scheme", "ulid", "--from", "2026-01-01", "--to", "2026-01-02"}},
		{"ulid_json", []string{"inspect", "--scheme", "ulid:monotonic=false", "--json", "--from", "2026-01-01", "--to", "2026-01-02"}},
		{"uuidv7", []string{"inspect", "--scheme", "uuidv7", "--from", "2026-01-01T09:30:00Z", "--to", "2026-01-01T10:00:00Z"}},
		{"uuidv7_at_json", []string{"inspect", "--scheme", "uuidv7", "--json", "--at", "2026-01-01T09:30:00.0005Z"}},
		{"at", []string{"inspect", "--at", "2026-01-01"}},
		{"before_epoch", []string{"inspect", "--from", "2000-01-01", "--to", "2001-01-01"}},
		{"after_run_out", []string{"inspect", "--at", "2090-01-01"}},
		{"to_before_epoch", []string{"inspect", "--to", "2001-01-01"}},
		{"empty", []string{"inspect", "--from", "2026-01-02", "--to", "2026-01-01"}},
		{"uuidv4", []string{"inspect", "--scheme", "uuidv4", "--from", "2026-01-01"}},
		{"node_above_time", []string{"inspect", "--scheme", "snowflake:fields=region:4/time:41/seq:12", "--from", "2026-01-01"}},
		{"bad_time", []string{"inspect", "--from", "yesterday", "--to", "2026-01-01"}},
		{"at_and_from", []string{"inspect", "--at", "2026-01-01", "--from", "2026-01-01"}},
		{"with_ids", []string{"inspect", "--from", "2026-01-01", twitterID}},
		{"sharded", []string{"inspect", "--scheme", "snowflake:shard_bits=2", "--from", "2026-01-01", "--to", "2026-01-02"}},
		{"sharded_unsigned_at_json", []string{"inspect", "--scheme", "snowflake:layout=discord,shard_bits=3", "--json", "--at", "2026-01-01"}},
		{"sharded_open_to", []string{"inspect", "--scheme", "snowflake:shard_bits=1", "--to", "2010-11-04T01:42:54.659Z"}},
		{"sharded_before_epoch", []string{"inspect", "--scheme", "snowflake:shard_bits=3", "--to", "2001-01-01"}},
		{"reversed", []string{"inspect", "--scheme", "snowflake:reverse=true", "--from", "2026-01-01"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := idbench(t, "", tt.args...)
			golden(t, "inspect/bounds_"+tt.name+".golden", transcript("", tt.args, r))
		})
	}
}

// TestInspectBoundsAgree checks the printed bounds against idkit.Bounds, and that each is the
// column's own form: the scheme's Parse reads it back as the same ID.
func TestInspectBoundsAgree(t *testing.T) {
	t.Parallel()
	from, to := time.Date(2026, 3, 1, 12, 0, 0, 123_456_789, time.UTC), time.Date(2026, 3, 1, 12, 5, 0, 0, time.UTC)
	for _, spec := range []string{"snowflake", "snowflake:layout=discord", "snowflake:layout=instagram", "snowflake:layout=mastodon",
		"sonyflake", "snowflake:fields=time:32/seq:10/node:8,unit=1s,epoch=2020-01-01T00:00:00.5Z", "ulid", "uuidv7"} {
		r := idbench(t, "", "inspect", "--scheme", spec, "--json", "--from", from.Format(time.RFC3339Nano), "--to", to.Format(time.RFC3339Nano))
		if r.err != nil {
			t.Fatalf("%s: %v", spec, r.err)
		}
		var got boundsJSON
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%s: %q: %v", spec, r.stdout, err)
		}
		c, err := idkit.NewCodec(spec)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi, err := idkit.Bounds(c, from, to)
		if err != nil {
			t.Fatal(err)
		}
		plo, err1 := c.Parse(got.Lo)
		phi, err2 := c.Parse(*got.Hi)
		if err1 != nil || err2 != nil || plo != lo || phi != hi {
			t.Errorf("%s: printed %s..%s (%v, %v), want %s..%s", spec, got.Lo, *got.Hi, err1, err2, lo, hi)
		}
		if want := "id >= "; !strings.HasPrefix(got.Where, want) || !strings.Contains(got.Where, got.Lo) || !strings.Contains(got.Where, *got.Hi) {
			t.Errorf("%s: where %q does not hold %s and %s", spec, got.Where, got.Lo, *got.Hi)
		}
	}
}

// FuzzInspectBounds feeds the time flags arbitrary text: inspect must not panic, must refuse
// a bad time as a usage error, and must otherwise answer or refuse the range with ErrTimeRange
// or ErrScheme.
func FuzzInspectBounds(f *testing.F) {
	for _, s := range [][2]string{{"2026-01-01", "2026-01-02"}, {"0", "1"}, {"yesterday", ""}, {"2026-01-01T00:00:00.0000000001Z", "9999-12-31"},
		{"9223372036854", "9223372036853"}, {"", "2010-11-04T01:42:54.657Z"}, {"2026-13-01", "-1"}} {
		f.Add(s[0], s[1], uint8(0))
	}
	specs := []string{"snowflake", "sonyflake", "snowflake:layout=baidu", "ulid", "uuidv7", "uuidv4", "snowflake:fields=region:4/time:41/seq:12"}
	f.Fuzz(func(t *testing.T, from, to string, which uint8) {
		args := []string{"inspect", "--json", "--scheme", specs[int(which)%len(specs)]}
		switch {
		case which&0x80 != 0:
			args = append(args, "--at", from)
		case from == "":
			args = append(args, "--to", to)
		case to == "":
			args = append(args, "--from", from)
		default:
			args = append(args, "--from", from, "--to", to)
		}
		r := idbench(t, "", args...)
		var ue *usageError
		switch {
		case r.err == nil:
			var got boundsJSON
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("%q: bad JSON %q: %v", args, r.stdout, err)
			}
		case errors.As(r.err, &ue), errors.Is(r.err, flag.ErrHelp), errors.Is(r.err, idkit.ErrTimeRange), errors.Is(r.err, idkit.ErrScheme), errors.Is(r.err, idkit.ErrUnordered):
		default:
			t.Fatalf("%q: %v", args, r.err)
		}
	})
}
