// Drives distill's Firecrawl-compatible API with the official Firecrawl JS
// SDK, base URL set to distill. It reads one JSON object on stdin and
// prints one JSON object on stdout:
//
//   {"mode": "check", "apiUrl", "token", "site"}  runs every call the Go
//     test asserts on and reports what the SDK returned or threw;
//   {"mode": "crawl", "apiUrl", "token", "site", "webhook"}  runs the crawl
//     calls, v2 and v1, likewise;
//   {"mode": "model", "apiUrl", "token", "site", "schema"}  runs the json
//     and summary formats and extract, v2 and v1;
//   {"mode": "tools", "apiUrl", "token", "site"}  runs Firecrawl's CLI
//     (firecrawl-cli) and MCP server (firecrawl-mcp, through an MCP client)
//     against distill;
//   {"mode": "watch", "apiUrl", "token", "site"}  watches crawls and batches
//     over the WebSocket the v1 and v2 clients open (run under a Node
//     with a WebSocket, --experimental-websocket before Node 22);
//   {"mode": "bench", "apiUrl", "token", "urls", "concurrency"}  scrapes
//     each URL once, concurrency at a time, and reports each latency.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import Firecrawl from "firecrawl";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const input = JSON.parse(await new Promise((resolve, reject) => {
  let s = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (d) => (s += d));
  process.stdin.on("end", () => resolve(s));
  process.stdin.on("error", reject);
}));

// outcome runs fn and reports its value, or the SDK's error as the SDK
// shapes it.
async function outcome(fn) {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    return { ok: false, status: err.status ?? err.statusCode ?? null, code: err.code ?? null, message: String(err.message ?? err) };
  }
}

async function check({ apiUrl, token, site, webhook }) {
  const fc = new Firecrawl({ apiKey: token, apiUrl });
  const out = {};
  out.scrape = await outcome(() => fc.scrape(`${site}/article`, { formats: ["markdown", "html", "rawHtml", "links", "images"] }));
  out.scrapeMain = await outcome(() => fc.scrape(`${site}/article`, { formats: ["markdown"], onlyMainContent: false, includeTags: ["#aside"], maxAge: 0, timeout: 20000 }));
  out.scrapeExclude = await outcome(() => fc.scrape(`${site}/article`, { formats: ["markdown"], excludeTags: ["nav", "#aside"], onlyMainContent: false }));
  out.batch = await outcome(() => fc.batchScrape([`${site}/page/1`, `${site}/page/2`, `${site}/page/3`], { options: { formats: ["markdown", "links"] }, pollInterval: 1, timeout: 120 }));
  out.webhookStart = await outcome(() => fc.startBatchScrape([`${site}/page/6`], { webhook: { url: webhook, events: ["completed"], metadata: { from: "sdk" } } }));
  out.map = await outcome(() => fc.map(site, { sitemap: "only", limit: 10 }));
  out.badToken = await outcome(() => new Firecrawl({ apiKey: "not-the-token-0123456789", apiUrl, maxRetries: 1 }).scrape(`${site}/article`));
  out.actions = await outcome(() => fc.scrape(`${site}/form`, { formats: ["markdown"], actions: [
    { type: "click", selector: "#q" }, { type: "write", text: "harbour" }, { type: "click", selector: "#go" },
    { type: "executeJavascript", script: "return document.title" }] }));
  out.screenshot = await outcome(() => fc.scrape(`${site}/article`, { formats: ["screenshot"] }));
  out.scrapeAction = await outcome(() => fc.scrape(`${site}/article`, { actions: [{ type: "scrape" }] }));
  out.search = await outcome(() => fc.search("tides"));
  out.crawl = await outcome(() => fc.startCrawl(site, { limit: 5, allowExternalLinks: true }));
  out.blocked = await outcome(() => fc.scrape("http://169.254.169.254/latest/meta-data/"));
  out.timeout = await outcome(() => fc.scrape(`${site}/hang`, { timeout: 1000, autoResume: false }));
  // The v1 client, as LangChain's and older integrations use it.
  out.v1Scrape = await outcome(() => fc.v1.scrapeUrl(`${site}/article`, { formats: ["markdown", "html"] }));
  out.v1Map = await outcome(() => fc.v1.mapUrl(site, { sitemapOnly: true }));
  out.v1Batch = await outcome(() => fc.v1.batchScrapeUrls([`${site}/page/4`, `${site}/page/5`], { formats: ["markdown"] }, 1));
  return out;
}

