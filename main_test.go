package idkit_test

import (
	"testing"

	"github.com/idkit/idkit/dbbench/pgtest"
)

// TestMain shares one private PostgreSQL cluster between the tests that need one (pgtest).
func TestMain(m *testing.M) { pgtest.Main(m) }
