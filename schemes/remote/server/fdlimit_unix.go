//go:build unix

package server

import "syscall"

// fdLimit is the process's limit on open files (RLIMIT_NOFILE, the soft one, which Go raises to
// the hard one at start), 0 when unknown.
func fdLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return r.Cur
}
