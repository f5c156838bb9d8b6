// Package spannertest checks idkit's keys for Spanner against the Cloud Spanner emulator
// (google-cloud-cli-spanner-emulator, part of the Google Cloud SDK), started on loopback
// through its REST gateway with plain net/http and JSON: Spanner's BIT_REVERSE(x, true) and
// bit_reversed_positive sequences against reverse=true, and idkit IDs of every 64-bit layout
// preset and UUIDs written to a table and read back. It lives outside the root package,
// which never imports a network stack, and holds only tests.
package spannertest
