package dbbench

import (
	"context"
	"slices"
	"time"

	"github.com/idkit/idkit/dbbench/engine"
)

// appOp is one business operation: a parent and its children, with the moment the
// application made the parent's ID.
type appOp struct {
	Parent   engine.Value // set by the write when the database makes the keys
	Created  time.Time
	Customer int64
	Payload  int64
	Children []engine.Value
	// ChildPayload is the payload of the first child; child j's is ChildPayload+j.
	ChildPayload int64
}

// opWriter writes the app workload's business operations through one engine.RowWriter: the
// one composition of the workload's writes, the same on every engine. An operation is one
// transaction of a one-row parent INSERT and a multi-row INSERT of its children (ModeTx); a
// batch of operations goes by the engine's bulk path, parents then children (ModeCopy). When the database makes the keys, the children need their parent's: a
// transaction returns it (InsertKey), and the bulk path reserves the keys first
// (engine.KeyReserver) or, on an engine that cannot, inserts each parent with InsertKey.
type opWriter struct {
	w             engine.RowWriter
	parent, child engine.TableDef
	k             int

	ops []appOp // what the row functions read
	// arrived, when set, is told each parent's key as its INSERT returns (tx mode).
	arrived func(engine.Value)
	// prepare, when set, makes the operation's IDs inside the transaction (Config.IDsInTx).
	prepare                   func(context.Context) error
	fillParents, fillChildren engine.RowFunc
	txFn, bulkFn, batchFn     func(context.Context) error
	// childOrder, when set, is the order in which the children of ops are written (a sorted
	// batch): entry i is the index (operation*k + child) of the i-th child row.
	childOrder, orderBuf []int
}

// newOpWriter returns the writer of s's operations over w.
func newOpWriter(w engine.RowWriter, s engine.AppSchema) *opWriter {
	ts := s.Tables()
	o := &opWriter{w: w, parent: ts[0], child: ts[1], k: s.Children}
	o.fillParents = func(i int, row []engine.Cell) error {
		op := &o.ops[i]
		row[0].Key, row[1].Time, row[2].Int, row[3].Int = &op.Parent, op.Created, op.Customer, op.Payload
		return nil
	}
	o.fillChildren = func(i int, row []engine.Cell) error {
		if o.childOrder != nil {
			i = o.childOrder[i]
		}
		op, j := &o.ops[i/o.k], i%o.k
		row[0].Key, row[1].Key, row[2].Int = &op.Children[j], &op.Parent, op.ChildPayload+int64(j)
		return nil
	}
	o.txFn, o.bulkFn, o.batchFn = o.writeOne, o.writeBulk, o.writeBatch
	return o
}

// tx writes ops in one transaction: one operation as a one-row parent INSERT and a multi-row
// INSERT of its children; several (a client's batch, Config.ClientBatch) as writeBatch does.
func (o *opWriter) tx(ctx context.Context, ops []appOp) error {
	o.ops = ops
	if len(ops) == 1 {
		return o.w.InTx(ctx, o.txFn)
	}
	return o.w.InTx(ctx, o.batchFn)
}

// writeBatch writes a client's batch of operations in the open transaction, sorted: the
// parents as one multi-row INSERT in ascending key order, then every child of the batch as one
// multi-row INSERT in ascending key order, so that the batch's keys reach each table in order.
// Parents whose keys the database makes are inserted one at a time (each INSERT returns its
// key, which its children need), in the order the database numbers them.
func (o *opWriter) writeBatch(ctx context.Context) error {
	ops := o.ops
	if o.parent.KeysByDatabase() {
		for i := range ops {
			o.ops = ops[i : i+1]
			if err := o.w.InsertKey(ctx, o.parent, o.fillParents, &ops[i].Parent); err != nil {
				return err
			}
			if o.arrived != nil {
				o.arrived(ops[i].Parent)
			}
		}
		o.ops = ops
	} else {
		slices.SortFunc(ops, func(a, b appOp) int { return compareKeys(a.Parent, b.Parent) })
		if err := o.w.Insert(ctx, o.parent, engine.PathBatch, len(ops), o.fillParents); err != nil {
			return err
		}
		if o.arrived != nil {
			for i := range ops {
				o.arrived(ops[i].Parent)
			}
		}
	}
	n := len(ops) * o.k
	if !o.child.KeysByDatabase() {
		order := o.orderBuf[:0]
		for i := range n {
			order = append(order, i)
		}
		slices.SortFunc(order, func(a, b int) int {
			return compareKeys(ops[a/o.k].Children[a%o.k], ops[b/o.k].Children[b%o.k])
		})
		o.orderBuf, o.childOrder = order, order
	}
	err := o.w.Insert(ctx, o.child, engine.PathBatch, n, o.fillChildren)
	o.childOrder = nil
	return err
}

