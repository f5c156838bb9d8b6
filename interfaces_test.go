package idkit_test

import (
	"database/sql"
	"encoding/gob"

	"github.com/idkit/idkit"
)

// The compile-time checks of the interfaces whose packages the root does not import: a program
// that only makes IDs does not link encoding/gob and database/sql (TestLightRoot), and ID and
// NullID still implement them.
var (
	_ sql.Scanner    = (*idkit.ID)(nil)
	_ sql.Scanner    = (*idkit.NullID)(nil)
	_ gob.GobEncoder = idkit.ID{}
	_ gob.GobDecoder = (*idkit.ID)(nil)
)
