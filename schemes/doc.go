// Package schemes holds the concrete ID generators behind idkit: the native Snowflake core with
// a configurable layout (see package layouts), and adapters for ULID (github.com/oklog/ulid/v2),
// UUIDv7 and UUIDv4 (github.com/google/uuid) and Sonyflake (github.com/sony/sonyflake).
//
// Generators here return plain values, uint64 for 64-bit schemes and [16]byte for 128-bit ones,
// so that nothing is boxed per ID; package idkit wraps them into its Scheme and ID types. Every
// generator is safe for concurrent use, and its clock and entropy are fields of the instance,
// never package globals.
package schemes
