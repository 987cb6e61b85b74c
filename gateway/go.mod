module distill.dev/gateway

go 1.26.0

require (
	distill.dev/proto v0.0.0
	distill.dev/services/extractor v0.0.0
	distill.dev/services/fetcher v0.0.0
	distill.dev/services/renderer v0.0.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/nats-io/nats.go v1.55.0 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/grpc v1.85.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace (
	distill.dev/proto => ../proto
	distill.dev/services/extractor => ../services/extractor
	distill.dev/services/fetcher => ../services/fetcher
	distill.dev/services/renderer => ../services/renderer
)
