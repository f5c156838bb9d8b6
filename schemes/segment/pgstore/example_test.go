package pgstore_test

import (
	"fmt"

	"github.com/idkit/idkit/schemes/segment/pgstore"
)

// ExampleParseURL: the query of a store URL is read strictly. A key given twice, a ';' and an
// unknown key are errors naming the parameter, and the password never shows.
func ExampleParseURL() {
	for _, u := range []string{
		"pg://app:hunter2@db.internal/ids?table=seg&sslmode=require",
		"pg://app:hunter2@db.internal/ids?table=a&table=b",
		"pg://app:hunter2@db.internal/ids?table=seg;unsafe=true",
		"pg://app:hunter2@db.internal/ids?tabel=seg",
	} {
		s, err := pgstore.ParseURL(u)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(s.Table, s.Unsafe)
	}
	// Output:
	// seg false
	// pgstore: pglease: store URL: bad URL query: parameter "table" given twice
	// pgstore: pglease: store URL: bad URL query: parameter "table=seg;unsafe=true": ';' is not a separator, use '&' (or %3B inside a value)
	// pgstore: pglease: store URL: bad URL query: unknown parameter "tabel" (the store takes namespace, table, unsafe, durability, pgx's connection parameters (sslmode, connect_timeout, …) and the settings application_name, search_path, options, client_encoding, timezone, statement_timeout, lock_timeout and idle_in_transaction_session_timeout)
}
