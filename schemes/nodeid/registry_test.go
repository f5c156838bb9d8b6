package nodeid_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/idkit/idkit/schemes/nodeid"
)

// memDriver opens memStores from mem:// URLs.
type memDriver struct{ m *memStore }

func (d memDriver) OpenStore(context.Context, string) (nodeid.Store, error) { return view{m: d.m}, nil }
func (d memDriver) DescribeStore(url string) string                         { return "memory store " + url }

func init() { nodeid.RegisterStore("Mem", memDriver{&memStore{slots: map[uint64]*memSlot{}}}) }

func TestStoreRegistry(t *testing.T) {
	// This test binary imports no store package: idkit's own schemes say which import is
	// missing.
	for url, want := range map[string]string{
		"etcd://127.0.0.1:2379/p": `add import _ "github.com/idkit/idkit/schemes/nodeid/etcdlease"`,
		"PG://u:pw@h/db":          `add import _ "github.com/idkit/idkit/schemes/nodeid/pglease"`,
		"postgresql://h/db":       `add import _ "github.com/idkit/idkit/schemes/nodeid/pglease"`,
		"redis://127.0.0.1:6379":  "no lease store registered for URL scheme redis:// (registered: mem)",
		"not a url":               "want scheme://",
		"1http://x":               "want scheme://",
	} {
		_, err := nodeid.OpenStore(context.Background(), url)
		if !errors.Is(err, nodeid.ErrNoStoreDriver) || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenStore(%q) = %v, want ErrNoStoreDriver saying %q", url, err, want)
		}
	}
	s, err := nodeid.OpenStore(context.Background(), "MEM://x")
	if err != nil {
		t.Fatalf("OpenStore of a registered scheme, other case: %v", err)
	}
	l, err := nodeid.Hold(context.Background(), s, nodeid.LeaseSettings{Nodes: 4})
	if err != nil {
		t.Fatal(err)
	}
	if l.Node() != 0 {
		t.Errorf("first claim got node %d, want 0", l.Node())
	}
	l.Close()
	if got := nodeid.StoreSchemes(); !slices.Equal(got, []string{"mem"}) {
		t.Errorf("StoreSchemes() = %v", got)
	}
	for in, want := range map[string]string{
		"mem://x":                      "memory store mem://x",
		"pg://u:hunter2@db:5432/x?y=1": "pg://db:5432",
	} {
		if got := nodeid.DescribeStore(in); got != want {
			t.Errorf("DescribeStore(%q) = %q, want %q", in, got, want)
		}
	}
	for s, want := range map[string]bool{"etcd://h": true, "a+b-c.d://x": true, "pg:/x": false, "://x": false, "9p://x": false, "node=3": false} {
		if got := nodeid.IsStoreURL(s); got != want {
			t.Errorf("IsStoreURL(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestRegisterStorePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"twice":      func() { nodeid.RegisterStore("mem", memDriver{}) },
		"empty":      func() { nodeid.RegisterStore("", memDriver{}) },
		"bad scheme": func() { nodeid.RegisterStore("my_store", memDriver{}) },
		"nil driver": func() { nodeid.RegisterStore("nildriver", nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "nodeid: ") {
					t.Errorf("panic %v, want one starting with nodeid:", r)
				}
			}()
			f()
		})
	}
}
