// Package contended measures one Snowflake generator shared by several goroutines against the
// peers users weigh it with: bwmarrin/snowflake (a mutex), sony/sonyflake (a mutex, its
// fixed 8-bit sequence capped at 25,600 IDs/s), a plain mutex generator and a plain
// compare-and-swap generator, besides a design tried for idkit's core and left out (crowd:
// compare-and-swap, then a mutex for the rest of the millisecond after a collision), all but
// sonyflake on one layout (41 bits of milliseconds, 22 of sequence) whose cap is out of reach.
//
// It is a module of its own so that the peer libraries stay out of idkit's go.mod; a replace
// directive builds it against the repository it sits in. See README.md for the commands.
package contended
