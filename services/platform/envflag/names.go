package envflag

// The variables distill reads, each declared once. A flag backed by one
// names it in its help.
const (
	// Every process.
	Listen      Var = "DISTILL_LISTEN"       // gRPC (or MCP HTTP) listen address
	MetricsAddr Var = "DISTILL_METRICS_ADDR" // Prometheus /metrics address
	LogLevel    Var = "DISTILL_LOG_LEVEL"    // debug, info, warn or error

	// Where the parts of a cluster are.
	Cluster        Var = "DISTILL_CLUSTER"         // 1: the gateway uses the services over the network
	NATSURL        Var = "DISTILL_NATS_URL"        // NATS URLs, comma-separated
	FetcherAddr    Var = "DISTILL_FETCHER_ADDR"    // host:port
	ExtractorAddr  Var = "DISTILL_EXTRACTOR_ADDR"  // host:port
	RendererAddr   Var = "DISTILL_RENDERER_ADDR"   // host:port
	StreamReplicas Var = "DISTILL_STREAM_REPLICAS" // replicas of the job streams and session bucket
	Server         Var = "DISTILL_SERVER"          // a gateway that distill fetch goes through
	CrawlLease     Var = "DISTILL_CRAWL_LEASE"     // how soon a dead gateway's crawls are adopted

	// Fetching and batches.
	Workers  Var = "DISTILL_WORKERS"   // batch jobs run at once by a fetcher process
	AckWait  Var = "DISTILL_ACK_WAIT"  // how long a job may go unanswered
	CacheDir Var = "DISTILL_CACHE_DIR" // the fetch cache's directory
	NoCache  Var = "DISTILL_NO_CACHE"  // a fetcher process without its cache

	// Extracting.
	ExtractMemory Var = "DISTILL_EXTRACT_MEMORY" // MiB the extractions of a process may hold at once
	PDFCacheDir   Var = "DISTILL_PDF_CACHE_DIR"  // where the compiled PDF engine is kept between processes

	// Rendering.
	Chromium          Var = "DISTILL_CHROMIUM"            // the Chromium binary
	ChromiumNoSandbox Var = "DISTILL_CHROMIUM_NO_SANDBOX" // Chromium without its own sandbox
	MaxPages          Var = "DISTILL_MAX_PAGES"           // pages a renderer renders at once
	FallbackNoCookies Var = "DISTILL_FALLBACK_NO_COOKIES" // renders never carry a session's cookies

	// What only the operator may grant a request.
	AllowLocal Var = "DISTILL_ALLOW_LOCAL" // 1: requests may ask for loopback (allow_local)

	// Secrets.
	SessionKey    Var = "DISTILL_SESSION_KEY"    // AES-256 key sealing sessions kept in NATS
	MCPToken      Var = "DISTILL_MCP_TOKEN"      // bearer token of distill mcp --http
	WebhookSecret Var = "DISTILL_WEBHOOK_SECRET" // HMAC key signing the Firecrawl API's webhooks

	// Who may call the gRPC API of distill serve: API tokens may make every
	// call but the operator's (emptying the cache), operator tokens all;
	// comma-separated, or one a line in a file. A client (distill fetch
	// --server) sends its own token.
	APITokens          Var = "DISTILL_API_TOKENS"
	APITokensFile      Var = "DISTILL_API_TOKENS_FILE"
	OperatorTokens     Var = "DISTILL_OPERATOR_TOKENS"
	OperatorTokensFile Var = "DISTILL_OPERATOR_TOKENS_FILE"
	APIToken           Var = "DISTILL_API_TOKEN"

	// Host mode (distill serve/mcp --policy): the policy file, and the LLM
	// provider of extract and summarize, chosen by the operator. The
	// providers' own variables are read as their SDKs name them.
	Policy           Var = "DISTILL_POLICY"
	HostState        Var = "DISTILL_HOST_STATE"   // host mode's state without --cluster: budgets, operations, approvals
	XDGStateHome     Var = "XDG_STATE_HOME"       // where HostState defaults to, under distill/host
	LLMProvider      Var = "DISTILL_LLM_PROVIDER" // openai, anthropic or ollama; empty: the first whose key is set
	LLMModel         Var = "DISTILL_LLM_MODEL"
	OpenAIAPIKey     Var = "OPENAI_API_KEY"
	OpenAIBaseURL    Var = "OPENAI_BASE_URL"
	AnthropicAPIKey  Var = "ANTHROPIC_API_KEY"
	AnthropicBaseURL Var = "ANTHROPIC_BASE_URL"
	OllamaHost       Var = "OLLAMA_HOST"

	// OpenTelemetry's own, which its exporters read; distill mcp checks
	// that spans will not be printed into its stdio stream.
	OTelTracesExporter Var = "OTEL_TRACES_EXPORTER"
)
