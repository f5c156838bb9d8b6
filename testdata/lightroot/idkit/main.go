// Command idkit is the light-root check's program written against idkit: it imports the root
// package alone and makes one ID of each built-in scheme family. deps_test.go compares its
// dependencies and binary size with ../direct, the same program against the three libraries.
// With an argument it prints what New says of that spec instead.
package main

import (
	"fmt"
	"os"

	"github.com/idkit/idkit"
)

func main() {
	specs := []string{"ulid", "uuidv7", "sonyflake", "snowflake:layout=discord,worker=1"}
	if len(os.Args) > 1 {
		_, err := idkit.New(os.Args[1])
		fmt.Println(err)
		return
	}
	for _, spec := range specs {
		s, err := idkit.New(spec)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		id, err := s.Next()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(spec, id)
	}
}