func (o *opWriter) writeOne(ctx context.Context) error {
	if o.prepare != nil {
		if err := o.prepare(ctx); err != nil {
			return err
		}
	}
	if o.parent.KeysByDatabase() {
		if err := o.w.InsertKey(ctx, o.parent, o.fillParents, &o.ops[0].Parent); err != nil {
			return err
		}
	} else if err := o.w.Insert(ctx, o.parent, engine.PathSingle, 1, o.fillParents); err != nil {
		return err
	}
	if o.arrived != nil {
		o.arrived(o.ops[0].Parent)
	}
	return o.w.Insert(ctx, o.child, engine.PathBatch, o.k, o.fillChildren)
}

// bulk writes ops by the engine's bulk path, parents then children, each Insert committed
// as the engine's bulk path commits it (COPY and LOAD DATA one statement each, SQLite one
// transaction each), as before there was one writer for every engine. Only where the
// parents' keys come back one INSERT at a time (InsertKey: the database makes them and the
// writer reserves none) is the batch one transaction, so that they are not one commit each.
func (o *opWriter) bulk(ctx context.Context, ops []appOp) error {
	o.ops = ops
	if _, reserves := o.w.(engine.KeyReserver); o.parent.KeysByDatabase() && !reserves {
		return o.w.InTx(ctx, o.bulkFn)
	}
	return o.bulkFn(ctx)
}

func (o *opWriter) writeBulk(ctx context.Context) error {
	ops, parent, child := o.ops, o.parent, o.child
	if parent.KeysByDatabase() {
		r, ok := o.w.(engine.KeyReserver)
		if !ok {
			for i := range ops {
				o.ops = ops[i : i+1]
				if err := o.w.InsertKey(ctx, parent, o.fillParents, &ops[i].Parent); err != nil {
					return err
				}
			}
			o.ops = ops
			return o.w.Insert(ctx, child, engine.PathBulk, len(ops)*o.k, o.fillChildren)
		}
		if err := r.Reserve(ctx, parent, len(ops), func(i int) *engine.Value { return &ops[i].Parent }); err != nil {
			return err
		}
		if err := r.Reserve(ctx, child, len(ops)*o.k, func(i int) *engine.Value { return &ops[i/o.k].Children[i%o.k] }); err != nil {
			return err
		}
		parent, child = parent.WithKeysBy(engine.KeyByApp), child.WithKeysBy(engine.KeyByApp)
	}
	if err := o.w.Insert(ctx, parent, engine.PathBulk, len(ops), o.fillParents); err != nil {
		return err
	}
	return o.w.Insert(ctx, child, engine.PathBulk, len(ops)*o.k, o.fillChildren)
}

// bare writes operations first..first+count-1 of the baseline in mode, as the schemes'
// operations are written: ascending bigint keys from the operation number (plus
// engine.BareKeyBase, so that LOAD DATA parses 19 digits a key, as for Snowflake IDs), no
// key generator behind them. ops holds at least count operations with their children.
func (o *opWriter) bare(ctx context.Context, mode string, first, count int64, ops []appOp) error {
	k := int64(o.k)
	ops = ops[:count]
	for n := range ops {
		op, id := &ops[n], first+int64(n)+1
		op.Parent = engine.Value{I64: engine.BareKeyBase + id}
		op.Created, op.Customer, op.Payload = time.Now(), id%10000, id
		op.ChildPayload = (id-1)*k + 1
		for j := range op.Children {
			op.Children[j] = engine.Value{I64: engine.BareKeyBase + op.ChildPayload + int64(j)}
		}
	}
	if mode == engine.ModeCopy {
		return o.bulk(ctx, ops)
	}
	for i := range ops {
		if err := o.tx(ctx, ops[i:i+1]); err != nil {
			return err
		}
	}
	return nil
}