// settle polls a job until it is no longer scraping.
async function settle(get) {
  for (;;) {
    const st = await get();
    if (st.status !== "scraping") return st;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function crawlChecks({ apiUrl, token, site, webhook }) {
  const fc = new Firecrawl({ apiKey: token, apiUrl });
  const out = {};
  // crawl polls until the job ends and follows next through every page
  // of its documents.
  out.crawl = await outcome(() => fc.crawl(`${site}/docs/`, { limit: 20, maxConcurrency: 2, scrapeOptions: { formats: ["markdown", "links"] }, pollInterval: 1, timeout: 120 }));
  if (out.crawl.ok) out.crawlErrors = await outcome(() => fc.getCrawlErrors(out.crawl.value.id));
  out.firstPage = await outcome(async () => {
    const { id } = await fc.startCrawl(`${site}/docs/`, { limit: 20 });
    await settle(() => fc.getCrawlStatus(id, { autoPaginate: false }));
    return fc.getCrawlStatus(id, { autoPaginate: false });
  });
  out.cancel = await outcome(async () => {
    const { id } = await fc.startCrawl(`${site}/docs/`, { delay: 1, maxConcurrency: 1 });
    const cancelled = await fc.cancelCrawl(id);
    const status = await settle(() => fc.getCrawlStatus(id));
    return { cancelled, status: status.status, completed: status.completed };
  });
  out.webhookStart = await outcome(() => fc.startCrawl(`${site}/docs/`, { limit: 2, webhook: { url: webhook, metadata: { from: "sdk-crawl" } } }));
  out.prompt = await outcome(() => fc.startCrawl(`${site}/docs/`, { prompt: "only the docs" }));
  out.unknown = await outcome(() => fc.getCrawlStatus("no-such-crawl"));
  // The v1 client.
  out.v1Crawl = await outcome(() => fc.v1.crawlUrl(`${site}/docs/`, { limit: 3, maxDepth: 1, scrapeOptions: { formats: ["markdown"] } }, 1));
  out.v1Cancel = await outcome(async () => {
    const started = await fc.v1.asyncCrawlUrl(`${site}/docs/`, { delay: 1, maxConcurrency: 1 });
    const cancelled = await fc.v1.cancelCrawl(started.id);
    const errors = await fc.v1.checkCrawlErrors(started.id);
    return { cancelled, errors };
  });
  return out;
}

async function modelChecks({ apiUrl, token, site, schema }) {
  const fc = new Firecrawl({ apiKey: token, apiUrl });
  const out = {};
  out.json = await outcome(() => fc.scrape(`${site}/article`, { formats: ["markdown", { type: "json", schema, prompt: "what is it about" }] }));
  out.summary = await outcome(() => fc.scrape(`${site}/article`, { formats: ["summary"] }));
  out.extract = await outcome(() => fc.extract({ urls: [`${site}/page/1`, `${site}/page/2`], schema, prompt: "the topic", pollInterval: 1, timeout: 60 }));
  out.webSearch = await outcome(() => fc.extract({ urls: [`${site}/page/1`], prompt: "the topic", enableWebSearch: true }));
  out.v1Extract = await outcome(() => fc.v1.extract([`${site}/page/1`], { schema, prompt: "the topic" }));
  out.v1Json = await outcome(() => fc.v1.scrapeUrl(`${site}/article`, { formats: ["json"], jsonOptions: { schema } }));
  return out;
}

// cli runs firecrawl-cli with args and reports its exit and output.
async function cli(args, { apiUrl, token }) {
  try {
    const { stdout } = await promisify(execFile)(process.execPath,
      ["node_modules/firecrawl-cli/dist/index.js", ...args, "--api-url", apiUrl, "-k", token],
      { timeout: 120000, maxBuffer: 16 << 20, env: { ...process.env, HOME: process.env.TMPDIR ?? "/tmp", FIRECRAWL_NO_TELEMETRY: "1" } });
    return { ok: true, value: stdout };
  } catch (err) {
    return { ok: false, status: err.code ?? null, message: String(err.stderr || err.stdout || err.message) };
  }
}

async function toolChecks(input) {
  const { apiUrl, token, site } = input;
  const out = {};
  out.cliScrape = await cli(["scrape", `${site}/article`, "-f", "markdown,links"], input);
  out.cliMap = await cli(["map", site], input);
  out.cliCrawl = await cli(["crawl", `${site}/docs/`, "--wait", "--poll-interval", "1", "--limit", "20"], input);
  out.cliSearch = await cli(["search", "tides"], input);

  const transport = new StdioClientTransport({
    command: process.execPath, args: ["node_modules/firecrawl-mcp/dist/index.js"], stderr: "pipe",
    env: { ...process.env, FIRECRAWL_API_URL: apiUrl, FIRECRAWL_API_KEY: token },
  });
  const client = new Client({ name: "distill-test", version: "1" });
  await client.connect(transport);
  const call = (name, args) => outcome(() => client.callTool({ name, arguments: args }));
  out.mcpScrape = await call("firecrawl_scrape", { url: `${site}/article`, formats: ["markdown"] });
  out.mcpMap = await call("firecrawl_map", { url: site, sitemap: "only" });
  out.mcpCrawl = await call("firecrawl_crawl", { url: `${site}/docs/`, limit: 20 });
  const started = out.mcpCrawl.ok ? JSON.parse(out.mcpCrawl.value.content[0].text) : null;
  if (started?.id) {
    let status;
    for (let i = 0; i < 120; i++) {
      status = await call("firecrawl_check_crawl_status", { id: started.id });
      if (!status.ok || !JSON.parse(status.value.content[0].text).status?.match(/scraping/)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    out.mcpCrawlStatus = status;
  }
  out.mcpSearch = await call("firecrawl_search", { query: "tides" });
  await client.close();
  return out;
}

async function bench({ apiUrl, token, urls, concurrency }) {
  const fc = new Firecrawl({ apiKey: token, apiUrl });
  const latencies = new Array(urls.length);
  let next = 0, failed = 0, firstError = null;
  const started = performance.now();
  async function worker() {
    while (next < urls.length) {
      const i = next++;
      const t0 = performance.now();
      try {
        await fc.scrape(urls[i], { formats: ["markdown"] });
      } catch (err) {
        failed++;
        firstError ??= String(err.message ?? err);
      }
      latencies[i] = performance.now() - t0;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { elapsedMs: performance.now() - started, latenciesMs: latencies, failed, firstError };
}

// recordSockets wraps the WebSocket the SDK opens, to report what each
// one saw: its URL, the subprotocol agreed, the types of its messages and
// how it closed. Without it the v2 watcher's polling fallback could pass
// for its watch.
function recordSockets() {
  const seen = [];
  const Base = globalThis.WebSocket;
  if (typeof Base !== "function") throw new Error("this Node has no WebSocket: run it with --experimental-websocket");
  globalThis.WebSocket = class extends Base {
    constructor(url, protocols) {
      super(url, protocols);
      const rec = { url: String(url), protocol: null, messages: [], close: null };
      seen.push(rec);
      this.addEventListener("open", () => { rec.protocol = this.protocol; });
      this.addEventListener("message", (ev) => {
        try {
          const m = JSON.parse(typeof ev.data === "string" ? ev.data : Buffer.from(ev.data).toString());
          rec.messages.push(m.type === "catchup" ? `catchup:${m.data?.status}` : m.type);
        } catch { rec.messages.push("?"); }
      });
      this.addEventListener("close", (ev) => { rec.close = { code: ev.code, reason: ev.reason }; });
    }
  };
  return seen;
}

// v1Watch follows a v1 CrawlWatcher to its done or error event.
function v1Watch(w) {
  return new Promise((resolve) => {
    const docs = [];
    let ended = false;
    // Closing a socket that failed fires its error again: end once.
    const end = (r) => { if (ended) return; ended = true; clearTimeout(timer); w.close(); resolve({ docs, ...r }); };
    const timer = setTimeout(() => end({ event: "timeout" }), 120000);
    w.addEventListener("document", (ev) => docs.push(ev.detail.metadata?.sourceURL));
    w.addEventListener("done", (ev) => end({ event: "done", status: ev.detail.status }));
    w.addEventListener("error", (ev) => end({ event: "error", error: ev.detail.error }));
  });
}

// v2Watch follows the v2 client's watcher to its done or error event.
async function v2Watch(fc, id, kind) {
  const w = fc.watcher(id, { kind, pollInterval: 1, timeout: 120 });
  const out = { docs: [], event: null };
  w.on("document", (d) => out.docs.push(d.metadata?.sourceURL));
  w.on("done", (e) => { out.event ??= "done"; out.status = e.status; });
  w.on("error", (e) => { out.event ??= "error"; out.error = e.error; });
  await w.start();
  w.close();
  return out;
}

async function watchChecks({ apiUrl, token, site }) {
  const sockets = recordSockets();
  const fc = new Firecrawl({ apiKey: token, apiUrl });
  const out = {};
  // Each check names the sockets it opened.
  const watched = async (fn) => {
    const from = sockets.length;
    const r = await outcome(fn);
    // A socket's close event may come a moment after the SDK is done.
    for (let i = 0; i < 50 && sockets.slice(from).some((s) => !s.close); i++) await new Promise((res) => setTimeout(res, 100));
    r.sockets = sockets.slice(from);
    return r;
  };
  out.v2Crawl = await watched(async () => {
    const { id } = await fc.startCrawl(`${site}/docs/`, { limit: 20, maxConcurrency: 1, delay: 0.2 });
    return { id, ...(await v2Watch(fc, id, "crawl")) };
  });
  out.v2Batch = await watched(async () => {
    const { id } = await fc.startBatchScrape([`${site}/page/1`, `${site}/page/2`, `${site}/page/3`], { options: { formats: ["markdown"] } });
    return { id, ...(await v2Watch(fc, id, "batch")) };
  });
  out.v2Cancelled = await watched(async () => {
    const { id } = await fc.startCrawl(`${site}/docs/`, { delay: 1, maxConcurrency: 1 });
    const watching = v2Watch(fc, id, "crawl");
    await fc.cancelCrawl(id);
    return watching;
  });
  out.v2Unknown = await watched(() => v2Watch(fc, "00000000-0000-4000-8000-000000000000", "crawl"));
  out.v1Crawl = await watched(async () => v1Watch(await fc.v1.crawlUrlAndWatch(`${site}/docs/`, { limit: 20, maxConcurrency: 1, delay: 0.2 })));
  out.v1Batch = await watched(async () => v1Watch(await fc.v1.batchScrapeUrlsAndWatch([`${site}/page/4`, `${site}/page/5`], { formats: ["markdown"] })));
  let Watcher = null;
  out.v1Cancelled = await watched(async () => {
    const w = await fc.v1.crawlUrlAndWatch(`${site}/docs/`, { delay: 1, maxConcurrency: 1 });
    Watcher = w.constructor;
    const watching = v1Watch(w);
    await fc.v1.cancelCrawl(w.id);
    return watching;
  });
  // The v1 client has no call that watches a job by id: its watcher's
  // class, from the one above, does.
  out.v1Unknown = await watched(() => v1Watch(new Watcher("00000000-0000-4000-8000-000000000000", fc.v1)));
  const bad = new Firecrawl({ apiKey: "not-the-token-0123456789", apiUrl });
  out.v1BadToken = await watched(() => v1Watch(new Watcher(out.v2Crawl.value?.id ?? "x", bad.v1)));
  out.v2BadToken = await watched(() => v2Watch(bad, out.v2Crawl.value?.id ?? "x", "crawl"));
  return out;
}

const modes = { check, crawl: crawlChecks, model: modelChecks, tools: toolChecks, watch: watchChecks, bench };
const result = await modes[input.mode](input);
process.stdout.write(JSON.stringify(result));
