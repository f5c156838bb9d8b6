//go:build !unix

package main

import "time"

// processCPU returns 0: this platform's CPU time is not read, and reports leave it out.
func processCPU() time.Duration { return 0 }
