package server

// growStack grows the calling goroutine's stack in one step to what serving a request takes,
// while the stack is still shallow. net/http's HTTP/2 server runs every request in a goroutine
// of its own, which starts with a small stack (2 KiB, or the runtime's running average); a
// request through Connect, the bounds and the generator needs several times that, and the
// runtime grows a stack by doubling it, copying the frames and adjusting their pointers at
// every step, deep in the call chain where there are many frames to walk: 12–15% of the main
// port's CPU for a Connect request (docs/bench/http-profile.txt). One frame of
// growStackBytes makes the runtime pick a stack big enough at once, when only the few frames
// of net/http are on it. CockroachDB does the same (pkg/util/growstack).
//
//go:noinline
func growStack(i int) byte {
	var buf [growStackBytes]byte
	return buf[uint(i)%growStackBytes] // an index it cannot know keeps the compiler from dropping buf
}

// growStackBytes is growStack's frame: with the frames above it, the runtime doubles a small
// stack to 16 KiB, the largest size it keeps cached per processor.
const growStackBytes = 8 << 10
