// Command idbench generates, inspects and benchmarks the ID schemes of idkit.
//
//	idbench                         run the whole comparison and write a report
//	idbench gen --scheme ulid -n 5  print five new IDs
//	idbench inspect ID...           take IDs apart: time, node, sequence
//	idbench layouts                 the 64-bit layout presets and their limits
//	idbench speed                   generation cost per scheme, beside the wrapped libraries
//	idbench db                      B-tree cost per scheme: PostgreSQL, InnoDB, SQLite
//	idbench scale                   how that cost grows with the fleet and the table
//	idbench dist                    a MODEL of each scheme on a range-partitioned cluster
//	idbench plan                    design a layout for a load
//	idbench nodes --store URL       the node slots of a lease store and who holds them
//	idbench load --spawn            requests/s and latency of the idkitd ID service
//
// Every subcommand takes --help. Errors go to stderr; the exit status is 1 for a failed run
// and 2 for a bad command line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/idkit/idkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	os.Exit(report(os.Stderr, err))
}

// report prints err for a user and returns the exit status for it: 0 for nil, 2 for a usage
// error, 1 for anything else.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "idbench: interrupted")
		return 1
	}
	fmt.Fprintf(stderr, "idbench: %s\n", idkit.Redact(err.Error()))
	var ue *usageError
	if errors.As(err, &ue) {
		if ue.cmd != "" {
			fmt.Fprintf(stderr, "Run 'idbench %s --help' for usage.\n", ue.cmd)
		} else {
			fmt.Fprintln(stderr, "Run 'idbench --help' for usage.")
		}
		return 2
	}
	return 1
}

// usageError is an error in the command line rather than in the work it asks for; main exits
// with status 2 for it.
type usageError struct {
	cmd string // the subcommand whose --help explains the mistake, "" for the top level
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usageError for subcommand cmd.
func usagef(cmd, format string, a ...any) error {
	return &usageError{cmd: cmd, err: fmt.Errorf(format, a...)}
}

// command is one subcommand of idbench.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error
}

// commands lists the subcommands in the order --help shows them.
func commands() []command {
	return []command{
		{"gen", "print new IDs of a scheme, one per line", runGen},
		{"inspect", "take IDs apart: time, node, sequence, version, layout fields", runInspect},
		{"layouts", "list the 64-bit layout presets: bits, unit, epoch, capacity, run-out date", runLayouts},
		{"speed", "measure generation cost per scheme beside the wrapped libraries", runSpeed},
		{"db", "measure the database B-tree cost of each scheme", withoutStdin(runDB)},
		{"scale", "measure how B-tree cost grows with the fleet (--nodes) and the table (--sizes)", withoutStdin(runScale)},
		{"dist", "MODEL a range-partitioned cluster (CockroachDB, Spanner, TiDB, YugabyteDB) per scheme", withoutStdin(runDist)},
		{"plan", "design a layout for a load: IDs/s per node, nodes, years, bit limits", runPlan},
		{"nodes", "list the node slots of a lease store (etcd, PostgreSQL) and who holds them", withoutStdin(runNodes)},
		{"load", "drive an idkitd ID service (or one started in process) and report req/s and latency", withoutStdin(runLoad)},
		{"help", "show help for idbench or one of its subcommands", runHelp},
	}
}

// withoutStdin adapts a subcommand that does not read standard input.
func withoutStdin(f func(ctx context.Context, stdout, stderr io.Writer, args []string) error) func(context.Context, io.Reader, io.Writer, io.Writer, []string) error {
	return func(ctx context.Context, _ io.Reader, stdout, stderr io.Writer, args []string) error {
		return f(ctx, stdout, stderr, args)
	}
}

// run is idbench with its arguments (without the program name). Standard input is read only by
// inspect, when it is given no IDs.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return runWithStdin(ctx, os.Stdin, stdout, stderr, args)
}

// runWithStdin is run with an explicit standard input, for tests.
func runWithStdin(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 || (strings.HasPrefix(args[0], "-") && !isHelpFlag(args[0])) {
		err := runAll(ctx, stdout, stderr, args)
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if isHelpFlag(args[0]) {
		return writeTopHelp(stdout)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, stdin, stdout, stderr, args[1:])
			if errors.Is(err, flag.ErrHelp) {
				return nil // a subcommand that printed its help on request
			}
			return err
		}
	}
	return usagef("", "unknown subcommand %q (known: %s)", args[0], strings.Join(commandNames(), ", "))
}

func isHelpFlag(s string) bool {
	return s == "-h" || s == "--help" || s == "-help"
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// writeTopHelp lists the subcommands.
func writeTopHelp(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`idbench measures and explains the ID schemes of idkit.

Usage:
  idbench [--out DIR] [--benchtime D]   run the whole comparison and write a report
  idbench <command> [flags] [args]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-8s  %s\n", c.name, c.summary)
	}
	b.WriteString(`
Run 'idbench <command> --help' for a command's flags and examples.
Errors go to stderr; the exit status is 1 for a failed run, 2 for a bad command line.
`)
	_, err := io.WriteString(w, b.String())
	return err
}

const helpHelp = `Usage: idbench help [command]

Shows the help of idbench, or of one command (the same as 'idbench <command> --help').

Examples:
  idbench help
  idbench help inspect
`

// runHelp is "idbench help [command]".
func runHelp(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	switch {
	case len(args) == 0:
		return writeTopHelp(stdout)
	case len(args) > 1:
		return usagef("help", "help takes at most one command, got %d arguments", len(args))
	case isHelpFlag(args[0]):
		_, err := io.WriteString(stdout, helpHelp)
		return err
	case args[0] == "help":
		_, err := io.WriteString(stdout, helpHelp)
		return err
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, stdin, stdout, stderr, []string{"--help"})
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	return usagef("help", "unknown command %q (known: %s)", args[0], strings.Join(commandNames(), ", "))
}

// newFlagSet returns a flag set that reports errors instead of printing or exiting; the caller
// prints help itself.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses fs from args, accepting flags anywhere among the positional arguments
// (as in "inspect 123 --json"); "--" ends the flags. It returns the positional arguments.
// On -h or --help it writes help to stdout and returns flag.ErrHelp; other errors are usage
// errors of cmd.
func parseFlags(fs *flag.FlagSet, cmd, help string, stdout io.Writer, args []string) ([]string, error) {
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			if _, werr := io.WriteString(stdout, help); werr != nil {
				return nil, fmt.Errorf("%s: writing help: %w", cmd, werr)
			}
			return nil, flag.ErrHelp
		}
		if err != nil {
			return nil, usagef(cmd, "%s: %w", cmd, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
