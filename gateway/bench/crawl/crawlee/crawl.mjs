// crawlee's CheerioCrawler on the sites bench-crawl serves, at the
// concurrency and per-host delay it is given; prints the pages it read,
// per host, as the last line of its output (JSON).
import { CheerioCrawler, Configuration, log, LogLevel } from '@crawlee/cheerio';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  if (i < 0) return def;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const concurrency = Number(opt('--concurrency', '8'));
const delayMs = Number(opt('--delay-ms', '20'));
const depth = Number(opt('--depth', '10'));
const starts = args;

log.setLevel(LogLevel.OFF);
const hosts = new Set(starts.map((s) => new URL(s).host));
const pages = {};
const crawler = new CheerioCrawler({
  // distill runs a crawl per host at --concurrency: the same pages in
  // flight in all.
  maxConcurrency: concurrency * hosts.size,
  sameDomainDelaySecs: delayMs / 1000,
  respectRobotsTxtFile: true,
  maxRequestRetries: 0,
  async requestHandler({ request, enqueueLinks }) {
    const host = new URL(request.loadedUrl ?? request.url).host;
    pages[host] = (pages[host] ?? 0) + 1;
    const d = request.userData.depth ?? 0;
    if (d < depth) {
      await enqueueLinks({ strategy: 'same-hostname', userData: { depth: d + 1 } });
    }
  },
}, new Configuration({ persistStorage: false }));
await crawler.run(starts);
console.log(JSON.stringify({ pages }));
