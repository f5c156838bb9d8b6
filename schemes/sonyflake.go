package schemes

import (
	"fmt"
	"time"

	"github.com/sony/sonyflake"

	"github.com/idkit/idkit/layouts"
)

// SonyflakeSettings configures NewSonyflake, the adapter for github.com/sony/sonyflake.
type SonyflakeSettings struct {
	// Machine is the 16-bit machine ID. Unlike the library's default, the adapter does not
	// guess it from the host's IP address: pick it explicitly (or through idkit's node sources).
	Machine uint16
	// StartTime is the epoch; the zero value means Sonyflake's 2014-09-01T00:00:00Z. Like the
	// library, the adapter truncates it to a multiple of 10 ms since the Unix epoch.
	StartTime time.Time
}

// Sonyflake wraps *sonyflake.Sonyflake: layout layouts.Sonyflake (39 bits of 10 ms, 8-bit
// sequence, 16-bit machine) with the settings' start time as epoch. The library reads the wall
// clock and never lets its time field go back: after a backward step it keeps counting on the
// last time, sleeping as long as the step whenever 256 IDs use up a 10 ms tick. It is safe for
// concurrent use (the library holds a mutex).
type Sonyflake struct {
	sf      *sonyflake.Sonyflake
	layout  layouts.Layout
	machine uint16
}

// NewSonyflake returns the adapter. Errors wrap ErrSettings (start time in the future). It
// waits until the 10 ms tick it started in is over: the library itself would reuse that
// tick's sequence numbers after a crash and fast restart with the same machine ID.
func NewSonyflake(s SonyflakeSettings) (*Sonyflake, error) {
	if s.StartTime.After(time.Now()) {
		return nil, fmt.Errorf("%w: sonyflake start time %s is in the future", ErrSettings, s.StartTime.UTC().Format(time.RFC3339))
	}
	l, err := SonyflakeLayout(s.StartTime)
	if err != nil {
		return nil, err
	}
	machine := s.Machine
	sf, err := sonyflake.New(sonyflake.Settings{
		StartTime: l.Epoch,
		MachineID: func() (uint16, error) { return machine, nil },
	})
	if err != nil {
		return nil, fmt.Errorf("%w: sonyflake: %w", ErrSettings, err)
	}
	now := time.Now()
	time.Sleep(l.TickTime(l.Tick(now) + 1).Sub(now))
	return &Sonyflake{sf: sf, layout: l, machine: machine}, nil
}

// SonyflakeLayout returns the layout of the IDs the adapter makes with start time start (zero:
// Sonyflake's default epoch), for decoding them without a generator. Errors wrap ErrSettings
// (a start time outside the library's range); a start time in the future is not an error here.
func SonyflakeLayout(start time.Time) (layouts.Layout, error) {
	l := layouts.Sonyflake.Clone()
	if start.IsZero() {
		return l, nil
	}
	// The library counts 10 ms units from StartTime.UnixNano()/1e7, dropping the rest; the
	// layout must start at that same instant or every decoded time is off by it.
	ns := start.UnixNano()
	if !time.Unix(0, ns).Equal(start) {
		return l, fmt.Errorf("%w: sonyflake start time %s is outside the library's range (Unix nanoseconds in an int64)", ErrSettings, start.UTC().Format(time.RFC3339))
	}
	l.Epoch = time.Unix(0, ns/1e7*1e7).UTC()
	return l, nil
}

// Next returns a new Sonyflake ID; it fails with the library's ErrOverTimeLimit (wrapped in
// ErrTimeOverflow) once the 39-bit time field is used up, in 2188 with the default epoch.
func (g *Sonyflake) Next() (uint64, error) {
	id, err := g.sf.NextID()
	if err != nil {
		return 0, fmt.Errorf("%w: sonyflake: %w", ErrTimeOverflow, err)
	}
	return id, nil
}

// Machine returns the 16-bit machine ID the adapter puts in every ID.
func (g *Sonyflake) Machine() uint16 { return g.machine }

// Layout returns the adapter's layout, with its epoch.
func (g *Sonyflake) Layout() layouts.Layout { return g.layout.Clone() }
