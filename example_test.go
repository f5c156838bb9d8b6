package idkit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/idkit/idkit"
)

func ExampleNew() {
	s, err := idkit.New("snowflake:layout=discord,worker=1,process=0")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name())
	// Discord's documented example ID.
	id, err := s.Parse("175928847299117063")
	if err != nil {
		panic(err)
	}
	p, err := s.Decode(id)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Time.Format(time.RFC3339Nano), p.Node, p.Seq)
	for _, f := range p.Fields {
		fmt.Printf("%s=%d ", f.Name, f.Value)
	}
	fmt.Println()
	// Output:
	// snowflake:layout=discord,worker=1,process=0
	// 2016-04-30T11:18:25.796Z 32 7
	// time=41944705796 worker=1 process=0 seq=7
}

func ExampleNew_errors() {
	for _, spec := range []string{
		"snowflake:layout=twitter,node=1024",
		"snowflake:time_bits=50",
		"ulid:monotonic=maybe",
		"uuidv8",
	} {
		_, err := idkit.New(spec)
		fmt.Println(err)
	}
	// Output:
	// idkit: bad spec "snowflake:layout=twitter,node=1024": node=1024: layout twitter has 10 node bits, so nodes run from 0 to 1023
	// idkit: bad spec "snowflake:time_bits=50": layout twitter-custom (50/5+5/12): layouts: invalid layout: fields total 72 bits (50/5+5/12), more than 64
	// idkit: bad spec "ulid:monotonic=maybe": monotonic=maybe: want true or false
	// idkit: bad spec "uuidv8": unknown scheme "uuidv8" (known: counter, segment, snowflake, sonyflake, typeid, ulid, uuidv4, uuidv7)
}

func ExampleParse() {
	for _, s := range []string{"1541815603606036480", "01arz3ndektsv4rrffq69g5fav", "017F22E2-79B0-7CC3-98C4-DC0C0C07398F"} {
		id, err := idkit.Parse(s)
		if err != nil {
			panic(err)
		}
		fmt.Println(id.Format(), id.Bits(), id)
	}
	// Output:
	// decimal 64 1541815603606036480
	// ulid 128 01ARZ3NDEKTSV4RRFFQ69G5FAV
	// uuid 128 017f22e2-79b0-7cc3-98c4-dc0c0c07398f
}

func ExampleScheme_Decode() {
	s, _ := idkit.New("uuidv7")
	id, _ := s.Parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f") // RFC 9562's example
	p, _ := s.Decode(id)
	fmt.Println(p.Version, p.Time.Format(time.RFC3339Nano))
	_, err := s.Parse("919108f7-52d1-4320-9bac-f847db4148a8") // a UUIDv4
	fmt.Println(err)
	// Output:
	// 7 2022-02-22T19:22:22Z
	// idkit: ID of another scheme: 919108f7-52d1-4320-9bac-f847db4148a8 is a version 4 UUID, want version 7
}

func ExampleID_MarshalJSON() {
	type order struct {
		ID idkit.ID `json:"id"`
	}
	b, _ := json.Marshal(order{ID: idkit.FromUint64(1541815603606036480)})
	fmt.Println(string(b))
	var o order
	_ = json.Unmarshal([]byte(`{"id":1541815603606036480}`), &o) // numbers are accepted too
	fmt.Println(o.ID)
	// Output:
	// {"id":"1541815603606036480"}
	// 1541815603606036480
}

func ExampleJSONNumber() {
	type order struct {
		ID idkit.JSONNumber `json:"id"`
	}
	b, _ := json.Marshal(order{ID: idkit.JSONNumber{ID: idkit.FromUint64(1541815603606036480)}})
	fmt.Println(string(b))
	// Output:
	// {"id":1541815603606036480}
}

func ExampleID_Value() {
	for _, s := range []string{"1541815603606036480", "18446744073709551615", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"} {
		id, _ := idkit.Parse(s)
		v, _ := id.Value()
		fmt.Printf("%T %v\n", v, v)
	}
	// Output:
	// int64 1541815603606036480
	// string 18446744073709551615
	// []uint8 [1 127 34 226 121 176 124 195 152 196 220 12 12 7 57 143]
}

func ExampleFormatID() {
	s, err := idkit.New("typeid:prefix=user")
	if err != nil {
		panic(err)
	}
	id, _ := idkit.Parse("01890a5d-ac96-774b-bcce-b302099a8057") // a stored UUIDv7
	text, _ := idkit.FormatID(s, id)
	fmt.Println(id, "is shown as", text)
	back, _ := s.Parse(text)
	fmt.Println(back == id)
	_, err = s.Parse("order_01h455vb4pex5vsknk084sn02q")
	fmt.Println(err)
	// Output:
	// 01890a5d-ac96-774b-bcce-b302099a8057 is shown as user_01h455vb4pex5vsknk084sn02q
	// true
	// idkit: ID of another scheme: "order_01h455vb4pex5vsknk084sn02q" has prefix "order"; want "user"
}

