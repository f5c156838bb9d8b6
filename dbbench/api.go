package dbbench

import (
	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/innodb"
	"github.com/idkit/idkit/dbbench/pg"
	"github.com/idkit/idkit/dbbench/sqlite"
)

// The report and its parts are package engine's types, which every engine fills; dbbench
// names them for its users, who need no other import.
type (
	// Report is engine.Report.
	Report = engine.Report
	// Settings is engine.Settings.
	Settings = engine.Settings
	// Result is engine.Result.
	Result = engine.Result
	// Duration is engine.Duration.
	Duration = engine.Duration
	// Chunk is engine.Chunk.
	Chunk = engine.Chunk
	// Latency is engine.Latency.
	Latency = engine.Latency
	// Sample is engine.Sample.
	Sample = engine.Sample
	// Baseline is engine.Baseline.
	Baseline = engine.Baseline
	// AppResult is engine.AppResult.
	AppResult = engine.AppResult
	// Structure is engine.Structure.
	Structure = engine.Structure
	// TimeQuery is engine.TimeQuery.
	TimeQuery = engine.TimeQuery
	// TimeCheck is engine.TimeCheck.
	TimeCheck = engine.TimeCheck
	// AppBaseline is engine.AppBaseline.
	AppBaseline = engine.AppBaseline
)

// Names Config and the report use, defined beside the engines that read them (package
// engine); see there for each one's meaning.
const (
	CreatedAtAll          = engine.CreatedAtAll
	CreatedAtNeeded       = engine.CreatedAtNeeded
	DefaultClockSkew      = engine.DefaultClockSkew
	DefaultFleetRate      = engine.DefaultFleetRate
	DefaultInstagramShard = engine.DefaultInstagramShard
	ModeBatch             = engine.ModeBatch
	ModeCopy              = engine.ModeCopy
	ModeSingle            = engine.ModeSingle
	ModeTx                = engine.ModeTx
	ProfileCheckpoints    = engine.ProfileCheckpoints
	ProfileSteady         = engine.ProfileSteady
	RowAutoIncrement      = engine.RowAutoIncrement
	RowBigserial          = engine.RowBigserial
	RowInstagramPLpgSQL   = engine.RowInstagramPLpgSQL
	RowSegment            = engine.RowSegment
	RowTypeIDText         = engine.RowTypeIDText
	RowULIDText           = engine.RowULIDText
	RowULIDTextICU        = engine.RowULIDTextICU
	RowUUIDv7PLpgSQL      = engine.RowUUIDv7PLpgSQL
	WorkloadApp           = engine.WorkloadApp
	WorkloadTable         = engine.WorkloadTable
)

// Engine names accepted in Config.DB besides connection strings; each engine's package
// defines its own.
const (
	// EngineAuto picks EnginePGLocal when PostgreSQL server binaries are
	// installed, else EngineSQLite.
	EngineAuto = ""
	// EnginePGLocal starts a private throwaway PostgreSQL cluster (package
	// pglocal) for the run and removes it afterwards.
	EnginePGLocal = pg.Local
	// EngineSQLite uses an embedded SQLite database (modernc.org/sqlite) in a
	// temporary directory.
	EngineSQLite = sqlite.Name
	// EnginePGEnv connects to the PostgreSQL server described by the libpq
	// environment variables (PGHOST, PGPORT, PGUSER, PGDATABASE, …).
	EnginePGEnv = pg.Server
	// EngineMariaDBLocal starts a private throwaway MariaDB (or MySQL) server
	// (package mariadblocal) for the run and removes it afterwards; its
	// tables are InnoDB.
	EngineMariaDBLocal = innodb.Local
	// EngineMySQL is the engine name reported for a run against an existing
	// MariaDB or MySQL server, given as Config.DB
	// "mysql://user:password@host:port/db".
	EngineMySQL = innodb.Server
)

// ExtSchema is the schema in which a PostgreSQL run creates the pgstattuple extension when
// the database does not have it yet (pg.ExtSchema).
const ExtSchema = pg.ExtSchema

// ErrConnLost is returned (wrapped) by Run when the connection to the database breaks during
// a run: the server shut down, an administrator terminated the session, or the network
// failed (engine.ErrConnLost).
var ErrConnLost = engine.ErrConnLost

// ErrInterrupted is returned (wrapped) by Run when its context ends before the run is
// complete, for example on Ctrl-C. Run has then dropped what it created, as far as the
// database still allows (engine.ErrInterrupted).
var ErrInterrupted = engine.ErrInterrupted

// DefaultSchemes returns the rows compared by default (engine.DefaultSchemes).
func DefaultSchemes() []string { return engine.DefaultSchemes() }

// InnoDBSchemes returns the rows compared by default on MariaDB/MySQL (engine.InnoDBSchemes).
func InnoDBSchemes() []string { return engine.InnoDBSchemes() }

// AppSchemes returns the rows WorkloadApp compares by default (engine.AppSchemes).
func AppSchemes(innodb bool) []string { return engine.AppSchemes(innodb) }

// RedactDSN returns s with the password of every connection URL and key/value password=…
// setting in it replaced by "xxxxx" (engine.RedactDSN).
func RedactDSN(s string) string { return engine.RedactDSN(s) }

// PGLocalSettings returns the server settings dbbench pins for a pg-local cluster under the
// given profile, before Config.PGSettings is applied (pg.LocalSettings).
func PGLocalSettings(profile string) map[string]string { return pg.LocalSettings(profile) }

// MariaDBLocalSettings returns the server options dbbench pins for a mariadb-local server
// under the given profile, before Config.MariaDBSettings is applied (innodb.LocalSettings).
func MariaDBLocalSettings(profile string) map[string]string { return innodb.LocalSettings(profile) }

// SegmentStoreURL returns dsn as a segment store URL whose table lives in schema
// (pg.SegmentStoreURL).
func SegmentStoreURL(dsn, schema string) (string, error) { return pg.SegmentStoreURL(dsn, schema) }
