package envflag

// Where the processes of a cluster listen, and find each other, when no
// flag or variable says otherwise: on loopback, so that a cluster on one
// machine (make cluster-up) needs no flags and exposes nothing. A
// deployment sets each address explicitly.
const (
	DefaultGatewayAddr   = "127.0.0.1:7000"
	DefaultFetcherAddr   = "127.0.0.1:7001"
	DefaultExtractorAddr = "127.0.0.1:7002"
	DefaultRendererAddr  = "127.0.0.1:7003"
	DefaultNATSURL       = "nats://127.0.0.1:4222"
)
