package dbbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrNotReport is returned (wrapped) by ReadReport for a file that is not a report of idbench
// db: not JSON, or JSON without the fields every report has.
var ErrNotReport = errors.New("dbbench: not an idbench db report")

// ReadReport reads a report written by WriteJSON (report.json of WriteReport). Errors name
// the file and, for bad JSON, the byte offset where it goes wrong.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dbbench: read report: %w", err)
	}
	rep := new(Report)
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(rep); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%w: %s: JSON ends early (%d bytes)", ErrNotReport, path, len(b))
		case errors.As(err, &se):
			return nil, fmt.Errorf("%w: %s: invalid JSON at byte %d: %v", ErrNotReport, path, se.Offset, err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%w: %s: field %q at byte %d holds a JSON %s", ErrNotReport, path, te.Field, te.Offset, te.Value)
		default:
			return nil, fmt.Errorf("%w: %s: %v", ErrNotReport, path, err)
		}
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: more than one JSON value", ErrNotReport, path)
	}
	if len(rep.Results) == 0 && len(rep.App) == 0 {
		return nil, fmt.Errorf("%w: %s: no results", ErrNotReport, path)
	}
	return rep, nil
}

// RenderReport writes report.md, benchstat.txt and the charts of dir again from the
// report.json in it, as the running idbench renders them, without measuring anything: the
// way to bring a committed report up to date with a change of its text or charts. It leaves
// report.json as it is.
func RenderReport(dir string) error {
	rep, err := ReadReport(filepath.Join(dir, ReportJSON))
	if err != nil {
		return err
	}
	return writeReport(dir, rep, false)
}
