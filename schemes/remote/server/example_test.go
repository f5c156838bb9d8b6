package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/idkit/idkit/schemes/remote/server"
)

// An ID service with one generator, asked for three IDs over plain HTTP.
func Example() {
	srv, err := server.New(server.Config{
		Listen:        "127.0.0.1:0", // a free loopback port
		Generators:    []server.Generator{{Name: "orders", Spec: "snowflake:layout=twitter,worker=1"}},
		ShutdownDelay: -1, // no load balancer to tell first: stop at once
	})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	addrs, wait, err := srv.Start(ctx)
	if err != nil {
		panic(err)
	}

	res, err := http.Get("http://" + addrs.HTTP + "/v1/next/orders?n=3")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.Status, len(strings.Fields(string(body))), "IDs")

	stop() // as SIGTERM does in idkitd: drain, then close the generators
	fmt.Println("stopped:", wait())
	// Output:
	// 200 OK 3 IDs
	// stopped: <nil>
}
