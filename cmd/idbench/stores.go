package main

// idbench accepts every lease store and block store idkit ships: importing a store package
// registers its URL schemes for node=…, lease=…, --store and the segment scheme's store=….
import (
	_ "github.com/idkit/idkit/schemes/nodeid/etcdlease"   // etcd://
	_ "github.com/idkit/idkit/schemes/nodeid/pglease"     // postgres://, postgresql://, pg://
	_ "github.com/idkit/idkit/schemes/segment/mysqlstore" // segment store=mysql://, mariadb://
	_ "github.com/idkit/idkit/schemes/segment/pgstore"    // segment store=pg://, postgres://
	_ "github.com/idkit/idkit/schemes/segment/redisstore" // segment store=redis://, rediss://, redis+unix://
)
