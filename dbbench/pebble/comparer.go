package pebble

import (
	"runtime/debug"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// mvccComparer orders keys as bytes (CockroachDB's EngineComparer orders a key's versions
// newest first; the loads here write one version per key, so byte order is the same order),
// and splits off the MVCC version suffix (Split), so that a prefix seek and the bloom
// filters work on the row key as in CockroachDB. The row keys are self-delimiting (each
// ends with its column family or its key's encoding), so no row key is a prefix of
// another, as Split's ordering rules ask. Separator and Successor return their first key
// unchanged, so that no index-block key is made up that could look versioned.
func mvccComparer() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Name = "idkit.cockroach-mvcc-bytes"
	c.Split = func(k []byte) int {
		if n := len(k); n >= mvccSuffixLen && k[n-1] == mvccSuffixLen-1 && k[n-mvccSuffixLen] == 0 {
			return n - mvccSuffixLen
		}
		return len(k)
	}
	c.Separator = func(dst, a, _ []byte) []byte { return append(dst, a...) }
	c.Successor = func(dst, a []byte) []byte { return append(dst, a...) }
	return &c
}

// bloomPolicy is CockroachDB's filter policy: bloom filters of 10 bits per key.
func bloomPolicy() pebble.FilterPolicy { return bloom.FilterPolicy(10) }

// pebbleVersion is the Pebble module's version in the binary's build information.
func pebbleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/cockroachdb/pebble/v2" {
				return d.Version
			}
		}
	}
	return "(version unknown)"
}
