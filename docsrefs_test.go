package idkit_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// internalRef matches words in the docs that only the project's own tracker or repository can
// resolve: an issue number ("issue 28", "issues 24 and 25", "issue #7" without a project
// before it) and a branch ("main's binaries", "on branch corespeed", "the main branch"). An
// issue of another project is cited with its project ("etcd #11457", "cockroach PR #70338"),
// and the verb "issues" before a count of IDs is not a reference.
var internalRef = regexp.MustCompile(`(?i)\bissues? #?[0-9]+\b(?:[, ]+(?:and |items? )?[0-9]+\b)*` +
	`|\bmain's\b|\b(?:on|of|from|in) (?:the )?branch\b|\bbranch [a-z][a-z0-9-]*[0-9-][a-z0-9-]*\b|\bon branch \w+|\bthe main branch\b`)

// issuesVerb is a match of internalRef that may be the verb: "issues 100,000".
var issuesVerb = regexp.MustCompile(`(?i)^issues [0-9,]+$`)

// TestDocsNoInternalReferences: README.md and the Markdown under docs/ name no issue of this
// project's tracker and no git branch: a reader of the docs has neither, so the docs describe
// the thing itself or name a commit or a file.
func TestDocsNoInternalReferences(t *testing.T) {
	files := []string{"README.md"}
	err := filepath.WalkDir("docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		// Line breaks are spaces, so a reference split over two lines is found too.
		flat := strings.ReplaceAll(text, "\n", " ")
		for _, loc := range internalRef.FindAllStringIndex(flat, -1) {
			ref := flat[loc[0]:loc[1]]
			if issuesVerb.MatchString(ref) && strings.HasPrefix(strings.TrimLeft(flat[loc[1]:], " "), "IDs") {
				continue // "the fleet issues 100,000 IDs/s": the verb
			}
			t.Errorf("%s:%d: %q refers to this project's tracker or branches; describe the thing, or name a commit or a file", f, strings.Count(text[:loc[0]], "\n")+1, ref)
		}
	}
}

// TestInternalRefPattern: the pattern finds what it is for and leaves alone what it is not.
func TestInternalRefPattern(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"the same test (issue 28) found", true},
		{"as issue 24 item 9 showed", true},
		{"issues 24 and 25", true},
		{"see issue #7", true},
		{"with main's binaries in every round", true},
		{"Main's binaries in the same rounds", true},
		{"tried as 4e36767 on branch corespeed", true},
		{"merged from the main branch", true},
		{"etcd #11457, fixed by PR #11490", false},
		{"unique_rowid reversed, cockroach PR #70338", false},
		{"the main port serves every protocol", false},
		{"with branches for an injected clock", false},
		{"commit 9264733's binaries", false},
	} {
		if got := internalRef.MatchString(tc.text); got != tc.want {
			t.Errorf("%q: matched %v, want %v", tc.text, got, tc.want)
		}
	}
}
