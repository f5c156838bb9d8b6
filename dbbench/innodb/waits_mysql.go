package innodb

import (
	"context"

	"github.com/idkit/idkit/dbbench/engine"
)

var _ engine.WaitSampler = (*mysqlEngine)(nil)

// SampleWaits implements engine.WaitSampler: the PROCESSLIST state of each other session of
// the run's user that is running a statement (its command when the state is empty), and
// "lock wait" for each transaction INNODB_TRX shows in LOCK WAIT. MariaDB's
// performance_schema, which would name InnoDB's latches, is off by default, and turning it on
// would change what is measured.
func (e *mysqlEngine) SampleWaits(ctx context.Context) (map[string]int, error) {
	rows, err := e.admin.QueryContext(ctx, `SELECT COALESCE(NULLIF(STATE, ''), COMMAND), COUNT(*)
		FROM information_schema.PROCESSLIST WHERE USER = SUBSTRING_INDEX(USER(), '@', 1) AND ID <> CONNECTION_ID()
		AND COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump') GROUP BY 1`)
	if err != nil {
		return nil, fail(ctx, "read PROCESSLIST", err)
	}
	defer rows.Close()
	out, err := engine.ScanCounts(rows)
	if err != nil {
		return nil, fail(ctx, "read PROCESSLIST", err)
	}
	var lw int
	if err := e.admin.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'").Scan(&lw); err != nil {
		return nil, fail(ctx, "read INNODB_TRX", err)
	}
	if lw > 0 {
		out["lock wait"] = lw
	}
	return out, nil
}
