package redact_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/idkit/idkit/internal/redact"
)

func TestError(t *testing.T) {
	if redact.Error(nil) != nil {
		t.Fatal("Error(nil) != nil")
	}
	err := redact.Error(fmt.Errorf("connect to postgres://u:hunter2@h/db: %w", io.EOF))
	if got, want := err.Error(), "connect to postgres://u:xxxxx@h/db: EOF"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, io.EOF) {
		t.Errorf("errors.Is(%v, io.EOF) = false, want true", err)
	}
}

func TestRefError(t *testing.T) {
	const key = "0011223344556677:8899aabbccddeeff"
	for _, tt := range []struct {
		ref  string
		safe bool
	}{
		{"env:ID_KEY", true},
		{"env:_k1", true},
		{"file:/etc/idkit/key", true},
		{"file:key.txt", true},
		{"file:/var/lib/docker/containers/" + strings.Repeat("ab12", 16) + "/key", true},
		{"env:" + key, false},
		{"env:8899aabbccddeeff", false},
		{"env:KEY_8899AABBCCDDEEFF", false},
		{"env:1ABC", false},
		{"env:A-B", false},
		{"env:", false},
		{"file:", false},
		{"file:" + key, false},
		{"file:8899aabbccddeeff", false},
		{"file:/run/" + key, false},
		{"file: " + key + "\n", false},
		{key, false},
		{"vault:x", false},
	} {
		msg := redact.RefError(tt.ref)
		if (msg == "") != tt.safe || redact.SafeRef(tt.ref) != tt.safe {
			t.Errorf("RefError(%q) = %q, want safe %v", tt.ref, msg, tt.safe)
		}
		if strings.Contains(msg, "8899") || strings.Contains(msg, "0011") {
			t.Errorf("RefError(%q) shows the key: %s", tt.ref, msg)
		}
	}
}

// TestStringTwice: redacting a redacted text changes nothing. A second pass used to read the
// mask value of a quoted spec as running to the next blank, and ate the closing quote.
func TestStringTwice(t *testing.T) {
	for _, s := range []string{
		`idkit: bad spec "snowflake:mask=0011223344556677:8899aabbccddeeff": the mask setting wants env:NAME`,
		`idkit: bad spec "snowflake:mask=env:0011223344556677:8899aabbccddeeff,prefix=x": bad`,
		`idkit: bad spec "remote:addr=h:1,generator=g,token_env=s3cr3t-t0ken": bad`,
		`idkit: bad spec "snowflake:mask=env:ID_KEY": environment variable ID_KEY is not set`,
		`bad spec "snowflake:node=pg://u:hunter2@h/db?password=x": refused`,
		`bad spec "snowflake:password=hunter2": unknown key`,
	} {
		once := redact.String(s)
		if twice := redact.String(once); twice != once {
			t.Errorf("String(String(%q))\n = %q\nwant %q", s, twice, once)
		}
		for _, secret := range []string{"8899aabb", "s3cr3t", "hunter2"} {
			if strings.Contains(once, secret) {
				t.Errorf("String(%q) = %q shows %s", s, once, secret)
			}
		}
		if strings.Contains(s, "ID_KEY") && !strings.Contains(once, "env:ID_KEY\"") {
			t.Errorf("String(%q) = %q hides a safe reference", s, once)
		}
	}
}

// TestStringReferenceInProse: a safe reference quoted in prose, followed by its closing
// punctuation, stays readable (idkitd's "masks its IDs (mask=env:K):" lost it), and a key
// followed by the same punctuation is still hidden.
func TestStringReferenceInProse(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`generator "g" masks its IDs (mask=env:ID_KEY): decoding`, `generator "g" masks its IDs (mask=env:ID_KEY): decoding`},
		{`masks its IDs (mask=file:/run/keys/k). Then`, `masks its IDs (mask=file:/run/keys/k). Then`},
		{`masks its IDs (mask=env:0011223344556677:8899aabbccddeeff): decoding`, `masks its IDs (mask=` + redact.Mask + ` decoding`},
		{`masks its IDs (mask=0011223344556677:8899aabbccddeeff).`, `masks its IDs (mask=` + redact.Mask},
	} {
		if got := redact.String(tt.in); got != tt.want {
			t.Errorf("String(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
}
