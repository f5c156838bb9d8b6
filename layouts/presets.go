package layouts

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// The presets carry each system's published layout. Treat them as read-only values: Preset and
// Clone return copies that are safe to change.
var (
	// Twitter is the original Snowflake (2010): 41 bits of milliseconds since
	// 2010-11-04T01:42:54.657Z, a 5-bit datacenter, a 5-bit worker and a 12-bit sequence. The
	// sign bit stays zero, so IDs fit a signed bigint until the time field runs out in 2080.
	//
	//	 0                   1                   2                   3
	//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
	//	+-+-------------------------------------------------------------+
	//	|0|                  time (41 bits, ms) ...                     |
	//	+-+-------------------------------------+---------+---------+---+
	//	|  ... time                             | dc (5)  |worker(5)|seq|
	//	+---------------------------------------+---------+---------+---+
	//	|                 ... seq (12 bits)                             |
	Twitter = Layout{
		Name:   "twitter",
		Fields: []Field{Time(41), Node("datacenter", 5), Node("worker", 5), Seq(12)},
		Unit:   time.Millisecond,
		Epoch:  time.UnixMilli(1288834974657).UTC(),
	}

	// Discord uses Twitter's shape with its own epoch, 2015-01-01T00:00:00Z, and all 64 bits:
	// 42 bits of milliseconds, a 5-bit internal worker, a 5-bit internal process and a 12-bit
	// increment. IDs set the sign bit from 2084-09-06; Discord treats them as unsigned.
	//
	//	 63                                     22       17       12          0
	//	+----------------------------------------+--------+--------+-----------+
	//	|           time (42 bits, ms)           |worker 5|process5| seq (12)  |
	//	+----------------------------------------+--------+--------+-----------+
	Discord = Layout{
		Name:   "discord",
		Fields: []Field{Time(42), Node("worker", 5), Node("process", 5), Seq(12)},
		Unit:   time.Millisecond,
		Epoch:  time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC),
	}

	// Instagram's sharded IDs (2012): 41 bits of milliseconds since their epoch 1314220021721
	// (2011-08-24T21:07:01.721Z), a 13-bit logical shard and a 10-bit per-shard sequence, 64
	// bits in all; IDs set the sign bit from 2046-06-27.
	//
	//	 63                                       23              10          0
	//	+------------------------------------------+---------------+-----------+
	//	|            time (41 bits, ms)            |  shard (13)   | seq (10)  |
	//	+------------------------------------------+---------------+-----------+
	Instagram = Layout{
		Name:   "instagram",
		Fields: []Field{Time(41), Node("shard", 13), Seq(10)},
		Unit:   time.Millisecond,
		Epoch:  time.UnixMilli(1314220021721).UTC(),
	}

	// Sonyflake (github.com/sony/sonyflake v1): 39 bits of 10 ms units since
	// 2014-09-01T00:00:00Z, then an 8-bit sequence, then a 16-bit machine ID. The sequence sits
	// above the machine ID, so one machine's IDs are not consecutive integers.
	//
	//	 63 62                                   24         16                0
	//	+--+--------------------------------------+----------+-----------------+
	//	|0 |        time (39 bits, 10 ms)         | seq (8)  |  machine (16)   |
	//	+--+--------------------------------------+----------+-----------------+
	Sonyflake = Layout{
		Name:   "sonyflake",
		Fields: []Field{Time(39), Seq(8), Node("machine", 16)},
		Unit:   10 * time.Millisecond,
		Epoch:  time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC),
	}

	// Mastodon's timestamp IDs: 48 bits of milliseconds since the Unix epoch and 16 low bits.
	// Mastodon fills the low bits from a hash of the table name, a secret and the time plus a
	// sequence, with no node field; here they are a plain 16-bit sequence.
	//
	//	 63                                              16                0
	//	+-------------------------------------------------+-----------------+
	//	|            time (48 bits, ms since 1970)        |    seq (16)     |
	//	+-------------------------------------------------+-----------------+
	Mastodon = Layout{
		Name:   "mastodon",
		Fields: []Field{Time(48), Seq(16)},
		Unit:   time.Millisecond,
		Epoch:  time.Unix(0, 0).UTC(),
	}

	// Baidu is the default layout of Baidu's uid-generator: a zero sign bit, 28 bits of
	// seconds since 2016-05-20, a 22-bit worker and a 13-bit sequence. Its time field holds
	// 2^28 s (8.5 years) and ran out on 2024-11-20: generating with it now fails with a
	// time-overflow error, which is why uid-generator asks users to re-balance the bits.
	// uid-generator parses its epoch in the JVM's local zone; this preset uses UTC midnight.
	//
	//	 63 62                 34                               12           0
	//	+--+--------------------+--------------------------------+-------------+
	//	|0 | time (28 bits, s)  |          worker (22)           |  seq (13)   |
	//	+--+--------------------+--------------------------------+-------------+
	Baidu = Layout{
		Name:   "baidu",
		Fields: []Field{Time(28), Node("worker", 22), Seq(13)},
		Unit:   time.Second,
		Epoch:  time.Date(2016, 5, 20, 0, 0, 0, 0, time.UTC),
	}
)

// Presets returns a copy of every preset, sorted by name.
func Presets() []Layout {
	all := []Layout{Baidu, Discord, Instagram, Mastodon, Sonyflake, Twitter}
	for i := range all {
		all[i] = all[i].Clone()
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// Preset returns a copy of the preset with the given name (case-insensitive).
func Preset(name string) (Layout, error) {
	for _, l := range Presets() {
		if strings.EqualFold(l.Name, name) {
			return l, nil
		}
	}
	names := make([]string, 0, 6)
	for _, l := range Presets() {
		names = append(names, l.Name)
	}
	return Layout{}, fmt.Errorf("%w: unknown preset %q (known: %s)", ErrInvalid, name, strings.Join(names, ", "))
}

// Clone returns a copy of l that shares no memory with it.
func (l Layout) Clone() Layout {
	l.Fields = slices.Clone(l.Fields)
	return l
}
