package schemes_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

func ExampleNewSnowflake() {
	// A fake clock makes the output repeatable; leave Clock nil for the system clock.
	clk := newFakeClock(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	node, _ := layouts.Twitter.NodeOf(map[string]uint64{"datacenter": 1, "worker": 3})
	g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Node: node, Clock: clk})
	if err != nil {
		panic(err)
	}
	for range 3 {
		id, _ := g.Next()
		p := layouts.Twitter.Decompose(id)
		fmt.Println(id, p.Time.Format(time.RFC3339Nano), p.Node, p.Seq)
	}
	// Output:
	// 1895806220502183936 2025-03-01T12:00:00.001Z 35 0
	// 1895806220502183937 2025-03-01T12:00:00.001Z 35 1
	// 1895806220502183938 2025-03-01T12:00:00.001Z 35 2
}

func ExampleSnowflake_NextN() {
	clk := newFakeClock(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	g, _ := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: layouts.Mastodon, Clock: clk})
	ids := make([]uint64, 4)
	if err := g.NextN(ids); err != nil {
		panic(err)
	}
	fmt.Println(ids)
	// Output:
	// [114087061094465536 114087061094465537 114087061094465538 114087061094465539]
}

func ExampleSnowflake_NextContext() {
	// A one-hour tick: the first ID waits for the next hour. The context ends the wait.
	l := layouts.Layout{
		Name:   "hourly",
		Fields: []layouts.Field{layouts.Time(30), layouts.Seq(12)},
		Unit:   time.Hour,
		Epoch:  time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: l})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err = g.NextContext(ctx)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output: true
}

func ExampleSnowflake_Close() {
	// Close stops the generator and waits for a mark save in progress; every later call fails
	// with ErrClosed, so the mark store (a file, a lease) can be let go safely.
	g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Node: 3})
	if err != nil {
		panic(err)
	}
	if _, err := g.Next(); err != nil {
		panic(err)
	}
	g.Close()
	_, err = g.Next()
	fmt.Println(errors.Is(err, schemes.ErrClosed))
	fmt.Println(err)
	// Output:
	// true
	// schemes: generator closed: snowflake node 3 of layout twitter: no IDs after Close
}
