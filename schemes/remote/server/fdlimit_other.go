//go:build !unix

package server

// fdLimit is unknown here: DefaultMaxConns takes its ceiling.
func fdLimit() uint64 { return 0 }
