package idkit_test

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/idkit/idkit"
)

// specCase is one case of the TypeID specification's suite (testdata/typeid).
type specCase struct {
	name, typeid, prefix, uuid, description string
}

// readSpecCases reads the suite's YAML: a list of maps of double-quoted strings, the only
// YAML these files use. Anything else fails the test, so no case is skipped unseen.
func readSpecCases(t testing.TB, path string) []specCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []specCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasPrefix(line, "- ") {
			cases = append(cases, specCase{})
			line = "  " + line[2:]
		}
		key, val, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok || !strings.HasPrefix(line, "  ") || len(cases) == 0 {
			t.Fatalf("%s:%d: not a list of maps: %q", path, n, line)
		}
		if strings.HasPrefix(val, `"`) {
			if val, err = strconv.Unquote(val); err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
		}
		c := &cases[len(cases)-1]
		switch key {
		case "name":
			c.name = val
		case "typeid":
			c.typeid = val
		case "prefix":
			c.prefix = val
		case "uuid":
			c.uuid = val
		case "description":
			c.description = val
		default:
			t.Fatalf("%s:%d: unknown key %q", path, n, key)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// typeidCodec returns the codec of TypeIDs with prefix p ("" for none).
func typeidCodec(t testing.TB, p string) idkit.Codec {
	t.Helper()
	spec := "typeid"
	if p != "" {
		spec += ":prefix=" + p
	}
	c, err := idkit.NewCodec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTypeIDSpecValid: every valid case decodes to its prefix and UUID, through the scheme
// of its prefix, and the UUID encodes to the same text; the scheme and the uuidv7 scheme with
// that prefix make the same text for UUIDv7s.
func TestTypeIDSpecValid(t *testing.T) {
	cases := readSpecCases(t, "testdata/typeid/valid.yml")
	if len(cases) != 9 {
		t.Fatalf("%d valid cases, want the suite's 9", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			codec := typeidCodec(t, c.prefix)
			id, err := codec.Parse(c.typeid)
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.typeid, err)
			}
			if got := id.String(); got != c.uuid {
				t.Errorf("Parse(%q) = %s, want %s", c.typeid, got, c.uuid)
			}
			u, err := idkit.Parse(c.uuid)
			if err != nil {
				t.Fatal(err)
			}
			if text, err := idkit.FormatID(codec, u); err != nil || text != c.typeid {
				t.Errorf("FormatID(%s) = %q, %v; want %q", c.uuid, text, err, c.typeid)
			}
			if uuid.UUID(u.Bytes16()).Version() == 7 && c.prefix != "" {
				v7, err := idkit.NewCodec("uuidv7:prefix=" + c.prefix)
				if err != nil {
					t.Fatal(err)
				}
				text, err := idkit.FormatID(v7, u)
				back, err2 := v7.Parse(c.typeid)
				if err != nil || err2 != nil || text != c.typeid || back != u {
					t.Errorf("uuidv7:prefix=%s: %q, %v; Parse: %s, %v", c.prefix, text, err, back, err2)
				}
			}
			// Another prefix is another scheme.
			other := typeidCodec(t, "other")
			if c.prefix == "other" {
				other = typeidCodec(t, "")
			}
			if _, err := other.Parse(c.typeid); !errors.Is(err, idkit.ErrScheme) {
				t.Errorf("Parse(%q) by another prefix's scheme: %v, want ErrScheme", c.typeid, err)
			}
		})
	}
}

// TestTypeIDSpecInvalid: every invalid case is refused, by the scheme without a prefix and by
// the one whose prefix the text would have, with ErrSyntax and a message quoting the text.
func TestTypeIDSpecInvalid(t *testing.T) {
	cases := readSpecCases(t, "testdata/typeid/invalid.yml")
	if len(cases) != 21 {
		t.Fatalf("%d invalid cases, want the suite's 21", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			codecs := []idkit.Codec{typeidCodec(t, ""), typeidCodec(t, "prefix")}
			for _, codec := range codecs {
				id, err := codec.Parse(c.typeid)
				if err == nil {
					t.Fatalf("Parse(%q) = %s; want an error (%s)", c.typeid, id, c.description)
				}
				if !errors.Is(err, idkit.ErrSyntax) {
					t.Errorf("Parse(%q) = %v; want ErrSyntax (%s)", c.typeid, err, c.description)
				}
			}
		})
	}
}

// TestTypeIDMessages: errors say what is wrong.
func TestTypeIDMessages(t *testing.T) {
	user := typeidCodec(t, "user")
	for text, want := range map[string]string{
		"order_01h455vb4pex5vsknk084sn02q": `has prefix "order"; want "user"`,
		"01h455vb4pex5vsknk084sn02q":       `has no prefix; want "user_…"`,
		"user_01h455vb4pex5vsknk084sn02":   "suffix of 25 characters",
		"user_01H455vb4pex5vsknk084sn02q":  "is upper case",
		"user_01h455vb4pex5vsknk084sn0uq":  "'u', is not in the TypeID alphabet",
		"user_81h455vb4pex5vsknk084sn02q":  "holds 128 bits, so it starts with 0-7",
		"User_01h455vb4pex5vsknk084sn02q":  "is upper case (prefixes are lower case)",
		"user_0000000000001":               "holds a 64-bit ID; this scheme's IDs have 128 bits",
		"_01h455vb4pex5vsknk084sn02q":      "starts with '_'",
	} {
		_, err := user.Parse(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want a message with %q", text, err, want)
		}
	}
	snow, err := idkit.NewCodec("snowflake:prefix=ord")
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		"ord_g000000000000":              "holds 64 bits, so it starts with 0-f",
		"ord_01h455vb4pex5vsknk084sn02q": "holds a 128-bit ID; this scheme's IDs have 64 bits",
		"ord_8000000000000":              "has bits set above the 63 bits",
	} {
		_, err := snow.Parse(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("snowflake:prefix=ord: Parse(%q) = %v; want a message with %q", text, err, want)
		}
	}
}
