package main

import (
	"context"
	"errors"
	"io"
)

// The db and nodes subcommands are written elsewhere (db.go, nodes.go); until they land these
// stubs keep the command building. Delete each one when its file arrives.

func runNodes(context.Context, io.Writer, io.Writer, []string) error {
	return errors.New("nodes: not available yet")
}
