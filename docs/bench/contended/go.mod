module github.com/idkit/idkit/docs/bench/contended

go 1.26.8

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/idkit/idkit v0.0.0
	github.com/sony/sonyflake v1.2.0
)

require (
	github.com/dchest/siphash v1.2.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/oklog/ulid/v2 v2.1.1 // indirect
)

replace github.com/idkit/idkit => ../../..
