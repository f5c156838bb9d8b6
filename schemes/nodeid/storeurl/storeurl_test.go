package storeurl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/nodeid/storeurl"
)

// TestNoPasswordInMessages opens bad or unreachable store URLs that carry a password and checks
// that neither the error nor Describe repeats it.
func TestNoPasswordInMessages(t *testing.T) {
	const pw = "hunter2"
	urls := []string{
		"postgres://u:hunter2@h:x/db",                           // net/url quotes the URL in its error
		"pg://u:hunter2@h/db?namespace=x&table=bad-name",        // bad table
		"postgresql://u:hunter2@h/db?namespace=",                // empty namespace
		"pg://u:hunter2@h/db#frag",                              // fragment
		"postgres://u:hunter2@h/db?sslmode=bogus",               // pgx refuses the DSN
		"postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=2", // nothing listens on port 1
		"etcd://u:hunter2@127.0.0.1:2379/p",                     // etcd URLs take no user
		"etcd://127.0.0.1:x/p?password=hunter2",                 // query
	}
	for _, u := range urls {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := storeurl.Open(ctx, u)
		cancel()
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want an error", u)
			continue
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("Open(%q) error shows the password: %v", u, err)
		}
		if d := storeurl.Describe(u); strings.Contains(d, pw) {
			t.Errorf("Describe(%q) = %q shows the password", u, d)
		}
	}
	if _, err := storeurl.Open(context.Background(), "mysql://u:hunter2@h/db"); err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("Open(mysql://…) error = %v, want one without the password", err)
	}
}
