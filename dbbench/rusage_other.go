//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package dbbench

// maxRSS returns 0: this system does not report the largest resident set.
func maxRSS() int64 { return 0 }
