//go:build linux || darwin || freebsd || netbsd || openbsd

package dbbench

import (
	"runtime"
	"syscall"
)

// maxRSS returns the largest resident set of this process so far, in bytes, or 0 when the
// system does not say.
func maxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes on macOS
	}
	return int64(ru.Maxrss) * 1024 // kilobytes elsewhere
}
