package remote

import (
	"errors"
	"strings"
	"testing"

	"github.com/idkit/idkit"
)

// FuzzParse reads arbitrary remote specs without dialing: every spec either gives a Config
// with an address and a generator or an error wrapping idkit.ErrSpec; none panics, and no
// message shows a password.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"remote:addr=127.0.0.1:7070,generator=orders",
		"remote:addr=[::1]:7070,generator=orders,prefetch=1000,protocol=json,tls=true",
		"remote:addr=h:1,generator=g,timeout=1s,retry_for=0s,max_count=0",
		"remote:addr=h:1,generator=g,token_env=HOME",
		"remote:addr=postgres://u:hunter2@h:1/db,generator=x",
		"remote:generator=orders,prefetch=-1",
		"remote",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		sp, err := idkit.ParseSpec(spec)
		if err != nil {
			return
		}
		c, err := parse(sp)
		if err != nil {
			if !errors.Is(err, idkit.ErrSpec) {
				t.Fatalf("%q: error %v does not wrap ErrSpec", spec, err)
			}
			if !strings.Contains(idkit.Redact(spec), "hunter2") && strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("%q: error shows the password: %v", spec, err)
			}
			return
		}
		if c.Addr == "" || c.Generator == "" || c.MaxCount < 1 || c.Timeout <= 0 || c.RetryFor <= 0 {
			t.Fatalf("%q: accepted an incomplete config %+v", spec, c)
		}
	})
}
