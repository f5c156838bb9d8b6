package nodeid_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/nodeid/internal/proctest"
	"github.com/idkit/idkit/schemes/nodeid/internal/storetest"
)

// TestStaticRestartClockBack kills a process with a fixed node and restarts it at once with
// its clock 2 s behind. With a mark file the restarted one waits out the mark and no ID
// repeats; without one (the control) it reissues its predecessor's IDs, which shows the test
// can see duplicates.
func TestStaticRestartClockBack(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	bin := proctest.Build(t)
	for _, tc := range []struct {
		name  string
		marks bool
	}{{"marks", true}, {"control-without-marks", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"-node", "5", "-node-bits", "3"}
			if tc.marks {
				args = append(args, "-marks", filepath.Join(dir, "orders-{node}.mark"))
			}
			a := proctest.Start(t, bin, dir, "first", append(args, "-for", "10s")...)
			a.Node(t, 10*time.Second)
			time.Sleep(2500 * time.Millisecond)
			a.Kill()
			b := proctest.Start(t, bin, dir, "restarted", append(args, "-for", "3s", "-offset", "-2s", "-drift-wait", "5s")...)
			b.Wait(t, 15*time.Second)
			checked, dups := storetest.Unique(proctest.Read(t, a.Out), proctest.Read(t, b.Out))
			t.Logf("%s: %d IDs checked, %d duplicates; restarted: %s", tc.name, checked, dups, b.Log())
			if tc.marks && dups != 0 {
				t.Errorf("%d duplicate IDs with a mark file", dups)
			}
			if !tc.marks && dups == 0 {
				t.Logf("control: no duplicates without marks (the restart missed the old IDs' ticks)")
			}
		})
	}
}
