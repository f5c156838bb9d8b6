package remote_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/schemes/remote/server"
)

const (
	maskEnv   = "IDKIT_TEST_REMOTE_MASK"
	serverEnv = "IDKIT_TEST_SERVER_MASK"
)

// TestPublicText: the remote scheme shows the stored IDs its service sends in its own public
// text (prefix=, mask=), exactly as NewCodec of the service's scheme with that prefix and mask
// shows them, whatever the service generator's own prefix and mask; Parse reads that text
// back to the stored ID, and Decode takes the stored ID apart.
func TestPublicText(t *testing.T) {
	t.Setenv(maskEnv, "0011223344556677:8899aabbccddeeff")
	t.Setenv(serverEnv, "ffeeddccbbaa9988:7766554433221100")
	addr, _ := serve(t, "127.0.0.1:0",
		server.Generator{Name: "orders", Spec: "snowflake:layout=twitter,worker=9"},
		server.Generator{Name: "public", Spec: "snowflake:layout=twitter,worker=3,prefix=srv,mask=env:" + serverEnv},
		server.Generator{Name: "keys", Spec: "uuidv7"},
		server.Generator{Name: "sessions", Spec: "ulid"},
	)
	for _, tc := range []struct{ gen, text, stored string }{
		{"orders", "prefix=ord", "snowflake:layout=twitter,worker=9"},
		{"orders", "mask=env:" + maskEnv, "snowflake:layout=twitter,worker=9"},
		{"orders", "prefix=ord,mask=env:" + maskEnv, "snowflake:layout=twitter,worker=9"},
		{"public", "prefix=ord,mask=env:" + maskEnv, "snowflake:layout=twitter,worker=3"},
		{"public", "", "snowflake:layout=twitter,worker=3"},
		{"keys", "mask=env:" + maskEnv, "uuidv7"},
		{"keys", "prefix=key", "uuidv7"},
		{"sessions", "prefix=ses,mask=env:" + maskEnv, "ulid"},
	} {
		for _, proto := range []string{"grpc", "json"} {
			spec := "remote:addr=" + addr + ",generator=" + tc.gen + ",protocol=" + proto
			want := tc.stored
			if tc.text != "" {
				spec += "," + tc.text
				if strings.Contains(want, ":") {
					want += "," + tc.text
				} else {
					want += ":" + tc.text
				}
			}
			s, err := idkit.New(spec)
			if err != nil {
				t.Fatal(err)
			}
			if tc.text != "" && !strings.HasSuffix(s.Name(), ","+tc.text) {
				t.Errorf("Name() = %q, want it to end in %s", s.Name(), tc.text)
			}
			local, err := idkit.NewCodec(want)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]idkit.ID, 200)
			if err := s.(idkit.Batcher).NextBatch(ids); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				pub, err := idkit.FormatID(s, id)
				if err != nil {
					t.Fatal(err)
				}
				if w, err := idkit.FormatID(local, id); err != nil || pub != w {
					t.Fatalf("%s: %s shows as %q; NewCodec(%q) shows %q, %v", spec, id, pub, want, w, err)
				}
				if back, err := s.Parse(pub); err != nil || back != id {
					t.Fatalf("%s: Parse(%q) = %s, %v; want %s", spec, pub, back, err, id)
				}
			}
			if tc.gen != "keys" && tc.gen != "sessions" {
				p, err := s.Decode(ids[0])
				if wantNode := map[string]uint64{"orders": 9, "public": 3}[tc.gen]; err != nil || p.Node != wantNode {
					t.Errorf("%s: Decode(%s) = %+v, %v; want node %d", spec, ids[0], p, err, wantNode)
				}
			}
			s.(io.Closer).Close()
		}
	}
	// A mask the program cannot apply: a key that is not there.
	if _, err := idkit.New("remote:addr=" + addr + ",generator=orders,mask=env:IDKIT_TEST_UNSET_MASK"); !errors.Is(err, idkit.ErrSpec) {
		t.Errorf("mask with no key: %v, want ErrSpec", err)
	}
}
