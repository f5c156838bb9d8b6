package pg

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/idkit/idkit/dbbench/engine"
)

// Target is an existing PostgreSQL server idbench runs on: its parsed connection settings,
// and the string itself, for the command that reopens a kept schema.
type Target struct {
	Config *pgx.ConnConfig
	DSN    string
}

// ParseTarget parses a pgx connection string (URL or key/value form; empty: the libpq
// environment variables). Its error names the bad part and never shows a password.
func ParseTarget(dsn string) (Target, error) {
	c, err := pgx.ParseConfig(dsn)
	if err != nil {
		return Target{}, fmt.Errorf("dbbench: bad PostgreSQL connection string: %s", engine.OneLine(err.Error()))
	}
	return Target{Config: c, DSN: dsn}, nil
}
