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
