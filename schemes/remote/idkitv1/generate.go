// Package idkitv1 holds the protocol of the idkit ID service (idkit.proto) and the Go code
// generated from it: the messages (protoc-gen-go), the gRPC client and server
// (protoc-gen-go-grpc, for google.golang.org/grpc) and the Connect client and handler
// (protoc-gen-connect-go, in idkitv1connect), which speak gRPC, gRPC-Web and the Connect
// protocol. Clients in other languages generate theirs from idkit.proto with their stock
// gRPC tools.
package idkitv1

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative --connect-go_out=. --connect-go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative idkit.proto
