# distill — run `make help` for the targets.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BIN      := $(CURDIR)/bin
MODULES  := proto services/platform services/fetcher services/extractor services/renderer gateway
PACKAGES := $(addprefix ./,$(addsuffix /...,$(MODULES)))
# The extraction benchmark is a module of its own, outside go.work, so that
# the services never depend on the peers it measures.
BENCH_MODULE := services/extractor/bench
# The Kubernetes manifests' tests, also outside go.work: kustomize and the
# Kubernetes API stay out of the services' dependencies. They run on one
# goroutine, so without -race, whose build of kustomize takes minutes.
K8S_MODULE := deploy/k8s
# Every module, each with its own go.mod: the workspace's, the pinned tools
# and the two outside go.work.
TOOLS_MODULE := proto/tools
ALL_MODULES := $(MODULES) $(TOOLS_MODULE) $(BENCH_MODULE) $(K8S_MODULE)
# The tools pinned in proto/tools/go.mod: code generation, and staticcheck
# for lint (one tool module, so one `make tools`).
TOOLS    := $(BIN)/buf $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc $(BIN)/protoc-gen-openapiv2 $(BIN)/staticcheck
# distill's own house rules (proto/tools/lint), run by go vet as its vettool.
HOUSE_LINT := $(BIN)/distill-lint
# The functions allowed past lint.MaxFuncLines, each with its reason.
LONG_FUNCS := $(CURDIR)/proto/tools/lint/long-functions.txt
# The whole suite runs every test every time (-count=1): it is the gate,
# and its tests run Chromium, Node and the binaries below, which Go's test
# cache does not see. The short loop lets the cache answer for packages
# whose code, files and environment did not change.
GOTEST_FLAGS ?= -race -count=1
GOTEST_SHORT_FLAGS ?= -race -short
URL  ?=
ARGS ?=
# One version for every binary (User-Agent, distill version, MCP, telemetry),
# with the commit (+dirty when the work tree has changes) and the build
# time, which `distill version` prints; the Dockerfiles take them as the
# VERSION, COMMIT and BUILD_DATE build arguments.
VERSION ?= 0.1.0+$(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
COMMIT := $(shell c=$$(git rev-parse HEAD 2>/dev/null) || { echo unknown; exit; }; \
	git diff --quiet HEAD -- 2>/dev/null || c=$$c+dirty; echo $$c)
BUILD_DATE := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := distill.dev/services/platform/version
LDFLAGS := -X $(VERSION_PKG).stamp=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT) -X $(VERSION_PKG).date=$(BUILD_DATE)
GOBUILD := go build -ldflags "$(LDFLAGS)"

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-15s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build distill and the service binaries into bin/.
	$(GOBUILD) -o $(BIN)/distill ./gateway/cmd/distill
	$(GOBUILD) -o $(BIN)/fetcher ./services/fetcher/cmd/fetcher
	$(GOBUILD) -o $(BIN)/extractor ./services/extractor/cmd/extractor
	$(GOBUILD) -o $(BIN)/renderer ./services/renderer/cmd/renderer

