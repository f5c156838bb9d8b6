package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// nodeResult is one line that testdata/node/clients.mjs prints: one client's IDs and the
// problems it found, or, for the longs: Number client, what JavaScript numbers made of them.
type nodeResult struct {
	Client       string   `json:"client"`
	N            int      `json:"n"`
	Distinct     int      `json:"distinct"`
	IDs          []string `json:"ids"`
	Problems     []string `json:"problems"`
	Error        string   `json:"error"`
	DistinctText int      `json:"distinct_text"`
	Mismatched   int      `json:"mismatched"`       // String(number) is not the ID's text
	MismatchedV  int      `json:"mismatched_value"` // the number's exact value is not the ID
	Multiples256 bool     `json:"multiples_of_256"` // every number is a multiple of 256
	Example      struct {
		ID     string `json:"id"`
		Number string `json:"number"`
	} `json:"example"`
}

// needNode returns the paths of node and npm, or skips the test (fails it under CI=true,
// where .ci/run installs them).
func needNode(t *testing.T) (node, npm string) {
	t.Helper()
	node, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node and npm are needed under CI=true (.ci/run installs Debian's nodejs and npm): %v %v", err1, err2)
		}
		t.Skip("node and npm not installed (apt-get install nodejs npm); skipping the Node clients")
	}
	return node, npm
}

// TestNodeClients runs the Node clients docs/service.md shows against a server on loopback:
// @grpc/grpc-js with longs: String (on both stacks), Connect-ES 2 with BigInt (Connect and gRPC
// protocols) and fetch() (GET /v1/next and Connect JSON with text: true). Each must get N
// distinct IDs, hold each as the server's own text of it, and get that text back from Decode;
// the Go client's Decode must agree, and no ID may reach two clients. Then grpc-js with
// longs: Number takes 1,000 IDs, and the test logs (and requires) what the rounding does:
// docs/service.md quotes that line.
//
// It installs the packages of testdata/node/package-lock.json with npm ci into a temporary
// directory (the npm registry must be reachable), and skips without node and npm, or with
// -short; under CI=true a missing node fails it.
func TestNodeClients(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the Node clients (npm ci)")
	}
	node, npm := needNode(t)
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "clients.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "node", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	started := time.Now()
	install := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline",
		"--cache", filepath.Join(dir, ".npm-cache"))
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	t.Logf("npm ci took %v", time.Since(started).Round(time.Millisecond))

	r := start(t, server.Config{Generators: []server.Generator{
		{Name: "orders", Spec: "snowflake:layout=twitter,worker=3"},
	}, MaxCount: 1000})
	fd, err := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(v1.File_idkit_proto)}})
	if err != nil {
		t.Fatal(err)
	}
	protoPath, err := filepath.Abs(filepath.Join("..", "idkitv1", "idkit.proto"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{
		"url":         r.url,
		"grpc":        []string{strings.TrimPrefix(r.url, "http://"), r.grpc},
		"proto":       protoPath,
		"descriptors": filepath.Join(dir, "idkit.binpb"),
		"generator":   "orders",
		"n":           300,
		"rounding_n":  1000,
	})
	for name, b := range map[string][]byte{"idkit.binpb": fd, "config.json": cfg} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	started = time.Now()
	run := exec.CommandContext(ctx, node, "clients.mjs", "--config", "config.json")
	run.Dir = dir
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, runErr := run.Output()
	t.Logf("the Node clients took %v", time.Since(started).Round(time.Millisecond))

	c := idkitv1connect.NewIDServiceClient(h2(), r.url)
	seen := map[string]string{}
	var clients []string
	var rounding *nodeResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var res nodeResult
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			t.Fatalf("clients.mjs printed %q: %v", sc.Text(), err)
		}
		if res.Error != "" {
			t.Errorf("%s: %s", res.Client, res.Error)
			continue
		}
		if strings.HasPrefix(res.Client, "grpc-js longs: Number") {
			rounding = &res
			continue
		}
		clients = append(clients, res.Client)
		if len(res.Problems) > 0 || res.N != 300 || res.Distinct != 300 {
			t.Errorf("%s: %d IDs, %d distinct; problems: %q", res.Client, res.N, res.Distinct, res.Problems)
		}
		for _, id := range res.IDs {
			if other, dup := seen[id]; dup {
				t.Fatalf("ID %s reached both %s and %s", id, other, res.Client)
			}
			seen[id] = res.Client
		}
		for _, id := range res.IDs[:10] {
			d, err := c.Decode(ctx, connect.NewRequest(&v1.DecodeRequest{Generator: "orders", Id: id}))
			if err != nil || d.Msg.Text != id {
				t.Errorf("%s: the Go client decodes %s as %v, %v", res.Client, id, d, err)
			}
		}
	}
	if runErr != nil {
		t.Fatalf("node clients.mjs: %v\n%s", runErr, stderr.Bytes())
	}
	if len(clients) != 6 {
		t.Fatalf("clients that reported: %q; want grpc-js on both stacks, Connect-ES over Connect and gRPC, fetch of /v1/next and of Connect JSON", clients)
	}
	if rounding == nil {
		t.Fatal("no line from the longs: Number client")
	}
	t.Logf("grpc-js with longs: Number: %d Snowflake IDs (%d distinct) became %d distinct numbers; %d print as another ID, %d hold another value (e.g. %s became %s)",
		rounding.N, rounding.DistinctText, rounding.Distinct, rounding.Mismatched, rounding.MismatchedV, rounding.Example.ID, rounding.Example.Number)
	if !rounding.Multiples256 {
		t.Errorf("longs: Number gave numbers that are not multiples of 256: docs/service.md says twitter-layout IDs round to them")
	}
	if rounding.N != 1000 || rounding.DistinctText != 1000 || rounding.Distinct >= rounding.N || rounding.Mismatched == 0 || rounding.MismatchedV == 0 {
		t.Errorf("longs: Number kept the IDs apart (%d numbers for %d IDs, %d mismatched): docs/service.md says it rounds them", rounding.Distinct, rounding.N, rounding.Mismatched)
	}
}

// TestGeneratorsBeforeFirstID: Generators gives every generator's width before it has issued
// an ID (128 for the 128-bit schemes, 64 for the rest), and sonyflake's machine as its node.
func TestGeneratorsBeforeFirstID(t *testing.T) {
	t.Parallel()
	r := start(t, server.Config{Generators: []server.Generator{
		{Name: "u7", Spec: "uuidv7"}, {Name: "u4", Spec: "uuidv4"}, {Name: "ul", Spec: "ulid"}, {Name: "ti", Spec: "typeid:prefix=user"},
		{Name: "sf", Spec: "sonyflake:machine=4242"}, {Name: "tw", Spec: "snowflake:layout=twitter,node=9"},
	}})
	c := idkitv1connect.NewIDServiceClient(h2(), r.url)
	res, err := c.Generators(context.Background(), connect.NewRequest(&v1.GeneratorsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int32{"u7": 128, "u4": 128, "ul": 128, "ti": 128, "sf": 64, "tw": 64}
	for _, g := range res.Msg.Generators {
		if g.Bits != want[g.Name] {
			t.Errorf("%s: bits %d, want %d", g.Name, g.Bits, want[g.Name])
		}
		if g.Name == "sf" && (g.Node == nil || g.GetNode() != 4242) {
			t.Errorf("sonyflake: node %v, want 4242", g.Node)
		}
	}
}
