// Package nodeid chooses the node number of a Snowflake-family generator and keeps it safe:
// two generators that share a node number and a tick issue the same ID without any error, so
// the node number is the one setting that must never collide.
//
// The sources, from least to most coordination:
//
//   - Check validates a number given in code or a spec; FromEnv reads it from an environment
//     variable. Uniqueness is the operator's job.
//   - FromPrivateIPv4 takes the low bits of the host's private IPv4 address, as Sonyflake does.
//     Hosts whose addresses agree in those bits collide silently; see its doc.
//   - Hold claims the lowest free slot from a lease Store (etcd in package etcdlease,
//     PostgreSQL in package pglease) and keeps it renewed. The returned Lease carries the
//     node number, a schemes.DeadlineFence whose deadline passes before anyone else can
//     claim the slot (a generator issues no ID whose time is past it), and a
//     schemes.MarkStore kept beside the slot.
//
// FileMarks is a schemes.MarkStore in a local file, for static node numbers.
//
// docs/nodes.md describes the lease design and which failures it covers.
package nodeid