.PHONY: install
# go install puts distill in GOBIN, else GOPATH/bin, which a fresh Go
# install does not add to PATH: say so, since MCP clients start distill by
# name.
install: ## Install distill with go install, so that `distill` (and an MCP client's configuration) finds it on PATH.
	go install -ldflags "$(LDFLAGS)" ./gateway/cmd/distill
	@dir=$$(go env GOBIN); dir=$${dir:-$$(go env GOPATH)/bin}; \
	echo "installed $$dir/distill"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not on your PATH: add it (export PATH=\"$$dir:\$$PATH\") for distill and MCP clients to find it" >&2 ;; esac

# make cluster-up keeps its processes' pids, logs, NATS's store and the
# gateway's session key here.
CLUSTER_DIR := $(CURDIR)/.cluster

.PHONY: cluster-up
cluster-up: build ## Run distill in cluster mode on loopback: NATS with JetStream on 4222, fetcher 7001, extractor 7002, renderer 7003, gateway 7000.
	go build -o $(BIN)/nats-server github.com/nats-io/nats-server/v2
	BIN=$(BIN) STATE=$(CLUSTER_DIR) deploy/local/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop what make cluster-up started.
	BIN=$(BIN) STATE=$(CLUSTER_DIR) deploy/local/cluster.sh down

.PHONY: run
# The URL reaches distill through the environment, never through the
# shell's parsing of the recipe: a query's & and ;, quotes, spaces and $
# arrive as typed ($(value) keeps make from expanding a $ in it too).
# ARGS is split into words, as flags are.
run: export RUN_URL = $(value URL)
run: ## Fetch URL and print it as Markdown: make run URL='https://example.com/?a=1&b=2' [ARGS="--format json"].
	@test -n "$$RUN_URL" || { echo 'usage: make run URL=https://example.com/ [ARGS="--format json"]' >&2; exit 2; }
	$(GOBUILD) -o $(BIN)/distill ./gateway/cmd/distill
	$(BIN)/distill fetch $(ARGS) "$$RUN_URL"

.PHONY: test
test: check-generate lint go-test ## The whole test suite: generated code, lint, and every module's tests.

# The MCP tests drive `distill mcp` with the official TypeScript MCP client,
# whose packages are pinned by its package-lock.json.
MCP_CLIENT := gateway/mcp/testdata/client

.PHONY: go-test
go-test: mcp-client warc-reader firecrawl-sdk test-binaries ## Run every module's Go tests, and the hostile pages' megabyte tests again without -race.
	$(call go-tests,$(GOTEST_FLAGS))

.PHONY: test-short
test-short: TEST_BINARIES := ./gateway/cmd/distill
test-short: TEST_NATS :=
test-short: TEST_BUILD_FLAGS := $(filter -race,$(GOTEST_SHORT_FLAGS))
test-short: test-binaries ## Every module's tests but the end-to-end ones, the TypeScript MCP client's and the hostile pages', cached: the loop while working.
	$(call go-tests,$(GOTEST_SHORT_FLAGS))

# go-tests runs every module's tests with the flags $(1): the benchmark's,
# the Kubernetes manifests' and the house lint's (proto/tools) beside the
# workspace's. Those three run without -race: the Kubernetes manifests' for
# kustomize (see K8S_MODULE); the benchmark's and the lint's because their
# code starts no goroutine, so the detector would have nothing to watch.
# MODULES lists each module after those it depends on; go test gets them
# the other way round, so that it starts the slowest, the gateway's
# end-to-end tests, first. TEST_PROCS test binaries run at once, twice the
# cores: the slow ones mostly wait on Chromium, Node, processes and timers.
reverse = $(if $(1),$(call reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
TEST_PACKAGES := $(strip $(call reverse,$(PACKAGES)))
TEST_PROCS ?= $(shell echo $$(( $$(nproc) * 2 )))
define go-tests
status=0; \
(cd $(BENCH_MODULE) && GOWORK=off go test $(filter-out -race,$(1)) ./...) & bench=$$!; \
(cd $(K8S_MODULE) && GOWORK=off go test $(filter-out -race,$(1)) ./...) & k8s=$$!; \
(cd $(TOOLS_MODULE) && GOWORK=off go test $(filter-out -race,$(1)) ./...) & tools=$$!; \
($(or $(call hostile-tests,$(1)),true)) & hostile=$$!; \
$(TEST_ENV) go test -p $(TEST_PROCS) $(1) $(TEST_PACKAGES) || status=1; \
wait $$bench || status=1; \
wait $$k8s || status=1; \
wait $$tools || status=1; \
wait $$hostile || status=1; \
exit $$status
endef

# The extractor's hostile pages of a megabyte and more skip under the race
# detector, which takes minutes over each: a run with -race runs those
# tests again without it, beside the rest (about a minute of CPU). A run
# without -race has them already, and a short run skips them.
HOSTILE_TESTS := ^(TestHostilePages|TestHostileReading)$$
hostile-tests = $(if $(filter -race,$(1)),$(if $(filter -short,$(1)),,go test $(filter-out -race,$(1)) -run '$(HOSTILE_TESTS)' ./services/extractor/extract))

# The binaries the end-to-end and MCP tests run (localcluster.Binaries),
# built once per run for every package, which find them through
# DISTILL_TEST_BIN. They are built with -race when the tests run with it:
# the packages are then compiled once for both, and the race detector
# watches the processes too. Without the version stamp, and replaced only
# when they changed, so that Go's test cache, which keys a result on the
# files a test opened, sees them unchanged when they are.
TEST_BIN         := $(BIN)/test
# Compiling the PDF engine (PDFium, WebAssembly) costs seconds of CPU, and a
# minute or more under the race detector: test-binaries compiles it once,
# into TEST_PDF_CACHE, and every test process that reads a PDF loads it from
# there (pdftest.CacheDir). The directory outlives the run, as bin/ does.
# A test binary compiles it, not bin/test/distill: wazero files compiled code
# under the wazero version the binary reports, and test binaries, which
# carry no module versions, report another than built commands do.
TEST_PDF_CACHE   := $(TEST_BIN)/pdfium
TEST_ENV         := DISTILL_TEST_BIN=$(TEST_BIN) DISTILL_PDF_CACHE_DIR=$(TEST_PDF_CACHE)
TEST_BUILD_FLAGS  = $(filter -race,$(GOTEST_FLAGS))
TEST_BINARIES    := ./gateway/cmd/distill ./services/fetcher/cmd/fetcher ./services/extractor/cmd/extractor \
	./services/renderer/cmd/renderer
# NATS's server is not ours: never with the race detector (its races are
# not distill's to fail on, and it runs faster without).
TEST_NATS        := github.com/nats-io/nats-server/v2

.PHONY: test-binaries
test-binaries: ## Build the binaries the tests run into bin/test (make test and make test-short do).
	go build $(TEST_BUILD_FLAGS) -o $(TEST_BIN)/build/ $(TEST_BINARIES)
	$(if $(TEST_NATS),go build -o $(TEST_BIN)/build/ $(TEST_NATS))
	@for f in $(TEST_BIN)/build/*; do cmp -s "$$f" "$(TEST_BIN)/$${f##*/}" || cp -f "$$f" "$(TEST_BIN)/"; done
	$(TEST_ENV) go test $(TEST_BUILD_FLAGS) -count=1 -run '^TestCacheDirKeepsTheCompiledEngine$$' ./services/extractor/pdf

.PHONY: mcp-client
mcp-client: $(MCP_CLIENT)/node_modules/.package-lock.json ## Install the MCP tests' TypeScript client (npm ci).

# npm writes node_modules/.package-lock.json on every install: it is older
# than package-lock.json, or missing, when the packages need installing.
$(MCP_CLIENT)/node_modules/.package-lock.json: $(MCP_CLIENT)/package-lock.json
	npm ci --no-audit --no-fund --prefix $(MCP_CLIENT)
	@touch $@

# The WARC tests read distill's files back with webrecorder's warcio.
WARC_READER := gateway/cli/testdata/warcio

.PHONY: warc-reader
warc-reader: $(WARC_READER)/node_modules/.package-lock.json ## Install the WARC tests' reader, webrecorder's warcio (npm ci).

$(WARC_READER)/node_modules/.package-lock.json: $(WARC_READER)/package-lock.json
	npm ci --no-audit --no-fund --prefix $(WARC_READER)
	@touch $@

# The Firecrawl-compatible API's tests and make bench-http drive distill
# with the official Firecrawl JS SDK, pinned by its package-lock.json.
FIRECRAWL_SDK := gateway/firecrawl/testdata/sdk

.PHONY: firecrawl-sdk
firecrawl-sdk: $(FIRECRAWL_SDK)/node_modules/.package-lock.json ## Install the Firecrawl JS SDK, CLI and MCP server the HTTP API's tests drive (npm ci).

$(FIRECRAWL_SDK)/node_modules/.package-lock.json: $(FIRECRAWL_SDK)/package-lock.json
	npm ci --no-audit --no-fund --prefix $(FIRECRAWL_SDK)
	@touch $@

CORPUS ?= ../shared/bench/scrapinghub

.PHONY: bench-extract
bench-extract: ## Score distill, go-trafilatura and go-readability on one core, per page type: make bench-extract [CORPUS=scrapinghub dir, WCXB split or repo] [BENCH_ARGS="-rounds 1 -worst 20 -type forum"].
	cd services/extractor/bench && GOWORK=off go run ./cmd/bench-extract -corpus $(abspath $(CORPUS)) -out $(CURDIR)/bench-out $(BENCH_ARGS)

# WCXB is the WCXB benchmark's development split the extractor's models
# are trained on; the held-out split is never read.
WCXB ?= ../wcxb/dev

.PHONY: train-blocks
train-blocks: ## Retrain the extractor's block model on the WCXB development split, print its cross-validated word F1 per page type, and rewrite services/extractor/readable/blockmodel.bin: make train-blocks [WCXB=dev split dir] [TRAIN_ARGS="-folds 4"]; after train-pagetype, since it learns the classifier's types.
	cd $(BENCH_MODULE) && GOWORK=off go run ./cmd/train-blocks -corpus $(abspath $(WCXB)) -out $(CURDIR)/services/extractor/readable/blockmodel.bin $(TRAIN_ARGS)

.PHONY: train-pagetype
train-pagetype: ## Retrain the extractor's page-type model on the WCXB development split (never the held-out one), print its cross-validated figures, and rewrite services/extractor/readable/pagetype_model.go: make train-pagetype [WCXB=dev split dir] [TRAIN_ARGS="-folds 5 -l2 0.01"].
	cd services/extractor/bench && GOWORK=off go run ./cmd/train-pagetype -corpus $(abspath $(WCXB)) -out $(CURDIR)/services/extractor/readable/pagetype_model.go $(TRAIN_ARGS)

.PHONY: bench-chunks
bench-chunks: ## Check that no chunk of any page of the shared scrapinghub corpus passes its token bound, at four chunk sizes: make bench-chunks [DISTILL_BENCH_CORPUS=dir].
	cd services/extractor && go test -run '^$$' -bench 'ChunkBoundOnCorpus' -benchtime 1x ./extract

.PHONY: bench-fetch
bench-fetch: ## Batch throughput over the NATS fan-out vs the pipeline called directly, then pages/s and allocations of the fetcher under each browser profile vs net/http over loopback TLS: make bench-fetch [BENCH_ARGS="-count 1000 -concurrency 8 -rounds 5 -fan-out=true -profiles=true"].
	go run ./gateway/bench/cmd/bench-fetch $(BENCH_ARGS)

.PHONY: bench-cluster
bench-cluster: ## Batch URLs/s with 1, 2 and 4 fetcher processes over NATS against the single binary, on loopback: make bench-cluster [BENCH_ARGS="-count 1000 -delay 50ms"].
	cd gateway && go run ./bench/cmd/bench-cluster -root $(CURDIR) $(BENCH_ARGS)

.PHONY: bench-http
bench-http: firecrawl-sdk ## Scrapes through the Firecrawl JS SDK against the Firecrawl-compatible HTTP API vs the same pages through the gRPC API, req/s and p95, on loopback: make bench-http [BENCH_ARGS="-count 1000 -concurrency 4"].
	go run ./gateway/bench/cmd/bench-http -sdk $(FIRECRAWL_SDK) $(BENCH_ARGS)

.PHONY: bench-crawl
bench-crawl: ## Crawl a generated 10,000-page site on 127.0.0.1-N (slow pages, a Crawl-delay, redirects, tracking-parameter duplicates) with distill (single binary; 1, 2 and 4 fetcher processes) and, at the same concurrency and per-host delay, colly and crawlee's CheerioCrawler (npm): pages/s, the most requests a host saw in one delay window, the closest two, duplicate fetches: make bench-crawl [BENCH_ARGS="-hosts 4 -pages 2500 -concurrency 8 -delay 20ms -fetchers 1,2,4"].
	cd gateway && go run ./bench/cmd/bench-crawl $(BENCH_ARGS)

.PHONY: bench-render
bench-render: ## Renders/min, p50 and p95 of the warm renderer pool vs a chromium --dump-dom per page, steps and scrolling vs go-rod with a browser per page, and what --block saves, on loopback: make bench-render [BENCH_ARGS="-renders 200 -concurrency 4 -dump-renders 50 -actions 40 -block 40"].
	go run ./services/renderer/bench/cmd/bench-render $(BENCH_ARGS)

.PHONY: tools
tools: $(TOOLS) ## Build the pinned tools (buf, the protoc plugins, staticcheck) into bin/.

$(TOOLS) &: proto/tools/go.mod proto/tools/go.sum
	cd proto/tools && GOWORK=off GOBIN=$(BIN) go install tool

$(HOUSE_LINT): proto/tools/go.mod proto/tools/go.sum $(wildcard proto/tools/lint/*.go proto/tools/cmd/distill-lint/*.go)
	cd proto/tools && GOWORK=off go build -o $(HOUSE_LINT) ./cmd/distill-lint

# No function over 80 lines outside the allowlist, none over 60 in the
# packages whose work is a list of phases (PHASE_PACKAGES, by package
# name), and no exported package-level var holding a slice or a map
# (proto/tools/lint).
PHASE_PACKAGES := extract,pipeline,render,output,cli
HOUSE_VET := go vet -vettool=$(HOUSE_LINT) -funclen.allow=$(LONG_FUNCS) -funclen.phases=$(PHASE_PACKAGES)

.PHONY: lint-house
lint-house: $(HOUSE_LINT) ## The house rules alone: functions of at most 80 lines (bar the allowlist's), no exported slice or map vars.
	$(HOUSE_VET) $(PACKAGES)
	cd $(BENCH_MODULE) && GOWORK=off $(HOUSE_VET) ./...
	cd $(K8S_MODULE) && GOWORK=off $(HOUSE_VET) ./...

.PHONY: generate
generate: $(TOOLS) ## Regenerate the Go code from proto/.
	$(BIN)/buf generate

.PHONY: check-generate
check-generate: generate ## Fail when the committed generated code is not current.
	@git diff --exit-code --stat -- proto/gen proto/openapi/gen || { echo 'generated code is stale: run make generate and commit' >&2; exit 1; }
	@test -z "$$(git status --porcelain -- proto/gen proto/openapi/gen)" || { git status --porcelain -- proto/gen proto/openapi/gen; echo 'generated files are not committed' >&2; exit 1; }

# The internal contracts (distill.internal.v1) change with the services that
# speak them; only their wire format must hold, for a rolling update in which
# old and new processes share the queues and calls.
INTERNAL_BREAKING := {"version":"v2","modules":[{"path":"proto","excludes":["proto/gen","proto/tools"]}],"breaking":{"use":["WIRE_JSON"]}}

# fmt.Print, Printf and Println write to the process's stdout, which belongs
# to what the user asked for: the CLI's output (gateway/cli, gateway/output)
# and the bench commands' reports (their mains under */cmd/bench-*, and the
# packages that print them). Everything else writes to a writer it is
# given, or logs. The check reads the text of every non-test .go file,
# tracked or not (git-ignored ones and testdata aside), comments included,
# for fmt.Print, fmt.Printf or fmt.Println as a whole word; fmt.Fprint* and
# fmt.Sprint* do not match, nor does fmt imported under another name.
PRINT_PATTERN := \<fmt\.Print(f|ln)?\>
PRINT_ALLOWED := gateway/cli gateway/output **/cmd/bench-* \
	gateway/bench/fetch gateway/bench/cluster services/renderer/bench services/extractor/bench/harness
PRINT_PATHS   := '*.go' ':(exclude)*_test.go' ':(exclude,glob)**/testdata/**' \
	$(foreach d,$(PRINT_ALLOWED),':(exclude,glob)$(d)/**')

# staticcheck with every check on, the style checks it leaves off by default
# (naming, receiver names, empty branches, redundant types) included, less:
# ST1000, a package comment in every package: protoc-gen-go writes none, and
#   buf generate (clean: true) replaces proto/gen whole; the hand-written
#   packages all have one.
# ST1020-ST1022, a doc comment beginning with the name and a space: ours begin
#   with the name but some go on with a comma ("ErrRelease, returned by a
#   Processor, hands the job back"), which reads well and says why.
STATICCHECK := $(BIN)/staticcheck -checks all,-ST1000,-ST1020,-ST1021,-ST1022

.PHONY: lint
lint: $(TOOLS) lint-house ## gofmt, buf format, buf lint, buf breaking against main, go mod tidy, fmt.Print, go vet, the house rules (lint-house) and staticcheck.
	@unformatted=$$(gofmt -l $(MODULES) $(K8S_MODULE)); test -z "$$unformatted" || { echo "gofmt needed:"; echo "$$unformatted"; exit 1; } >&2
	$(BIN)/buf format --diff --exit-code
	$(BIN)/buf lint
	@if git rev-parse --verify -q main >/dev/null && git cat-file -e main:proto/distill/v1 2>/dev/null; then \
		echo "$(BIN)/buf breaking --against '.git#branch=main'"; \
		$(BIN)/buf breaking --against '.git#branch=main' --exclude-path proto/distill/internal; \
		$(BIN)/buf breaking --against '.git#branch=main' --path proto/distill/internal --config '$(INTERNAL_BREAKING)' --against-config '$(INTERNAL_BREAKING)'; \
	else echo "buf breaking: main has no contracts yet, skipped"; fi
	@untidy=; for m in $(ALL_MODULES); do \
		diff=$$(cd $$m && GOWORK=off go mod tidy -diff 2>&1) || { echo "$$m is not tidy:"; echo "$$diff"; untidy="$$untidy $$m"; } >&2; \
	done; test -z "$$untidy" || { echo "go mod tidy needed in:$$untidy (make tidy)"; exit 1; } >&2
	@found=0; git grep --untracked -nE '$(PRINT_PATTERN)' -- $(PRINT_PATHS) >&2 || found=$$?; \
	case $$found in \
		0) echo "fmt.Print writes to stdout: write to the io.Writer the caller gives, or log" >&2; exit 1 ;; \
		1) ;; \
		*) exit $$found ;; \
	esac
	go vet $(PACKAGES)
	cd $(BENCH_MODULE) && GOWORK=off go vet ./...
	cd $(K8S_MODULE) && GOWORK=off go vet ./...
	$(STATICCHECK) $(PACKAGES)
	cd $(BENCH_MODULE) && GOWORK=off $(STATICCHECK) ./...
	cd $(K8S_MODULE) && GOWORK=off $(STATICCHECK) ./...

.PHONY: tidy
tidy: ## go mod tidy in every module.
	for m in $(ALL_MODULES); do (cd $$m && GOWORK=off go mod tidy); done

.PHONY: clean
clean: ## Remove built binaries.
	rm -rf $(BIN)
