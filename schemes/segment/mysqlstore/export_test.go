package mysqlstore

import "github.com/idkit/idkit/schemes/segment"

// CheckVariables runs the settings check of Open on vars, as SHOW VARIABLES returns them, for a
// table test of the settings a test cannot give a real server (a Galera node's).
func CheckVariables(vars map[string]string, unsafe bool) error {
	return (&Store{server: "tcp(db:3306)", unsafe: unsafe}).checkVariables(vars)
}

// Unprotected makes s take blocks as before failover fencing, for the failover tests'
// controls: no epoch or gap, no replication check.
func Unprotected(s *Store) { s.unprotected = true }

// SetBeforeCommit makes s run f between a take's write and its COMMIT.
func SetBeforeCommit(s *Store, f func()) { s.beforeCommit = f }

// Replication is the part of a server's state the durability class is decided on.
type Replication struct {
	LogBin, ReadOnly                   string
	Dumps                              int
	SemiEnabled, SemiStatus, WaitPoint string
	SemiClients                        int64
	WsrepOn, WsrepStatus, WsrepSession string
}

// ClassOf returns the durability class of r.
func ClassOf(r Replication) (segment.Class, string) {
	return facts{logBin: r.LogBin, readOnly: r.ReadOnly, dumps: r.Dumps, semiEnabled: r.SemiEnabled, semiStatus: r.SemiStatus,
		waitPoint: r.WaitPoint, semiClients: r.SemiClients, wsrepOn: r.WsrepOn, wsrepStatus: r.WsrepStatus, wsrepSession: r.WsrepSession}.class()
}

// AllowSplitBrain makes a store opened with set accept a Galera node with pc.ignore_sb or
// pc.ignore_quorum, for the Galera partition test's control only.
func AllowSplitBrain(set *Settings) { set.allowSplitBrain = true }

// NoWriterGuard makes s take on any Galera node as before the writer guard, for the Galera
// partition test's control only.
func NoWriterGuard(s *Store) { s.noWriterGuard = true }
