//go:build linux

package spannertest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes/segment"
)

// emulatorDir is where the Debian package google-cloud-cli-spanner-emulator installs
// gateway_main and emulator_main; IDKIT_SPANNER_EMULATOR_DIR overrides it.
const emulatorDir = "/usr/lib/google-cloud-sdk/bin/cloud_spanner_emulator"

// emulator is a running Cloud Spanner emulator and a database in it, reached through the
// gateway's REST API.
type emulator struct {
	base string // http://127.0.0.1:PORT/v1/
	db   string // projects/idkit/instances/idkit-test/databases/idkit
	c    *http.Client
}

// startEmulator starts gateway_main (which starts emulator_main) on two free loopback ports in
// a process group of its own, stopped when the test ends, and creates an instance and a
// database with ddl. Without the emulator it skips, also under CI=true: the emulator is part
// of the Google Cloud SDK's Debian repository and cannot be installed from a registry here.
func startEmulator(t *testing.T, ddl []string) *emulator {
	t.Helper()
	dir := os.Getenv("IDKIT_SPANNER_EMULATOR_DIR")
	if dir == "" {
		dir = emulatorDir
	}
	gw, emu := filepath.Join(dir, "gateway_main"), filepath.Join(dir, "emulator_main")
	for _, p := range []string{gw, emu} {
		if _, err := os.Stat(p); err != nil {
			msg := "the Cloud Spanner emulator is not installed (" + p + " missing): install the Debian package google-cloud-cli-spanner-emulator from the Google Cloud SDK repository, or set IDKIT_SPANNER_EMULATOR_DIR to the directory holding gateway_main and emulator_main"
			if os.Getenv("CI") == "true" {
				msg += " (skipped under CI=true too: it cannot be installed from a package registry here)"
			}
			t.Skip(msg)
		}
	}
	grpcPort, httpPort := freePort(t), freePort(t)
	logs := &lockedBuffer{}
	cmd := exec.Command(gw, "--hostname", "127.0.0.1", "--grpc_port", strconv.Itoa(grpcPort),
		"--http_port", strconv.Itoa(httpPort), "--grpc_binary", emu)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", gw, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// The gateway's child, emulator_main, is in its process group.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("emulator output:\n%s", logs.String())
		}
	})
	e := &emulator{base: fmt.Sprintf("http://127.0.0.1:%d/v1/", httpPort), c: &http.Client{Timeout: 30 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		err := e.call(ctx, http.MethodGet, "projects/idkit/instances", nil, nil)
		if err == nil {
			break
		}
		select {
		case <-exited:
			t.Fatalf("the emulator exited before answering: %v\n%s", err, logs.String())
		case <-ctx.Done():
			t.Fatalf("the emulator did not answer within 30 s: %v\n%s", err, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	var op operation
	if err := e.call(ctx, http.MethodPost, "projects/idkit/instances", map[string]any{
		"instanceId": "idkit-test",
		"instance":   map[string]any{"config": "projects/idkit/instanceConfigs/emulator-config", "displayName": "idkit", "nodeCount": 1},
	}, &op); err != nil {
		t.Fatalf("creating the instance: %v", err)
	}
	e.wait(ctx, t, op)
	op = operation{}
	if err := e.call(ctx, http.MethodPost, "projects/idkit/instances/idkit-test/databases", map[string]any{
		"createStatement": "CREATE DATABASE `idkit`", "extraStatements": ddl,
	}, &op); err != nil {
		t.Fatalf("creating the database: %v", err)
	}
	e.wait(ctx, t, op)
	e.db = "projects/idkit/instances/idkit-test/databases/idkit"
	return e
}

// operation is a long-running operation of the admin API.
type operation struct {
	Name  string          `json:"name"`
	Done  bool            `json:"done"`
	Error json.RawMessage `json:"error"`
}

// wait polls op until it is done.
func (e *emulator) wait(ctx context.Context, t *testing.T, op operation) {
	t.Helper()
	for !op.Done {
		select {
		case <-ctx.Done():
			t.Fatalf("operation %s not done: %v", op.Name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
		if err := e.call(ctx, http.MethodGet, op.Name, nil, &op); err != nil {
			t.Fatalf("operation %s: %v", op.Name, err)
		}
	}
	if len(op.Error) > 0 {
		t.Fatalf("operation %s failed: %s", op.Name, op.Error)
	}
}

// call sends body as JSON to the gateway and decodes the answer into out (when not nil).
func (e *emulator) call(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := e.c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, res.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// resultSet is what executeSql answers: rows of JSON values (INT64 as decimal strings, BYTES
// as base64).
type resultSet struct {
	Metadata struct {
		Transaction struct {
			ID string `json:"id"`
		} `json:"transaction"`
	} `json:"metadata"`
	Rows [][]json.RawMessage `json:"rows"`
}

// session opens a session of the database.
func (e *emulator) session(ctx context.Context, t *testing.T) string {
	t.Helper()
	var s struct {
		Name string `json:"name"`
	}
	if err := e.call(ctx, http.MethodPost, e.db+"/sessions", map[string]any{}, &s); err != nil {
		t.Fatal(err)
	}
	return s.Name
}

// query runs sql with params (name: value, type) in a single-use read-only transaction, or
// in a new read-write one that it commits when readWrite, and returns the rows.
func (e *emulator) query(ctx context.Context, t *testing.T, sess, sql string, params map[string]any, types map[string]any, readWrite bool) [][]json.RawMessage {
	t.Helper()
	body := map[string]any{"sql": sql}
	if params != nil {
		body["params"], body["paramTypes"] = params, types
	}
	if readWrite {
		body["transaction"] = map[string]any{"begin": map[string]any{"readWrite": map[string]any{}}}
		body["seqno"] = "1"
	}
	var rs resultSet
	if err := e.call(ctx, http.MethodPost, sess+":executeSql", body, &rs); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if readWrite {
		if err := e.call(ctx, http.MethodPost, sess+":commit", map[string]any{"transactionId": rs.Metadata.Transaction.ID}, nil); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	return rs.Rows
}

// int64s reads column col of rows as INT64 values.
func int64s(t *testing.T, rows [][]json.RawMessage, col int) []uint64 {
	t.Helper()
	out := make([]uint64, len(rows))
	for i, r := range rows {
		var s string
		if err := json.Unmarshal(r[col], &s); err != nil {
			t.Fatalf("row %d: %s: %v", i, r[col], err)
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		out[i] = uint64(v)
	}
	return out
}

var (
	int64Array = map[string]any{"code": "ARRAY", "arrayElementType": map[string]any{"code": "INT64"}}
	bytesArray = map[string]any{"code": "ARRAY", "arrayElementType": map[string]any{"code": "BYTES"}}
)

// decimals writes vs as INT64 JSON values.
func decimals(vs []uint64) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strconv.FormatInt(int64(v), 10)
	}
	return out
}

// TestSpannerEmulator checks idkit's keys for Spanner on the Cloud Spanner emulator:
//   - BIT_REVERSE(x, true) of the layout values of reverse=true IDs (twitter, discord,
//     sonyflake, and edge values) gives exactly the IDs idkit stores, and of the IDs gives the
//     values back;
//   - a bit_reversed_positive sequence issues exactly the values segment:…,reverse=true issues
//     from the same counter (1, 2, 3, …);
//   - IDs of every 64-bit layout preset (and twitter with reverse=true, reverse=time and
//     shard_bits=5), written to an INT64 primary key, read back sorted as Spanner sorts them,
//     and UUIDv7s and UUIDv4s as BYTES(16) keys beside their text.
func TestSpannerEmulator(t *testing.T) {
	e := startEmulator(t, []string{
		"CREATE SEQUENCE s OPTIONS (sequence_kind = 'bit_reversed_positive')",
		"CREATE TABLE ids (id INT64 NOT NULL, spec STRING(MAX)) PRIMARY KEY (id)",
		"CREATE TABLE uuids (id BYTES(16) NOT NULL, text STRING(36), spec STRING(MAX)) PRIMARY KEY (id)",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess := e.session(ctx, t)

	t.Run("BIT_REVERSE", func(t *testing.T) {
		var values, stored []uint64
		for _, spec := range []string{"snowflake:reverse=true,node=5", "snowflake:layout=discord,reverse=true,worker=3", "snowflake:layout=sonyflake,reverse=true,machine=65535"} {
			s, err := idkit.New(spec)
			if err != nil {
				t.Fatal(err)
			}
			l := s.(idkit.Layouter).Layout()
			ids := make([]idkit.ID, 500)
			if err := s.(idkit.Batcher).NextBatch(ids); err != nil {
				t.Fatal(err)
			}
			s.(io.Closer).Close()
			for _, id := range ids {
				values = append(values, l.Value(id.Uint64()))
				stored = append(stored, id.Uint64())
			}
		}
		for _, v := range []uint64{0, 1, 2, 1 << 62, 1<<63 - 1, 0x5555555555555555, 12345} {
			values = append(values, v)
			stored = append(stored, layouts.Reverse63(v))
		}
		const q = "SELECT BIT_REVERSE(x, true), BIT_REVERSE(x, false) FROM UNNEST(@xs) AS x WITH OFFSET o ORDER BY o"
		rows := e.query(ctx, t, sess, q, map[string]any{"xs": decimals(values)}, map[string]any{"xs": int64Array}, false)
		backRows := e.query(ctx, t, sess, q, map[string]any{"xs": decimals(stored)}, map[string]any{"xs": int64Array}, false)
		if len(rows) != len(values) || len(backRows) != len(values) {
			t.Fatalf("%d and %d rows for %d values", len(rows), len(backRows), len(values))
		}
		fwd, back, signed := int64s(t, rows, 0), int64s(t, backRows, 0), int64s(t, rows, 1)
		bad, control := 0, 0
		for i := range values {
			if fwd[i] != stored[i] || back[i] != values[i] {
				if bad++; bad <= 5 {
					t.Errorf("value %d: BIT_REVERSE = %d, idkit stores %d; BIT_REVERSE of the ID = %d", values[i], fwd[i], stored[i], back[i])
				}
			}
			if signed[i] == stored[i] {
				control++
			}
		}
		// Control: BIT_REVERSE(x, false), which reverses all 64 bits, must disagree, or the
		// comparison above would accept anything.
		if control > 1 {
			t.Errorf("control: BIT_REVERSE(x, false) agreed with reverse=true on %d of %d values (only 0 should)", control, len(values))
		}
		t.Logf("BIT_REVERSE(x, true) agreed with reverse=true on %d of %d values, BIT_REVERSE(x, false) (the control) on %d", len(values)-bad, len(values), control)
	})

	t.Run("bit_reversed_positive", func(t *testing.T) {
		const n = 300
		rows := e.query(ctx, t, sess, fmt.Sprintf("SELECT GET_NEXT_SEQUENCE_VALUE(SEQUENCE s) FROM UNNEST(GENERATE_ARRAY(1, %d))", n), nil, nil, true)
		got := int64s(t, rows, 0)
		s, err := idkit.New("segment:store=countfrom1://x,key=k,step=100,reverse=true")
		if err != nil {
			t.Fatal(err)
		}
		defer s.(io.Closer).Close()
		ids := make([]idkit.ID, n)
		if err := s.(idkit.Batcher).NextBatch(ids); err != nil {
			t.Fatal(err)
		}
		want := make([]uint64, n)
		for i, id := range ids {
			want[i] = id.Uint64()
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("the sequence issued %v…, segment reverse=true %v…", got[:5], want[:5])
		}
		// Control: the counter's values unreversed (a segment without reverse) must differ.
		plain := make([]uint64, n)
		for i := range plain {
			plain[i] = uint64(i + 1)
		}
		if slices.Equal(got, plain) {
			t.Error("control: the sequence issued the plain counter 1..n")
		}
		t.Logf("a bit_reversed_positive sequence and segment reverse=true issued the same %d values", n)
	})

	t.Run("round trip", func(t *testing.T) {
		var specs []string
		for _, p := range layouts.Presets() {
			specs = append(specs, "snowflake:layout="+p.Name)
		}
		specs = append(specs, "snowflake:reverse=true", "snowflake:reverse=time", "snowflake:shard_bits=5")
		var mutations []any
		want := map[string][]uint64{}
		for _, spec := range specs {
			ids := make([]uint64, 200)
			s, err := idkit.New(spec)
			switch {
			case err == nil:
				batch := make([]idkit.ID, len(ids))
				if err := s.(idkit.Batcher).NextBatch(batch); err != nil {
					t.Fatal(err)
				}
				s.(io.Closer).Close()
				for i, id := range batch {
					ids[i] = id.Uint64()
				}
			case errors.Is(err, idkit.ErrSpec):
				t.Fatal(err)
			default:
				// A preset whose time ran out (baidu, in 2024): its last tick's IDs, composed.
				c, cerr := idkit.NewCodec(spec)
				if cerr != nil {
					t.Fatal(cerr)
				}
				l := c.(idkit.Layouter).Layout()
				for i := range ids {
					if ids[i], err = l.Compose(l.MaxTick(), uint64(i), uint64(i)); err != nil {
						t.Fatal(err)
					}
				}
			}
			var vals [][]string
			for _, v := range ids {
				if v>>63 != 0 {
					t.Fatalf("%s: ID %d does not fit INT64", spec, v)
				}
				vals = append(vals, []string{strconv.FormatUint(v, 10), spec})
			}
			mutations = append(mutations, map[string]any{"insert": map[string]any{"table": "ids", "columns": []string{"id", "spec"}, "values": vals}})
			slices.Sort(ids)
			want[spec] = ids
		}
		var uvals [][]string
		wantU := map[string][]string{}
		for _, spec := range []string{"uuidv7", "uuidv4"} {
			s, err := idkit.New(spec)
			if err != nil {
				t.Fatal(err)
			}
			for range 200 {
				id, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				b := id.Bytes16()
				uvals = append(uvals, []string{base64.StdEncoding.EncodeToString(b[:]), id.String(), spec})
				wantU[spec] = append(wantU[spec], id.String())
			}
			slices.Sort(wantU[spec]) // lower-case hex text sorts as the bytes do
		}
		mutations = append(mutations, map[string]any{"insert": map[string]any{"table": "uuids", "columns": []string{"id", "text", "spec"}, "values": uvals}})
		if err := e.call(ctx, http.MethodPost, sess+":commit", map[string]any{"singleUseTransaction": map[string]any{"readWrite": map[string]any{}}, "mutations": mutations}, nil); err != nil {
			t.Fatalf("writing the IDs: %v", err)
		}
		for _, spec := range specs {
			rows := e.query(ctx, t, sess, "SELECT id FROM ids WHERE spec = @s ORDER BY id", map[string]any{"s": spec}, map[string]any{"s": map[string]any{"code": "STRING"}}, false)
			if got := int64s(t, rows, 0); !slices.Equal(got, want[spec]) {
				t.Errorf("%s: read back %d IDs, not the %d written in order", spec, len(got), len(want[spec]))
			}
		}
		for spec, texts := range wantU {
			rows := e.query(ctx, t, sess, "SELECT id, text FROM uuids WHERE spec = @s ORDER BY id", map[string]any{"s": spec}, map[string]any{"s": map[string]any{"code": "STRING"}}, false)
			if len(rows) != len(texts) {
				t.Fatalf("%s: %d rows, want %d", spec, len(rows), len(texts))
			}
			for i, r := range rows {
				var b64, text string
				json.Unmarshal(r[0], &b64)
				json.Unmarshal(r[1], &text)
				raw, err := base64.StdEncoding.DecodeString(b64)
				if err != nil || len(raw) != 16 || text != texts[i] {
					t.Fatalf("%s row %d: id %q (%v), text %q; want %s", spec, i, b64, err, text, texts[i])
				}
				if id, err := idkit.Parse(text); err != nil || !bytes.Equal(raw, func() []byte { b := id.Bytes16(); return b[:] }()) {
					t.Fatalf("%s row %d: the key %x is not the UUID %s (%v)", spec, i, raw, text, err)
				}
			}
		}
		t.Logf("%d layouts x 200 IDs and 2 x 200 UUIDs written and read back in key order", len(specs))
	})
}

// countStore is a segment store whose counter starts at 1, as a Spanner sequence's does.
type countStore struct {
	mu   sync.Mutex
	next map[string]uint64
}

func (c *countStore) Take(_ context.Context, r segment.Request) (segment.Block, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := c.next[r.Key] + 1
	c.next[r.Key] += r.Step
	return segment.Block{First: first, Last: c.next[r.Key]}, nil
}

func (*countStore) Close() error { return nil }

type countDriver struct{}

func (countDriver) OpenStore(context.Context, string) (segment.Store, error) {
	return &countStore{next: map[string]uint64{}}, nil
}

func (countDriver) DescribeStore(string) string { return "a counter from 1 in memory" }

func init() { segment.RegisterStore("countfrom1", countDriver{}) }

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lockedBuffer holds the gateway's and the emulator's output, written from the processes'
// copying goroutines while a test may read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
