package schemes_test

import (
	"context"
	"errors"
	"sync"
	"time"
)

// t0 is where fake clocks start: a whole second, so tick boundaries of every unit up to 1 s
// fall on it and drift amounts in error messages come out round.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is a schemes.Clock whose time moves only when told: Step moves it either way,
// Sleep advances it by the requested amount. It is safe for concurrent use.
type fakeClock struct {
	mu        sync.Mutex
	now       time.Time
	slept     time.Duration // total of all Sleep calls
	sleeps    int
	badSleeps int // Sleep calls with d <= 0: a generator that makes them could spin forever
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{now: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps++
	if d <= 0 {
		c.badSleeps++
		d = 1 // keep a buggy caller moving so the test fails instead of hanging
	}
	c.slept += d
	c.now = c.now.Add(d)
}

// Step moves the clock by d, backwards when d is negative.
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Stats returns the total slept and the number of bad (non-positive) sleeps.
func (c *fakeClock) Stats() (slept time.Duration, bad int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept, c.badSleeps
}

// memMarks is an in-memory schemes.MarkStore. It records the highest mark saved, so a test
// can check that no ID was issued above a mark that was not yet durable. A non-nil gate makes
// SaveMark wait until the gate is closed.
type memMarks struct {
	mu      sync.Mutex
	mark    time.Time
	saves   int
	loadErr error
	saveErr error
	gate    chan struct{}
}

func (m *memMarks) LoadMark(ctx context.Context) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.loadErr != nil {
		return time.Time{}, m.loadErr
	}
	return m.mark, nil
}

func (m *memMarks) SaveMark(ctx context.Context, mark time.Time) error {
	m.mu.Lock()
	gate := m.gate
	m.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saveErr != nil {
		return m.saveErr
	}
	if mark.Before(m.mark) {
		return errors.New("memMarks: mark moved backwards")
	}
	m.mark = mark
	m.saves++
	return nil
}

// Max returns the highest durable mark.
func (m *memMarks) Max() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mark
}

func (m *memMarks) Saves() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saves
}
