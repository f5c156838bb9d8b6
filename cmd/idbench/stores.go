package main

// idbench accepts every lease store idkit ships: importing a store package registers its URL
// schemes for node=…, lease=… and --store.
import (
	_ "github.com/idkit/idkit/schemes/nodeid/etcdlease" // etcd://
	_ "github.com/idkit/idkit/schemes/nodeid/pglease"   // postgres://, postgresql://, pg://
)
