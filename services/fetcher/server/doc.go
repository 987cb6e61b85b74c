// Package server runs the fetcher process: FetcherService over gRPC, with
// the health and reflection services every distill server has, and, in
// cluster mode, a batch worker that pulls jobs from NATS JetStream and runs
// the pipeline with the extractor and renderer reached over gRPC.
//
// Its module, services/fetcher, is distill's worker-and-orchestration
// module, not only its HTTP client. Fetching a URL under the network
// policy, with robots.txt, the cache and a session's cookies (fetch,
// robots, cache, cookies) is about 3k of its 11.5k lines. Most of the rest
// is orchestration, the work that runs many fetches and the other
// services: pipeline (one URL: fetch, extract, render when needed), crawl
// and crawl/crawljs (a site's pages, in one process or across a cluster),
// mapsite (a site's URLs, from sitemaps and a short crawl), jobs (the
// JetStream workers of batches, and the pull loop crawljs's workers run
// too) and pace (how far apart requests to one host go out). sitemap,
// siteurl and warc are what those read and write.
package server
