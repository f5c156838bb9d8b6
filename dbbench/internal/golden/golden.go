// Package golden compares a test's output with a file under testdata, for the engine
// packages' tests.
package golden

import (
	"os"
	"testing"
)

// Check fails t unless got equals the file at path, naming what differs as what. With update
// it first writes got to the file (a test's -update flag, for a deliberate change).
func Check(t testing.TB, path, what, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s changed; got:\n%s\nwant (%s):\n%s", what, got, path, want)
	}
}
