package schemes

import (
	"context"
	"time"
)

// Clock is a generator's time source. The system clock (used when a settings struct leaves
// Clock nil) reads the monotonic clock anchored at the generator's start, so a wall-clock step
// while the process runs cannot reissue a timestamp. Tests inject a fake whose Now they step
// backwards and forwards; its Sleep must advance it (or wait for another goroutine to).
//
// A generator's NextContext can only end a wait early if the clock lets it: a Clock that also
// implements ContextSleeper is slept through SleepContext; one that does not is asked for the
// whole Sleep and the context is checked before and after it.
type Clock interface {
	Now() time.Time
	Sleep(time.Duration)
}

// ContextSleeper is an optional interface of a Clock whose waits can be cut short.
// SleepContext waits like Sleep but returns early with ctx.Err() once ctx is done, and nil
// after a full wait. Generators use it for every wait made on behalf of a NextContext call.
type ContextSleeper interface {
	SleepContext(ctx context.Context, d time.Duration) error
}

// Fence tells a generator whether it may still issue IDs for its node. Err returns nil while
// the node ID is safely held and a non-nil error (wrapped into the generator's error) once it
// is lost or about to be. Generators call Err once per Next and once per batch, so it must be
// cheap: an atomic load, no I/O. A fence whose permission runs out at a known time should also
// implement DeadlineFence: a check made once per call cannot see a pause between the check
// and the ID (a process stopped for longer than the fence's margin), a deadline compared with
// the ID's own time can.
type Fence interface {
	Err() error
}

// MarkStore persists a generator's high-water mark: an instant at or after the time of every
// ID the node has issued. A generator started with a MarkStore loads the mark first and never
// issues an ID whose time is at or below it; while running it saves a new mark ahead of use
// (see SnowflakeSettings.MarkWindow), so the hot path does not write per ID.
//
// LoadMark returns the zero time when nothing was saved yet. SaveMark must be durable when it
// returns nil.
type MarkStore interface {
	LoadMark(ctx context.Context) (time.Time, error)
	SaveMark(ctx context.Context, mark time.Time) error
}
