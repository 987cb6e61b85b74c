// Reads a WARC file with webrecorder's warcio and prints, as JSON, what
// the Go tests check: each record's WARC headers, the SHA-1 of its block
// and of its payload as warcio hands them over, and its HTTP status,
// headers and content as warcio decodes them.
//
// usage: node read.mjs FILE
import { createHash } from "node:crypto";
import fs from "node:fs";

import { WARCParser } from "warcio";

const file = process.argv[2];

function sha1(bytes) {
  return createHash("sha1").update(bytes).digest("hex");
}

// Three passes, because warcio lets a record's content be read once: the
// block whole (no HTTP parsing), the payload raw, and the content decoded.
async function* records(opts) {
  const parser = new WARCParser(fs.createReadStream(file), opts);
  for await (const record of parser) {
    yield record;
  }
}

const out = [];
for await (const record of records({ parseHttp: false })) {
  const h = (name) => record.warcHeader(name) ?? "";
  out.push({
    type: record.warcType,
    id: h("WARC-Record-ID"),
    target: record.warcTargetURI ?? "",
    date: h("WARC-Date"),
    concurrentTo: h("WARC-Concurrent-To"),
    warcinfoID: h("WARC-Warcinfo-ID"),
    truncated: h("WARC-Truncated"),
    ip: h("WARC-IP-Address"),
    contentLength: Number(h("Content-Length")),
    blockDigest: h("WARC-Block-Digest"),
    payloadDigest: h("WARC-Payload-Digest"),
    blockSha1: sha1(await record.readFully(false)),
  });
}

let i = 0;
for await (const record of records({ parseHttp: true })) {
  const r = out[i++];
  if (record.httpHeaders) {
    r.payloadSha1 = sha1(await record.readFully(false));
    r.status = record.httpHeaders.statusCode ?? 0;
    r.method = record.httpHeaders.method ?? "";
    r.httpHeaders = Object.fromEntries(record.httpHeaders.headers.entries());
  }
}

i = 0;
for await (const record of records({ parseHttp: true })) {
  const r = out[i++];
  r.text = await record.contentText();
}

process.stdout.write(JSON.stringify(out));
