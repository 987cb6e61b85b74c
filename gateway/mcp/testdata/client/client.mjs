// A client of `distill mcp` built on the official MCP TypeScript SDK, for
// gateway/mcp's Go tests. It takes one JSON argument:
//
//   {"transport": "stdio", "command": "/path/distill", "args": ["mcp", ...],
//    "pages": {"article": URL, "a": URL, "b": URL, "order": URL, "grid": URL, "more": URL, "brand": URL},
//    "sessions": false, "browser": false, "reading": false}
//   {"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "token": "...", ...}
//
// With "host": true it makes host mode's calls instead.
//
// lists the tools, makes a fixed set of calls, and prints one JSON report on
// stdout: {"tools": [{name, params, required}], "calls": {label: outcome}},
// where an outcome is {isError, texts, blocks} or {protocolError}; blocks
// describe every content block, images and resources included. The Go test
// judges the report; this script only records what the server said.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const config = JSON.parse(process.argv[2]);

function transport() {
  if (config.transport === "stdio") {
    return new StdioClientTransport({ command: config.command, args: config.args, stderr: "inherit" });
  }
  return new StreamableHTTPClientTransport(new URL(config.url), {
    requestInit: { headers: { Authorization: `Bearer ${config.token}` } },
  });
}

async function call(client, name, args) {
  try {
    const res = await client.callTool({ name, arguments: args });
    return {
      isError: res.isError === true,
      texts: res.content.filter((c) => c.type === "text").map((c) => c.text),
      blocks: res.content.map((c) => ({
        type: c.type,
        mimeType: c.mimeType ?? c.resource?.mimeType ?? "",
        data: c.data ?? c.resource?.blob ?? "",
      })),
    };
  } catch (err) {
    return { protocolError: String(err.message ?? err) };
  }
}

const client = new Client({ name: "distill-test-client", version: "1.0.0" });
await client.connect(transport());

const report = { tools: [], calls: {} };
const { tools } = await client.listTools();
for (const t of tools) {
  report.tools.push({
    name: t.name,
    params: Object.keys(t.inputSchema.properties ?? {}),
    required: t.inputSchema.required ?? [],
    readOnly: t.annotations?.readOnlyHint === true,
    destructive: t.annotations?.destructiveHint === true,
    title: t.title ?? t.annotations?.title ?? "",
  });
}

const { article, a, b } = config.pages;
const calls = report.calls;
if (config.host) {
  // Host mode (distill mcp --policy): only the host's tools, no allow_local.
  calls.inspect = await call(client, "inspect", { url: article, instruction: "crab notes" });
  calls.inspect_allow_local = await call(client, "inspect", { url: article, allow_local: true });
  calls.inspect_off_list = await call(client, "inspect", { url: "https://example.com/" });
  calls.extract = await call(client, "extract_product", { url: article, max_bytes: "512" });
  calls.fetch_url = await call(client, "fetch_url", { url: article, allow_local: true });
  const act = { url: article, method: "click", selector: "a", description: "open the first link" };
  calls.act_unapproved = await call(client, "act", { ...act, approval_id: "never-made" });
  calls.act_no_approval = await call(client, "act", act);
  calls.act_bad_method = await call(client, "act", { ...act, approval_id: "x", method: "drag" });
  calls.inspect_operation = await call(client, "inspect", { url: article, operation_id: "never-reserved" });
  await client.close();
  process.stdout.write(JSON.stringify(report) + "\n");
  process.exit(0);
}
calls.fetch_markdown = await call(client, "fetch_url", { url: article, allow_local: true });
calls.fetch_json_as_strings = await call(client, "fetch_url", {
  url: article, allow_local: "true", format: "json", stats: "true", max_output_tokens: "50", timeout_secs: "10",
});
calls.observe = await call(client, "observe_url", { url: article, allow_local: true });
calls.batch = await call(client, "fetch_urls", { urls: [a, "http://10.0.0.1/", b], allow_local: true, concurrency: "2" });
calls.map = await call(client, "map", { url: article, allow_local: true, map_limit: "2" });
calls.crawl = await call(client, "crawl", { url: article, allow_local: true, max_pages: "2", query: "fog signal horn" });
calls.bad_param = await call(client, "fetch_url", { url: article, timeout_secs: "abc" });
if (config.pages.grid) {
  const grid = config.pages.grid;
  calls.select_records = await call(client, "select", {
    url: grid, allow_local: true, select: "article.product_pod", fields: { title: "h3 a::attr(title)", price: ".price_color" },
  });
  calls.select_similar = await call(client, "select", { url: grid, allow_local: true, find_text: "kelp forests", similar: "true" });
  calls.select_count = await call(client, "select", { url: grid, allow_local: true, xpath: "count(//article)" });
  calls.select_bad = await call(client, "select", { url: grid, allow_local: true, xpath: "//article[" });
}
calls.unknown_tool = await call(client, "no_such_tool", {});

