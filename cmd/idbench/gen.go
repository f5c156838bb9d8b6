package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/idkit/idkit"
)

const genHelp = `Usage: idbench gen [--scheme SPEC] [-n N]

Prints N new IDs of one scheme, one per line, in the scheme's public text: the text an API
shows. Without prefix= or mask= it is the canonical text: decimal for 64-bit IDs, 26
characters of Crockford base32 for ULIDs, 8-4-4-4-12 hex for UUIDs. With prefix=NAME (and for
the typeid scheme) it is a TypeID, NAME_ and the ID in 26 (128-bit) or 13 (64-bit) lower-case
base32 characters; with mask=KEYREF the time, node and counts are hidden under the key (the
database would store the plain IDs, which "idbench inspect --stored" reads). IDs are
streamed as they are made, so N can be large; schemes that reserve IDs in batches
(snowflake) use their batch method.

Flags:
  --scheme SPEC   the scheme, as idkit.New reads it (default "snowflake", the Twitter layout
                  with node 0): snowflake, ulid, uuidv7, uuidv4, sonyflake, typeid, with
                  settings after a colon, e.g. "snowflake:layout=discord,worker=3,process=1";
                  every scheme takes prefix=NAME and mask=env:VAR or mask=file:PATH (a file
                  or variable holding the key k0:k1, two groups of 16 hex digits)
  -n N            how many IDs (default 10; 0 prints nothing)

Examples:
  idbench gen
  idbench gen --scheme ulid -n 5
  idbench gen --scheme "snowflake:layout=discord,worker=3,process=1" -n 1000000 > ids.txt
  idbench gen --scheme typeid:prefix=user -n 3
  ID_KEY=$(cat key.txt) idbench gen --scheme "snowflake:mask=env:ID_KEY" -n 3
  idbench gen --scheme sonyflake:machine=7 -n 3 | idbench inspect --scheme sonyflake
`

// genChunk is how many IDs gen reserves at a time from a Batcher, and how often it checks
// for cancellation.
const genChunk = 4096

// runGen is "idbench gen".
func runGen(ctx context.Context, _ io.Reader, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("gen")
	spec := fs.String("scheme", "snowflake", "")
	n := fs.Int64("n", 10, "")
	pos, err := parseFlags(fs, "gen", genHelp, stdout, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("gen", "gen: unexpected argument %q (gen takes only flags)", pos[0])
	}
	if *n < 0 {
		return usagef("gen", "gen: -n %d: want a count of 0 or more", *n)
	}
	s, err := newScheme(ctx, "gen", *spec)
	if err != nil {
		return err
	}
	defer closeScheme(s, "gen", stderr)
	w := bufio.NewWriterSize(stdout, 64<<10)
	if err := genIDs(ctx, w, s, *n); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("gen: writing: %w", err)
	}
	return nil
}

// genIDs writes n IDs of s to w, one per line, in their public text (idkit.AppendID). Every
// generator wait honours ctx (through idkit.NextBatchContext), so a signal ends even a wait for
// a tick of a minute at once.
func genIDs(ctx context.Context, w *bufio.Writer, s idkit.Scheme, n int64) error {
	var line []byte
	batch := make([]idkit.ID, min(n, genChunk))
	for done := int64(0); done < n; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("gen: stopped after %d IDs: %w", done, err)
		}
		k := min(n-done, genChunk)
		if err := idkit.NextBatchContext(ctx, s, batch[:k]); err != nil {
			return fmt.Errorf("gen: %s: after %d IDs: %w", s.Name(), done, err)
		}
		for _, id := range batch[:k] {
			var err error
			if line, err = idkit.AppendID(s, line[:0], id); err != nil {
				return fmt.Errorf("gen: %s: showing %s: %w", s.Name(), id, err)
			}
			line = append(line, '\n')
			if _, err := w.Write(line); err != nil {
				return fmt.Errorf("gen: writing: %w", err)
			}
		}
		done += k
	}
	return nil
}

// newScheme starts the scheme spec describes for subcommand cmd; a bad spec is a usage error.
func newScheme(ctx context.Context, cmd, spec string) (idkit.Scheme, error) {
	s, err := idkit.NewContext(ctx, spec)
	if errors.Is(err, idkit.ErrSpec) {
		return nil, &usageError{cmd: cmd, err: fmt.Errorf("%s: --scheme: %w", cmd, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: --scheme: %w", cmd, err)
	}
	return s, nil
}

// closeScheme releases what s holds, such as a node lease. A failure to release does not undo
// the output already written, so it is a warning on stderr rather than an error.
func closeScheme(s idkit.Scheme, cmd string, stderr io.Writer) {
	if c, ok := s.(io.Closer); ok {
		if err := c.Close(); err != nil {
			fmt.Fprintf(stderr, "idbench: %s: releasing %s: %v\n", cmd, s.Name(), err)
		}
	}
}
