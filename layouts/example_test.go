package layouts_test

import (
	"fmt"
	"time"

	"github.com/idkit/idkit/layouts"
)

func ExampleLayout_Decompose() {
	// Discord's documented example ID.
	p := layouts.Discord.Decompose(175928847299117063)
	fmt.Println(p.Time.Format(time.RFC3339Nano))
	for _, v := range p.Named {
		fmt.Printf("%s=%d\n", v.Name, v.Value)
	}
	// Output:
	// 2016-04-30T11:18:25.796Z
	// time=41944705796
	// worker=1
	// process=0
	// seq=7
}

func ExampleLayout_Compose() {
	l := layouts.Layout{
		Name:   "orders",
		Fields: []layouts.Field{layouts.Time(40), layouts.Node("region", 4), layouts.Node("host", 8), layouts.Seq(11)},
		Unit:   time.Millisecond,
		Epoch:  time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	node, _ := l.NodeOf(map[string]uint64{"region": 2, "host": 9})
	tick := l.Tick(time.Date(2024, 1, 1, 0, 0, 1, 0, time.UTC))
	id, _ := l.Compose(tick, node, 5)
	fmt.Println(l, node, tick, id)
	fmt.Println(l.IDsPerSecond(), l.Nodes(), l.RunsOut().Format(time.DateOnly))
	// Output:
	// orders 40/4+8/11 1ms epoch 2024-01-01T00:00:00Z 521 1000 8389675013
	// 2.048e+06 4096 2058-11-03
}

// A hash field of 4 bits on Twitter's layout, taken from its sequence: consecutive IDs of one
// node land on unrelated shards.
func ExampleLayout_Sharded() {
	l, err := layouts.Twitter.Sharded(4, "")
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Bits(), l.FieldList())
	tick := l.Tick(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for seq := range uint64(3) {
		id, _ := l.Compose(tick, 3, seq)
		fmt.Println(id, "shard", l.Decompose(id).Hash)
	}
	// Output:
	// 4/41/5+5/8 hash:4/time:41/datacenter:5/worker:5/seq:8
	// 1854789489000186624 shard 3
	// 6466475507427574529 shard 11
	// 7042936259730998018 shard 12
}

// Spanner's BIT_REVERSE(x, preserve_sign => true), which its bit_reversed_positive sequences
// apply to a counter.
func ExampleReverse63() {
	for _, v := range []uint64{1, 2, 3, 10} {
		fmt.Println(v, layouts.Reverse63(v))
	}
	// Output:
	// 1 4611686018427387904
	// 2 2305843009213693952
	// 3 6917529027641081856
	// 10 2882303761517117440
}