if (config.sessions) {
  calls.session_start = await call(client, "session_start", { url: article, allow_local: true });
  let id = "";
  try {
    id = JSON.parse(calls.session_start.texts[0]).session_id;
  } catch {
    // Left empty: the Go test reports the failed start.
  }
  calls.session_follow = await call(client, "session_follow", { session_id: id, action_id: "link_0" });
  calls.session_close = await call(client, "session_close", { session_id: id });
  calls.session_follow_closed = await call(client, "session_follow", { session_id: id, action_id: "link_0" });

  // An order: withheld, then sent and rejected with a 422, then corrected.
  calls.order_start = await call(client, "session_start", { url: config.pages.order, allow_local: true, js: "off" });
  let order = "";
  try {
    order = JSON.parse(calls.order_start.texts[0]).session_id;
  } catch {
    // Left empty: the Go test reports the failed start.
  }
  const submit = (qty, confirm) =>
    call(client, "session_submit_form", { session_id: order, form_id: "form_0", values: { qty }, confirm });
  calls.order_withheld = await submit("2", false);
  calls.order_rejected = await submit("0", true);
  calls.order_placed = await submit("2", true);
}

if (config.browser) {
  const more = config.pages.more;
  const steps = [{ type: "click", selector: "#more", repeat: 3 }, { type: "executeJavascript", script: "document.querySelectorAll('li').length" }];
  calls.screenshot_png = await call(client, "screenshot", { url: more, allow_local: true, steps });
  calls.screenshot_full_jpeg = await call(client, "screenshot", { url: more, allow_local: true, full_page: "true", format: "jpeg" });
  calls.screenshot_pdf = await call(client, "screenshot", { url: more, allow_local: true, format: "pdf" });
  calls.fetch_steps = await call(client, "fetch_url", { url: more, allow_local: true, steps: JSON.stringify(steps), capture_network: "items" });
  calls.fetch_step_fails = await call(client, "fetch_url", {
    url: more, allow_local: true, steps: [{ type: "waitForSelector", selector: "#never", milliseconds: 200 }],
  });

  // A session signs in by steps: withheld, then confirmed.
  calls.act_start = await call(client, "session_start", { url: config.pages.login, allow_local: true, js: "off" });
  let id = "";
  try {
    id = JSON.parse(calls.act_start.texts[0]).session_id;
  } catch {
    // Left empty: the Go test reports the failed start.
  }
  const signIn = [{ type: "type", selector: "#user", value: "alice" }, { type: "click", selector: "#go" }];
  calls.act_withheld = await call(client, "session_act", { session_id: id, steps: signIn });
  calls.act_confirmed = await call(client, "session_act", { session_id: id, steps: signIn, confirm: true });
  calls.act_members = await call(client, "session_observe", { session_id: id, url: config.pages.members });
  calls.act_more = await call(client, "session_observe", { session_id: id, url: more });
  calls.act_clicks = await call(client, "session_act", { session_id: id, steps });
}

if (config.reading) {
  calls.read_query = await call(client, "fetch_url", {
    url: article, allow_local: true, query: "how many nights was the lamp lit in November?", diagnostics: true,
  });
  calls.read_chunks = await call(client, "fetch_url", { url: article, allow_local: true, chunk: 24, chunk_overlap: "6" });
  calls.read_citations = await call(client, "fetch_url", { url: article, allow_local: true, citations: "true" });
  calls.read_llm = await call(client, "fetch_url", { url: article, allow_local: true, format: "llm" });
  calls.read_html = await call(client, "fetch_url", { url: article, allow_local: true, format: "html" });
  calls.read_batch = await call(client, "fetch_urls", { urls: [article, a], allow_local: true, chunk: 32, query: "lamp beam" });
  calls.read_batch_llm = await call(client, "fetch_urls", { urls: [article], allow_local: true, format: "llm" });
  calls.read_bad_chunk = await call(client, "fetch_url", { url: article, allow_local: true, chunk: 4 });

  // The article's JSON now, then the same with an older price of light:
  // the first diff finds nothing, the second the edit.
  const before = await call(client, "fetch_url", { url: article, allow_local: true, format: "json" });
  const json = before.texts?.[0] ?? "{}";
  calls.diff_unchanged = await call(client, "diff", { url: article, allow_local: true, diff_with: json });
  const edited = JSON.parse(json);
  edited.title = "Keeping the Old Lamp";
  edited.markdown = (edited.markdown ?? "").replace("| November | 30 |", "| November | 12 |");
  calls.diff_changed = await call(client, "diff", { url: article, allow_local: true, diff_with: JSON.stringify(edited) });
  calls.brand = await call(client, "brand", { url: config.pages.brand, allow_local: true });
}

await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
