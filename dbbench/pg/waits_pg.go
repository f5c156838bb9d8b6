package pg

import (
	"context"

	"github.com/idkit/idkit/dbbench/engine"
)

var _ engine.WaitSampler = (*pgEngine)(nil)

// SampleWaits implements engine.WaitSampler: pg_stat_activity's wait_event_type:wait_event of
// each loading connection that is running a statement, "CPU" for one that waits on nothing.
func (e *pgEngine) SampleWaits(ctx context.Context) (map[string]int, error) {
	pids := make([]uint32, 0, len(e.loaders))
	for _, c := range e.loaders {
		pids = append(pids, c.PgConn().PID())
	}
	rows, err := e.admin.Query(ctx, `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU'), count(*)
		FROM pg_stat_activity WHERE pid = ANY($1::int4[]) AND state = 'active' GROUP BY 1`, pids)
	if err != nil {
		return nil, fail(ctx, "read pg_stat_activity", err)
	}
	defer rows.Close()
	out, err := engine.ScanCounts(rows)
	if err != nil {
		return nil, fail(ctx, "read pg_stat_activity", err)
	}
	return out, nil
}
