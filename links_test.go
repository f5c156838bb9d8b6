package idkit_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinks: every relative link in README.md and the Markdown under docs/ names a file or
// directory that exists, and its #anchor a heading of that file (GitHub's anchors: lower case,
// punctuation but - and _ dropped, spaces as -, a -N suffix for repeats). Links to the web
// are not fetched.
func TestDocsLinks(t *testing.T) {
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
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		b, _ := os.ReadFile(path)
		inCode := false
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
			}
			if inCode || !strings.HasPrefix(line, "#") {
				continue
			}
			h := strings.TrimSpace(strings.TrimLeft(line, "#"))
			slug := githubSlug(h)
			s := slug
			for n := 1; a[s]; n++ {
				s = slug + "-" + strconv.Itoa(n)
			}
			a[s] = true
		}
		anchors[path] = a
		return a
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan := regexp.MustCompile("`[^`]*`")
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inCode := false
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
			}
			if inCode {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := f
				if path != "" {
					dest = filepath.Join(filepath.Dir(f), path)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %s: %v", f, n+1, target, err)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[anchor] {
					t.Errorf("%s:%d: link %s: no heading with anchor #%s in %s", f, n+1, target, anchor, dest)
				}
				checked++
			}
		}
	}
	t.Logf("%d relative links in %d files", checked, len(files))
	if checked < 50 {
		t.Errorf("only %d relative links checked: the link pattern no longer matches the docs", checked)
	}
}

// githubSlug is the anchor GitHub gives a heading.
func githubSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
