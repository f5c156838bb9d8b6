package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/idkit/idkit"
)

// testMaskKey is the uuidv47 PostgreSQL extension's test key; the tests set it as
// IDKIT_TEST_MASK_KEY.
const testMaskKey = "0011223344556677:8899aabbccddeeff"

// The public forms of the fixed IDs under testMaskKey: twitterID masked by the twitter layout,
// and RFC 9562's UUIDv7 example as its UUIDv47 facade (the reference implementation's).
const (
	twitterMasked = "4370245332182174944"
	uuidv7Facade  = "f17f62b4-77d6-4cc3-98c4-dc0c0c07398f"
)

// TestInspectPublicGolden: inspect of TypeIDs, of stored IDs shown in their public form, and of
// masked IDs beside their stored ones.
func TestInspectPublicGolden(t *testing.T) {
	t.Setenv("IDKIT_TEST_MASK_KEY", testMaskKey)
	const mask = "mask=env:IDKIT_TEST_MASK_KEY"
	tests := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"typeid", "", []string{"inspect", "--scheme", "typeid", "user_01h455vb4pex5vsknk084sn02q", "01h455vb4pex5vsknk084sn02q", "pre_fix_00000000000000000000000000", "01890a5d-ac96-774b-bcce-b302099a8057"}},
		{"typeid_json", "", []string{"inspect", "--scheme", "typeid:prefix=user", "--json", "user_01h455vb4pex5vsknk084sn02q", "01890a5d-ac96-774b-bcce-b302099a8057"}},
		{"typeid_stored", "", []string{"inspect", "--scheme", "typeid:prefix=user", "--stored", "01890a5d-ac96-774b-bcce-b302099a8057", "user_01h455vb4pex5vsknk084sn02q"}},
		{"typeid_bad", "", []string{"inspect", "--scheme", "uuidv7:prefix=user", "order_01h455vb4pex5vsknk084sn02q", "user_01H455vb4pex5vsknk084sn02q", "user_0110c8531d0952d8d73e1194e9", "user_01h455vb4pex5vsknk084sn02q"}},
		{"prefix_snowflake", "", []string{"inspect", "--scheme", "snowflake:prefix=ord", "ord_1asd13xh1f800", twitterID}},
		{"prefix_any", "", []string{"inspect", "ord_1asd13xh1f800", "tw_1asd13xh1f800", twitterID, "ord_01h455vb4pex5vsknk084sn02q"}},
		{"masked", "", []string{"inspect", "--scheme", "snowflake:" + mask, twitterMasked}},
		{"masked_stored", "", []string{"inspect", "--scheme", "snowflake:" + mask, "--stored", twitterID}},
		{"masked_json", "", []string{"inspect", "--scheme", "snowflake:layout=twitter,prefix=tw," + mask, "--json", "tw_3s9htz6f0e370"}},
		{"masked_uuidv7", "", []string{"inspect", "--scheme", "uuidv7:" + mask, uuidv7Facade, uuidv7ID}},
		{"bounds_typeid", "", []string{"inspect", "--scheme", "typeid:prefix=user", "--from", "2026-01-01", "--to", "2026-01-02"}},
		{"bounds_masked", "", []string{"inspect", "--scheme", "snowflake:prefix=ord," + mask, "--json", "--at", "2026-01-01"}},
		{"masked_typeid", "", []string{"inspect", "--scheme", "typeid:prefix=user," + mask, "user_7hfxhb8xyp9k1shh6w1g60eecf", uuidv7ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := idbench(t, tt.stdin, tt.args...)
			golden(t, "inspect/"+tt.name+".golden", transcript(tt.stdin, tt.args, r))
		})
	}
}

// TestGenPublic: gen prints the public text; inspect --stored of the stored IDs behind it gives
// the same text back, and a mask leaves the stored IDs in order but not the text.
func TestGenPublic(t *testing.T) {
	t.Setenv("IDKIT_TEST_MASK_KEY", testMaskKey)
	for _, c := range []struct {
		spec string
		re   string
	}{
		{"typeid:prefix=user", `^user_[0-7][0-9a-hjkmnp-tv-z]{25}$`},
		{"typeid", `^[0-7][0-9a-hjkmnp-tv-z]{25}$`},
		{"snowflake:mask=env:IDKIT_TEST_MASK_KEY", `^[0-9]{1,19}$`},
		{"snowflake:layout=discord,prefix=ord,mask=env:IDKIT_TEST_MASK_KEY", `^ord_[0-9a-f][0-9a-hjkmnp-tv-z]{12}$`},
		{"uuidv7:mask=env:IDKIT_TEST_MASK_KEY", `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`},
	} {
		r := idbench(t, "", "gen", "--scheme", c.spec, "-n", "2000")
		if r.err != nil {
			t.Fatalf("%s: %v", c.spec, r.err)
		}
		s, err := idkit.NewCodec(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(c.re)
		var prev idkit.ID
		var prevText string
		textOrdered := 0
		lines := strings.Fields(r.stdout)
		if len(lines) != 2000 {
			t.Fatalf("%s: %d lines", c.spec, len(lines))
		}
		for i, text := range lines {
			if !re.MatchString(text) {
				t.Fatalf("%s: line %d, %q, does not match %s", c.spec, i+1, text, c.re)
			}
			id, err := s.Parse(text)
			if err != nil {
				t.Fatalf("%s: line %d: %v", c.spec, i+1, err)
			}
			if i > 0 && idkit.Compare(prev, id) >= 0 {
				t.Fatalf("%s: line %d: stored %s does not follow %s", c.spec, i+1, id, prev)
			}
			if i > 0 && len(prevText) == len(text) && prevText < text {
				textOrdered++
			}
			prev, prevText = id, text
		}
		masked := strings.Contains(c.spec, "mask=")
		if masked && textOrdered > 1200 || !masked && textOrdered != 1999 {
			t.Errorf("%s: %d of 1999 lines sort after the one before", c.spec, textOrdered)
		}
	}
	r := idbench(t, "", "gen", "--scheme", "snowflake:mask=env:IDKIT_TEST_UNSET_KEY")
	if r.code != 2 || !strings.Contains(r.stderr, "IDKIT_TEST_UNSET_KEY is not set") {
		t.Errorf("gen with an unset key: exit %d, %q", r.code, r.stderr)
	}
}
