// Command direct is the light-root check's baseline: the program of ../idkit written against
// oklog/ulid, google/uuid and sony/sonyflake directly, with a hand-rolled Discord-layout
// Snowflake, as a user without idkit would write it.
package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/sony/sonyflake"
)

// discord makes Discord-layout IDs: 42 bits of ms since 2015, 5+5 node bits, 12 of sequence.
type discord struct {
	mu      sync.Mutex
	last    int64
	seq     int64
	worker  int64
	epochMs int64
}

func (d *discord) next() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		now := time.Now().UnixMilli() - d.epochMs
		if now > d.last {
			d.last, d.seq = now, 0
			break
		}
		if d.seq < 4095 {
			d.seq++
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	return d.last<<22 | d.worker<<17 | d.seq
}

func main() {
	fmt.Println("ulid", ulid.Make())
	u, err := uuid.NewV7()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("uuidv7", u)
	sf, err := sonyflake.New(sonyflake.Settings{MachineID: func() (uint16, error) { return 0, nil }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	id, err := sf.NextID()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("sonyflake", id)
	d := &discord{worker: 1, last: -1, epochMs: 1420070400000}
	fmt.Println("snowflake:layout=discord,worker=1", d.next())
}
