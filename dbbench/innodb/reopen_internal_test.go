package innodb

import (
	"strings"
	"testing"
)

func TestReopenHidesPasswords(t *testing.T) {
	if got := mysqlReopen("db.internal:3306", "tcp", "app", true, "idbench_1"); strings.Contains(got, "hunter2") || !strings.Contains(got, "idbench_1") {
		t.Errorf("reopen command %q", got)
	}
	if got, want := mysqlReopen("/tmp/my sock", "unix", "root", false, "idbench_1"), "mysql --socket='/tmp/my sock' -u root idbench_1"; got != want {
		t.Errorf("mysqlReopen = %q, want %q", got, want)
	}
}
