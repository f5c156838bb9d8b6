package idkit_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idkit/idkit/layouts"
)

// goInstallLine is one `go install` command as a shell runs it: one package at one version.
var goInstallLine = regexp.MustCompile(`^go install [^\s@]+@v[0-9][^\s]*$`)

// TestReadmeInstallCommands checks the install commands README.md and docs/service.md show:
// each `go install` is a line of its own naming one package at one version, as `go install`
// requires of packages from different modules (one command with both tools fails: "all
// arguments must refer to packages in the same module at the same version"), and .ci/run runs
// README.md's lines as written.
func TestReadmeInstallCommands(t *testing.T) {
	var readme []string
	for _, doc := range []string{"README.md", "docs/service.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for i, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(strings.Trim(strings.TrimSpace(line), "`"))
			k := strings.Index(line, "go install ")
			if k < 0 {
				continue
			}
			cmd := line[k:]
			if e := strings.IndexAny(cmd, "`;"); e >= 0 {
				cmd = cmd[:e] // the command ends where its code span or the sentence's clause does
			}
			cmd = strings.TrimSpace(strings.TrimRight(cmd, ".,)"))
			if !goInstallLine.MatchString(cmd) {
				t.Errorf("%s:%d: %q is not one `go install PACKAGE@VERSION` a shell can run as written", doc, i+1, line)
				continue
			}
			lines = append(lines, cmd)
		}
		if doc == "README.md" {
			if len(lines) != 2 {
				t.Errorf("%s: want the two go install lines (grpcurl, grpc-health-probe), found %q", doc, lines)
			}
			readme = lines
			continue
		}
		for _, want := range readme {
			if !slices.Contains(lines, want) {
				t.Errorf("%s does not install %q as README.md does; it has %q", doc, want, lines)
			}
		}
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), `s/^ *\(go install [^ ]*\)$/\1/p' README.md`) {
		t.Errorf(".ci/run does not run README.md's go install lines")
	}
}

// TestReadmeFigures checks the figures README.md quotes that come from the code: the Go
// version of go.mod, and the dates from which the instagram and discord layouts set bit 63.
func TestReadmeFigures(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	if want := "Go " + string(m[1]) + " or later"; !strings.Contains(readme, want) {
		t.Errorf("README.md does not say %q (go.mod's go line)", want)
	}
	for name, l := range map[string]layouts.Layout{"instagram": layouts.Instagram, "discord": layouts.Discord} {
		if want := name + " from " + l.Int64Until().Format("2006-01-02"); !strings.Contains(readme, want) {
			t.Errorf("README.md does not say %q, when the %s layout sets bit 63", want, name)
		}
	}
}