// ExamplePublic shows a struct field in its scheme's public form. userIDs names the codec:
//
//	var userCodec, _ = idkit.NewCodec("typeid:prefix=user")
//
//	type userIDs struct{}
//
//	func (userIDs) Codec() idkit.Codec { return userCodec }
func ExamplePublic() {
	type User struct {
		ID   idkit.Public[userIDs] `json:"id"`
		Name string                `json:"name"`
	}
	id, _ := idkit.Parse("01890a5d-ac96-774b-bcce-b302099a8057")
	b, _ := json.Marshal(User{ID: idkit.Public[userIDs]{ID: id}, Name: "Ada"})
	fmt.Println(string(b))
	var u User
	_ = json.Unmarshal(b, &u)
	v, _ := u.ID.Value() // the database stores the plain UUID's 16 bytes
	fmt.Println(u.ID.ID, len(v.([]byte)))
	// Output:
	// {"id":"user_01h455vb4pex5vsknk084sn02q","name":"Ada"}
	// 01890a5d-ac96-774b-bcce-b302099a8057 16
}

// ExampleNew_mask keeps time-ordered IDs in the database and shows opaque ones: the key comes
// from the environment (in production, from a secret store), never from the spec.
func ExampleNew_mask() {
	os.Setenv("ORDERS_ID_KEY", "0011223344556677:8899aabbccddeeff")
	s, err := idkit.New("snowflake:layout=discord,prefix=ord,mask=env:ORDERS_ID_KEY")
	if err != nil {
		panic(err)
	}
	id := idkit.FromUint64(175928847299117063) // what Next issued and the database stores
	text, _ := idkit.FormatID(s, id)
	back, _ := s.Parse(text)
	fmt.Println(id, "→", text, "→", back)
	v7, _ := idkit.New("uuidv7:mask=env:ORDERS_ID_KEY") // the UUIDv47 facade
	u, _ := idkit.Parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
	facade, _ := idkit.FormatID(v7, u)
	fmt.Println(u, "→", facade)
	// Output:
	// 175928847299117063 → ord_er9bcewbkayk2 → 175928847299117063
	// 017f22e2-79b0-7cc3-98c4-dc0c0c07398f → f17f62b4-77d6-4cc3-98c4-dc0c0c07398f
}

// ExampleBounds finds the rows made on one day through a time-ordered primary key, with no
// created_at index: the IDs any node made that day lie in [lo, hi].
func ExampleBounds() {
	s, err := idkit.NewCodec("snowflake:layout=twitter")
	if err != nil {
		panic(err)
	}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lo, hi, err := idkit.Bounds(s, from, from.AddDate(0, 0, 1))
	if err != nil {
		panic(err)
	}
	fmt.Println("SELECT * FROM orders WHERE id >= $1 AND id <= $2 -- args:", lo, hi)
	// With database/sql: db.QueryContext(ctx, query, lo, hi); ID's Value passes each ID in the
	// form its column holds (an int64 here, 16 bytes for a UUIDv7).
	pl, _ := s.Decode(lo)
	ph, _ := s.Decode(hi)
	fmt.Println("first tick", pl.Time.Format(time.RFC3339Nano), "node", pl.Node, "seq", pl.Seq)
	fmt.Println("last tick ", ph.Time.Format(time.RFC3339Nano), "node", ph.Node, "seq", ph.Seq)

	// UUIDv7 bounds keep the version and variant bits every UUIDv7 has.
	u, _ := idkit.NewCodec("uuidv7")
	lo, hi, _ = idkit.Bounds(u, from, from.Add(time.Millisecond))
	fmt.Println(lo, hi)

	// A scheme without time order has no such range.
	v4, _ := idkit.NewCodec("uuidv4")
	_, _, err = idkit.Bounds(v4, from, from.AddDate(0, 0, 1))
	fmt.Println(errors.Is(err, idkit.ErrUnordered))
	// Output:
	// SELECT * FROM orders WHERE id >= $1 AND id <= $2 -- args: 2006515713438646272 2006878101304246271
	// first tick 2026-01-01T00:00:00Z node 0 seq 0
	// last tick  2026-01-01T23:59:59.999Z node 1023 seq 4095
	// 019b76da-a800-7000-8000-000000000000 019b76da-a800-7fff-bfff-ffffffffffff
	// true
}

// The IDs of a time range of a sharded layout are one range per shard.
func ExampleShardBounds() {
	c, err := idkit.NewCodec("snowflake:shard_bits=2")
	if err != nil {
		panic(err)
	}
	from := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	rs, err := idkit.ShardBounds(c, from, from.Add(time.Hour))
	if err != nil {
		panic(err)
	}
	for _, r := range rs {
		fmt.Println(r.Shard, r.Lo, r.Hi)
	}
	fmt.Println(idkit.Where("id", rs[:2]), "OR …")
	// Output:
	// 0 501662902222061568 501666677095661567
	// 1 2807505911435755520 2807509686309355519
	// 2 5113348920649449472 5113352695523049471
	// 3 7419191929863143424 7419195704736743423
	// (id >= 501662902222061568 AND id <= 501666677095661567) OR (id >= 2807505911435755520 AND id <= 2807509686309355519) OR …
}

// As reaches a scheme's optional interfaces, through what New puts around a registered scheme
// with prefix= or mask= too, where a type assertion sees only the wrapper.
func ExampleAs() {
	s, err := idkit.New("snowflake:layout=twitter,datacenter=1,worker=3")
	if err != nil {
		fmt.Println(err)
		return
	}
	if n, ok := idkit.As[idkit.Noder](s); ok {
		fmt.Println("node", n.Node())
	}
	if l, ok := idkit.As[idkit.Layouter](s); ok {
		fmt.Println("layout", l.Layout().Name)
	}
	// Output:
	// node 35
	// layout twitter
}
