package dbbench

import (
	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/innodb"
	"github.com/idkit/idkit/dbbench/pg"
	"github.com/idkit/idkit/dbbench/pglocal"
)

// target is where a run goes, worked out once from Config.DB when the configuration is
// validated (Config.withDefaults): the engine, its parsed connection settings, and Config.DB
// as it may be shown. Connection strings are parsed and redacted here and nowhere deeper.
type target struct {
	// engine is EnginePGLocal, EngineSQLite, EnginePGEnv, EngineMariaDBLocal or EngineMySQL.
	engine string
	// auto is set when Config.DB was empty and engine was picked by what is installed.
	auto bool
	// pg is the parsed connection string of EnginePGEnv (empty: the libpq variables), parsed
	// by its engine package, as mysql is the parsed URL of EngineMySQL: package dbbench
	// imports no database driver.
	pg    pg.Target
	mysql innodb.Target
	// shown is Config.DB with its password hidden.
	shown string
}

// resolveTarget parses db (Config.DB) into a target. Errors name the bad part and never
// contain a password.
func resolveTarget(db string) (target, error) {
	t := target{engine: db, shown: engine.RedactURL(db)}
	switch db {
	case EngineAuto:
		t.auto, t.engine = true, EngineSQLite
		if _, err := pglocal.FindBinDir(); err == nil {
			t.engine = EnginePGLocal
		}
		return t, nil
	case EngineAllLocal:
		return t, errAllLocal
	case EnginePGEnv:
		db = ""
	}
	if e, ok := engineByName(db); ok && e.byName {
		return t, nil
	}
	if innodb.IsURL(db) {
		c, err := innodb.ParseURL(db)
		if err != nil {
			return t, err
		}
		t.engine, t.mysql = EngineMySQL, innodb.Target{Config: c}
		return t, nil
	}
	p, err := pg.ParseTarget(db)
	if err != nil {
		return t, err
	}
	t.engine, t.pg = EnginePGEnv, p
	return t, nil
}

// isInnoDB reports whether cfg.DB names a MariaDB/MySQL engine.
func isInnoDB(db string) bool { return db == EngineMariaDBLocal || innodb.IsURL(db) }
