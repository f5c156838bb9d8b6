package segment_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idkit/idkit"
)

// TestStepMessages: every refused step names the same range, whatever was wrong with it.
func TestStepMessages(t *testing.T) {
	const want = "want a whole number from 1 to 4611686018427387903"
	for _, step := range []string{"-1", "0", "x", "4611686018427387904", "99999999999999999999"} {
		_, err := idkit.NewCodec("segment:store=pg://h/db,key=k,step=" + step)
		if !errors.Is(err, idkit.ErrSpec) || !strings.Contains(err.Error(), "step="+step+": "+want) {
			t.Errorf("step=%s: %v, want %q", step, err, want)
		}
	}
}
