package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// transcript renders a run for a golden file: the command, stdout, stderr and exit status.
func transcript(stdin string, args []string, r result) string {
	var b strings.Builder
	if stdin != "" {
		fmt.Fprintf(&b, "$ printf %q | idbench %s\n", stdin, strings.Join(args, " "))
	} else {
		fmt.Fprintf(&b, "$ idbench %s\n", strings.Join(args, " "))
	}
	b.WriteString(r.stdout)
	if r.stderr != "" {
		b.WriteString("--- stderr\n" + r.stderr)
	}
	fmt.Fprintf(&b, "--- exit %d\n", r.code)
	return b.String()
}

// Fixed IDs with published decodings: Twitter's and Discord's documentation examples, the
// ULID spec's example, RFC 9562's UUIDv7 and UUIDv4 examples.
const (
	twitterID = "1541815603606036480"
	discordID = "175928847299117063"
	ulidID    = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	uuidv7ID  = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
	uuidv4ID  = "919108f7-52d1-4320-9bac-f847db4148a8"
)

func TestInspectGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"twitter", "", []string{"inspect", twitterID, "1288834974657"}},
		{"twitter_json", "", []string{"inspect", "--json", twitterID, "1288834974657"}},
		{"discord", "", []string{"inspect", "--scheme", "snowflake:layout=discord", discordID}},
		{"discord_json", "", []string{"inspect", "--scheme", "snowflake:layout=discord", discordID, "--json"}},
		{"instagram_json", "", []string{"inspect", "--scheme", "snowflake:layout=instagram", "--json", "1541815603606036480"}},
		{"sonyflake", "", []string{"inspect", "--scheme", "sonyflake", "441620218426277895", "441620218442858503"}},
		{"sonyflake_json", "", []string{"inspect", "--scheme", "sonyflake", "--json", "441620218426277895"}},
		{"mastodon_json", "", []string{"inspect", "--scheme", "snowflake:layout=mastodon", "--json", "109332409048088576"}},
		{"custom_json", "", []string{"inspect", "--scheme", "snowflake:fields=time:41/region:4/host:6/seq:12,epoch=2024-01-01", "--json", "1234567890123456789"}},
		{"ulid", "", []string{"inspect", "--scheme", "ulid", ulidID, "01arz3ndektsv4rrffq69g5fav"}},
		{"ulid_json", "", []string{"inspect", "--scheme", "ulid", "--json", ulidID}},
		{"uuidv7", "", []string{"inspect", "--scheme", "uuidv7", uuidv7ID}},
		{"uuidv7_json", "", []string{"inspect", "--scheme", "uuidv7", "--json", uuidv7ID}},
		{"uuidv4", "", []string{"inspect", "--scheme", "uuidv4", uuidv4ID}},
		{"uuidv4_json", "", []string{"inspect", "--scheme", "uuidv4", "--json", uuidv4ID}},
		{"stdin", twitterID + "\n\n  1288834974657 " + twitterID + "\n", []string{"inspect"}},
		{"stdin_dash", "1288834974657\n", []string{"inspect", twitterID, "-", "-"}},
		{"bad_ids", "", []string{"inspect", twitterID, "12x", "99999999999999999999999", "", ulidID, "1288834974657"}},
		{"bad_ids_json", "", []string{"inspect", "--json", "nope", twitterID}},
		{"wrong_scheme", "", []string{"inspect", "--scheme", "uuidv7", uuidv4ID, uuidv7ID}},
		{"all_bad", "", []string{"inspect", "--scheme", "ulid", twitterID}},
		{"no_ids", "", []string{"inspect"}},
		// Twitter's layout at 2026-01-01T00:00:00Z, node 3, sequence 0 to 2: sharded, the hash
		// field spreads them; reversed, the sequence's low bits lead.
		{"sharded_ids", "", []string{"inspect", "--scheme", "snowflake:shard_bits=4", "1854789489000186624", "6466475507427574529", "7042936259730998018", "1854789489000186625"}},
		{"reversed_ids_json", "", []string{"inspect", "--scheme", "snowflake:reverse=true", "--json", "1691015788662252", "4613377034216050156", "2307534025002356204"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := idbench(t, tt.stdin, tt.args...)
			golden(t, "inspect/"+tt.name+".golden", transcript(tt.stdin, tt.args, r))
		})
	}
}

// TestInspectJSON checks the JSON fields the issue asks for, independently of the goldens.
func TestInspectJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want map[string]any
		time string
	}{
		{
			[]string{"--scheme", "snowflake:layout=discord", discordID},
			map[string]any{"id": discordID, "node": 32.0, "seq": 7.0, "worker": 1.0, "process": 0.0},
			"2016-04-30T11:18:25.796Z",
		},
		{
			[]string{"--scheme", "ulid", ulidID},
			map[string]any{"id": ulidID, "node": nil, "seq": nil},
			"2016-07-30T23:54:10.259Z",
		},
		{
			[]string{"--scheme", "uuidv7", uuidv7ID},
			map[string]any{"id": uuidv7ID, "node": nil, "seq": nil, "version": 7.0},
			"2022-02-22T19:22:22Z",
		},
		{
			[]string{"--scheme", "uuidv4", uuidv4ID},
			map[string]any{"id": uuidv4ID, "time": nil, "node": nil, "seq": nil, "version": 4.0},
			"",
		},
	}
	for _, tt := range tests {
		r := idbench(t, "", append([]string{"inspect", "--json"}, tt.args...)...)
		if r.err != nil {
			t.Fatal(r.err)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%s: %v", r.stdout, err)
		}
		for k, v := range tt.want {
			if gv, ok := got[k]; !ok || gv != v {
				t.Errorf("%v: %s = %#v (present %v), want %#v", tt.args, k, gv, ok, v)
			}
		}
		if tt.time == "" {
			continue
		}
		ts, _ := got["time"].(string)
		pt, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || !strings.HasSuffix(ts, "Z") || !strings.Contains(ts, ".") {
			t.Errorf("%v: time %q is not RFC 3339 UTC with fractional seconds (%v)", tt.args, ts, err)
		}
		want, _ := time.Parse(time.RFC3339Nano, tt.time)
		if !pt.Equal(want) {
			t.Errorf("%v: time %s, want %s", tt.args, pt, want)
		}
	}
}

