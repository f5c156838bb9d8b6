package pg

import (
	"strings"
	"testing"
)

func TestReopenHidesPasswords(t *testing.T) {
	for _, got := range []string{
		pgReopen("postgres://app:hunter2@db.internal:5432/bench", "idbench_1"),
		pgReopen("host=db.internal user=app password=hunter2 dbname=bench", "idbench_1"),
	} {
		if strings.Contains(got, "hunter2") || !strings.Contains(got, "idbench_1") {
			t.Errorf("reopen command %q", got)
		}
	}
}
