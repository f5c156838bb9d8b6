package idkit

import (
	"bytes"
	"database/sql/driver"
	"encoding"
	"encoding/json"
	"fmt"
	"strconv"
)

var (
	_ fmt.Stringer             = Public[CodecOf]{}
	_ encoding.TextMarshaler   = Public[CodecOf]{}
	_ encoding.TextAppender    = Public[CodecOf]{}
	_ encoding.TextUnmarshaler = (*Public[CodecOf])(nil)
	_ json.Marshaler           = Public[CodecOf]{}
	_ json.Unmarshaler         = (*Public[CodecOf])(nil)
	_ driver.Valuer            = Public[CodecOf]{}
)

// CodecOf names the codec of a Public value's IDs. Implement it on an empty struct type, one
// per kind of ID, whose Codec method returns a codec the program made once (a package
// variable set from NewCodec or New):
//
//	var users, _ = idkit.NewCodec("typeid:prefix=user")
//
//	type userIDs struct{}
//
//	func (userIDs) Codec() idkit.Codec { return users }
//
// Public calls Codec on the zero value of the type, so it must not be a pointer type.
type CodecOf interface {
	Codec() Codec
}

// Public is an ID of the scheme C names that shows itself in the scheme's public text: with a
// prefix, masked (see New's prefix and mask settings). It is a struct field's type where an API
// shows IDs:
//
//	type User struct {
//		ID   idkit.Public[userIDs] `json:"id"` // "user_01h455vb4pex5vsknk084sn02q"
//		Name string                `json:"name"`
//	}
//
// Text and JSON are the public form: String, MarshalText, AppendText and MarshalJSON write
// it, UnmarshalText and UnmarshalJSON read it back with the codec's Parse, which takes only
// the scheme's own public text (a stored ID or another prefix is an error). The database form
// is the stored one: Value and Scan are ID's, so a row holds the plain 8 or 16 bytes, and the
// ID inside is what the scheme issued and orders by.
//
// Like ID it is a small comparable value with no pointers; C only names the codec. The zero
// Public is "no ID": it marshals as null (JSON) and empty text.
type Public[C CodecOf] struct {
	ID ID
}

func (p Public[C]) codec() Codec {
	var c C
	return c.Codec()
}

// String returns the public text, or for an ID its scheme cannot show (one of another scheme)
// "%!(idkit: …)" with the reason.
func (p Public[C]) String() string {
	s, err := FormatID(p.codec(), p.ID)
	if err != nil {
		return "%!(" + err.Error() + ")"
	}
	return s
}

// AppendText appends the public text to b (encoding.TextAppender). Errors wrap ErrScheme.
func (p Public[C]) AppendText(b []byte) ([]byte, error) { return AppendID(p.codec(), b, p.ID) }

// MarshalText returns the public text; the zero ID gives empty text. Errors wrap ErrScheme.
func (p Public[C]) MarshalText() ([]byte, error) { return p.AppendText(nil) }

// UnmarshalText reads public text with the codec's Parse; empty text gives the zero ID. Errors
// wrap ErrSyntax or ErrScheme.
func (p *Public[C]) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		p.ID = ID{}
		return nil
	}
	id, err := p.codec().Parse(string(b))
	if err != nil {
		return err
	}
	p.ID = id
	return nil
}

// MarshalJSON returns the public text as a JSON string, or null for the zero ID. Errors wrap
// ErrScheme.
func (p Public[C]) MarshalJSON() ([]byte, error) {
	if p.ID.IsZero() {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 48)
	b = append(b, '"')
	b, err := AppendID(p.codec(), b, p.ID)
	if err != nil {
		return nil, err
	}
	// Public text is ASCII without quotes or backslashes (decimal, base32, hex, a-z and '_').
	return append(b, '"'), nil
}

// UnmarshalJSON reads a JSON string of public text, or null (the zero ID). Errors wrap
// ErrSyntax or ErrScheme; a number is refused, since a public ID is always a string.
func (p *Public[C]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		p.ID = ID{}
		return nil
	case len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"':
		s, err := strconv.Unquote(string(b))
		if err != nil {
			return fmt.Errorf("%w: JSON string %s: %w", ErrSyntax, quote(string(b)), err)
		}
		if s == "" {
			return fmt.Errorf("%w: empty JSON string; want an ID's public text or null", ErrSyntax)
		}
		return p.UnmarshalText([]byte(s))
	}
	return fmt.Errorf("%w: JSON %s is not a string; a public ID is its text, or null", ErrSyntax, quote(string(b)))
}

// Value implements driver.Valuer with the stored ID (see ID.Value): the database never sees the
// public form.
func (p Public[C]) Value() (driver.Value, error) { return p.ID.Value() }

// Scan implements sql.Scanner with the stored ID (see ID.Scan).
func (p *Public[C]) Scan(src any) error { return p.ID.Scan(src) }
