package segment_test

import (
	"strings"
	"testing"

	"github.com/idkit/idkit"
	_ "github.com/idkit/idkit/schemes/segment/mysqlstore"
	_ "github.com/idkit/idkit/schemes/segment/pgstore"
	_ "github.com/idkit/idkit/schemes/segment/redisstore"
)

// TestStoreURLPasswordInError (issue 36 defect 6): a ?password= in a store URL hid the rest of
// the quoted spec in New's error (",key=orders", the closing quote and ": "). Each store kind's
// error now quotes the whole spec with only the password replaced. The stores listen nowhere
// (port 1) or refuse the parameter, so each New fails at once.
func TestStoreURLPasswordInError(t *testing.T) {
	for _, tt := range []struct{ store, want string }{
		{"pg://u@127.0.0.1:1/db?password=hunter2", `"segment:store=pg://u@127.0.0.1:1/db?password=xxxxx,key=orders": opening PostgreSQL`},
		{"pg://u@127.0.0.1:1/db?password=hunter2&connect_timeout=1", `"segment:store=pg://u@127.0.0.1:1/db?password=xxxxx&connect_timeout=1,key=orders": opening PostgreSQL`},
		{"mysql://u@127.0.0.1:1/db?password=hunter2", `"segment:store=mysql://u@127.0.0.1:1/db?password=xxxxx,key=orders": opening MariaDB/MySQL`},
		{"redis://127.0.0.1:1/0?password=hunter2", `"segment:store=redis://127.0.0.1:1/0?password=xxxxx,key=orders": opening Redis`},
	} {
		spec := "segment:store=" + tt.store + ",key=orders"
		_, err := idkit.New(spec)
		if err == nil {
			t.Fatalf("New(%q) opened a store on port 1", spec)
		}
		if msg := err.Error(); strings.Contains(msg, "hunter2") || !strings.Contains(msg, tt.want) {
			t.Errorf("New(%q) error:\n%s\nwant it to hold %s and no password", spec, msg, tt.want)
		}
	}
}
