package redact_test

import (
	"errors"
	"fmt"
	"io"
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
