module example.com/docflow-interop

go 1.26.0

// The generated client code (docs/clients.md, "Go"): its package paths come from the
// go_package options in proto/, and the recipe writes it to ./docflowpb.
replace github.com/docflow/docflow-api/gen/go => ./docflowpb

tool (
	google.golang.org/grpc/cmd/protoc-gen-go-grpc
	google.golang.org/protobuf/cmd/protoc-gen-go
)

require (
	github.com/docflow/docflow-api/gen/go v0.0.0-00010101000000-000000000000
	google.golang.org/genproto/googleapis/api v0.0.0-20261104224025-d1e00e9f33ab
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261104224025-d1e00e9f33ab
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/grpc/cmd/protoc-gen-go-grpc v1.6.2 // indirect
)
