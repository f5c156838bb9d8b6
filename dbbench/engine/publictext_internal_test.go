package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/idkit/idkit"
)

// TestResolvePublicText: the -text suffix on a spec whose public text is a TypeID stores that
// text (ColPublicText), at its width; RowTypeIDText is typeid:prefix=user; the other text
// suffixes, which would store another text than the public one, are refused.
func TestResolvePublicText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		label, spec string
		col         Column
		textLen     int
	}{
		{RowTypeIDText, typeIDTextSpec, ColPublicText, len("user_") + 26},
		{"TypeID-Text", typeIDTextSpec, ColPublicText, len("user_") + 26},
		{"typeid", "typeid", ColUUID, 0},
		{"typeid:prefix=user", "typeid:prefix=user", ColUUID, 0},
		{"typeid:prefix=order_line-text", "typeid:prefix=order_line", ColPublicText, len("order_line_") + 26},
		{"uuidv7:prefix=user-text", "uuidv7:prefix=user", ColPublicText, len("user_") + 26},
		{"snowflake:prefix=user-text", "snowflake:prefix=user", ColPublicText, len("user_") + 13},
		{"ulid-text", "ulid", ColText, 26},
		{"uuidv7-text", "uuidv7", ColText, 36},
	} {
		r, err := ResolveRow(context.Background(), tt.label)
		if err != nil {
			t.Errorf("%s: %v", tt.label, err)
			continue
		}
		if r.Spec != tt.spec || r.Col != tt.col || r.TextLen != tt.textLen {
			t.Errorf("%s: spec %q, column %d, text length %d; want %q, %d, %d", tt.label, r.Spec, r.Col, r.TextLen, tt.spec, tt.col, tt.textLen)
		}
	}
	for _, label := range []string{"typeid-text-icu", "typeid:prefix=user-text-default", "typeid-native"} {
		_, err := ResolveRow(context.Background(), label)
		if err == nil || !strings.Contains(err.Error(), `"-text"`) {
			t.Errorf("%s: error %v, want one naming the -text suffix", label, err)
		}
	}
}

// TestPublicTextKeys: the keys of RowTypeIDText are the prefixed TypeID text of the scheme's
// IDs, of the width the column was made for, and sort as bytes as their IDs do: in the order
// one generator made them, and as the IDs of a simulated fleet compare.
func TestPublicTextKeys(t *testing.T) {
	t.Parallel()
	codec, err := idkit.NewCodec(typeIDTextSpec)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ResolveRow(context.Background(), RowTypeIDText)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(r, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	one := make([]Value, 5000)
	for i := range one {
		if err := src.Next(&one[i]); err != nil {
			t.Fatal(err)
		}
	}
	fleet := fleetKeys(t, RowTypeIDText, 4, 5000, FleetSettings{Rate: 1000, Skew: 0, Seed: 1})
	for name, vs := range map[string][]Value{"one generator": one, "fleet of 4": fleet} {
		var prev idkit.ID
		for i, v := range vs {
			if !strings.HasPrefix(v.Str, "user_") || len(v.Str) != r.TextLen {
				t.Fatalf("%s: key %d is %q, want user_ and 26 characters", name, i, v.Str)
			}
			id, err := codec.Parse(v.Str)
			if err != nil {
				t.Fatalf("%s: key %d, %q: %v", name, i, v.Str, err)
			}
			if back, err := idkit.FormatID(codec, id); err != nil || back != v.Str {
				t.Fatalf("%s: key %q parses to %s, which formats as %q (%v)", name, v.Str, id, back, err)
			}
			if i > 0 && strings.Compare(v.Str, vs[i-1].Str) != idkit.Compare(id, prev) {
				t.Fatalf("%s: keys %q and %q sort as bytes otherwise than their IDs %s and %s", name, vs[i-1].Str, v.Str, prev, id)
			}
			if name == "one generator" && i > 0 && v.Str <= vs[i-1].Str {
				t.Fatalf("%s: key %d, %q, does not sort after %q", name, i, v.Str, vs[i-1].Str)
			}
			prev = id
		}
	}
}
