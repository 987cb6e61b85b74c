// A client of `distill mcp` built on the official MCP TypeScript SDK, for
// gateway/mcp's Go tests. It takes one JSON argument:
//
//   {"transport": "stdio", "command": "/path/distill", "args": ["mcp", ...],
//    "pages": {"article": URL, "a": URL, "b": URL, "order": URL}, "sessions": false,
//    "reading": false}
//   {"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "token": "...", ...}
//
// lists the tools, makes a fixed set of calls, and prints one JSON report on
// stdout: {"tools": [{name, params, required}], "calls": {label: outcome}},
// where an outcome is {isError, texts} or {protocolError}. The Go test
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
    return { isError: res.isError === true, texts: res.content.map((c) => c.text) };
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
  });
}

const { article, a, b } = config.pages;
const calls = report.calls;
calls.fetch_markdown = await call(client, "fetch_url", { url: article, allow_local: true });
calls.fetch_json_as_strings = await call(client, "fetch_url", {
  url: article, allow_local: "true", format: "json", stats: "true", max_output_tokens: "50", timeout_secs: "10",
});
calls.observe = await call(client, "observe_url", { url: article, allow_local: true });
calls.batch = await call(client, "fetch_urls", { urls: [a, "http://10.0.0.1/", b], allow_local: true, concurrency: "2" });
calls.map = await call(client, "map", { url: article, allow_local: true, map_limit: "2" });
calls.bad_param = await call(client, "fetch_url", { url: article, timeout_secs: "abc" });
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

if (config.reading) {
  calls.read_query = await call(client, "fetch_url", {
    url: article, allow_local: true, query: "how many nights was the lamp lit in November?", diagnostics: true,
  });
  calls.read_chunks = await call(client, "fetch_url", { url: article, allow_local: true, chunk: 24, chunk_overlap: "6" });
  calls.read_citations = await call(client, "fetch_url", { url: article, allow_local: true, citations: "true" });
  calls.read_llm = await call(client, "fetch_url", { url: article, allow_local: true, format: "llm" });
  calls.read_html = await call(client, "fetch_url", { url: article, allow_local: true, format: "html" });
  calls.read_batch = await call(client, "fetch_urls", { urls: [article, a], allow_local: true, chunk: 32, query: "lamp beam" });
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