// FuzzInspect feeds arbitrary text as IDs to schemes of every kind, through the same decoding
// and printing as the command (both output forms): inspect may reject the text but must not
// panic, must name it in the error, and its JSON must be valid. The whole command line, with
// standard input, is exercised for one scheme.
func FuzzInspect(f *testing.F) {
	for _, s := range []string{twitterID, discordID, ulidID, uuidv7ID, uuidv4ID, "", "-", "--json", "18446744073709551616", "0", "zzzzzzzzzzzzzzzzzzzzzzzzzz", "\xff", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ"} {
		f.Add(s)
	}
	f.Setenv("IDKIT_TEST_MASK_KEY", testMaskKey)
	var schemes []*idReader
	for _, spec := range []string{"snowflake", "snowflake:layout=discord", "sonyflake", "ulid", "uuidv7", "uuidv4", "snowflake:fields=time:41/a:1/seq:12",
		"typeid", "typeid:prefix=user,mask=env:IDKIT_TEST_MASK_KEY", "snowflake:mask=env:IDKIT_TEST_MASK_KEY", "ulid:prefix=x"} {
		for _, stored := range []bool{false, true} {
			r, err := newIDReader(spec, stored)
			if err != nil {
				f.Fatal(err)
			}
			schemes = append(schemes, r)
		}
	}
	for _, s := range []string{"user_01h455vb4pex5vsknk084sn02q", "01h455vb4pex5vsknk084sn02q", "x_01arz3ndektsv4rrffq69g5fav", "_", "user_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range schemes {
			var out, errOut bytes.Buffer
			jp := &jsonParts{w: bufio.NewWriter(&out)}
			tp := &tableParts{w: &out}
			for _, pw := range []partsWriter{jp, tp} {
				in := &inspector{r: s, out: pw, stderr: &errOut}
				if err := in.one(text); err != nil {
					t.Fatalf("%q as %s: %v", text, s.spec, err)
				}
				if err := pw.flush(); err != nil {
					t.Fatal(err)
				}
				if in.bad > 0 && !strings.Contains(errOut.String(), strconv.Quote(text)) {
					t.Fatalf("%q as %s: error %q does not name it", text, s.spec, errOut.String())
				}
				if pw == partsWriter(jp) && in.bad == 0 {
					var v map[string]any
					if err := json.Unmarshal(out.Bytes(), &v); err != nil {
						t.Fatalf("%q as %s: bad JSON %q: %v", text, s.spec, out.String(), err)
					}
				}
			}
		}
		r := idbench(t, text, "inspect", "--json")
		if r.code != 0 && r.code != 1 {
			t.Fatalf("%q from stdin: exit %d: %v", text, r.code, r.err)
		}
	})
}

// TestInspectWithoutGenerator decodes IDs of specs whose generator cannot start here (a layout
// that ran out of time, an epoch in the future) or whose node source would need the
// environment or a store: inspect needs the layout only, and must not reach out to anything.
func TestInspectWithoutGenerator(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec, id, want string
	}{
		{"snowflake:layout=baidu", "180363646902239241", "2016-07-19T18:07:53.000Z"},
		{"snowflake:epoch=2999-01-01", "4194305", "2999-01-01T00:00:00.001Z"},
		{"snowflake:node=env:IDKIT_NO_SUCH_VARIABLE", "4194305", "2010-11-04T01:42:54.658Z"},
		{"snowflake:node=etcd://127.0.0.1:1/never/dialled", "4194305", "2010-11-04T01:42:54.658Z"},
		{"snowflake:node=3,lease=pg://u:hunter2@127.0.0.1:1/db", "4194305", "2010-11-04T01:42:54.658Z"},
	} {
		start := time.Now()
		r := idbench(t, "", "inspect", "--scheme", c.spec, c.id)
		if r.code != 0 || !strings.Contains(r.stdout, c.want) {
			t.Errorf("inspect --scheme %s %s: exit %d, stdout %q, stderr %q; want %s", c.spec, c.id, r.code, r.stdout, r.stderr, c.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("inspect --scheme %s took %v: it waited for something", c.spec, d)
		}
	}
	r := idbench(t, "", "inspect", "--scheme", "snowflake:node=3,lease=pg://u:hunter2@127.0.0.1:1/db", "x")
	if r.code != 1 || strings.Contains(r.stderr, "hunter2") {
		t.Errorf("inspect of a bad ID: exit %d, stderr %q; want 1 and no password", r.code, r.stderr)
	}
}
