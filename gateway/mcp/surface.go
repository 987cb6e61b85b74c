package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/renderer/render"
)

// The tools' parameters, named and defaulted as in the public surface.
// Descriptions are written for the model that calls them.

func def(v int64) json.RawMessage     { return json.RawMessage(strconv.FormatInt(v, 10)) }
func quoted(s string) json.RawMessage { return json.RawMessage(strconv.Quote(s)) }

var defFalse = json.RawMessage("false")

// Parameters that fetching and sessions share.
var (
	profileParam = param{name: "profile", kind: kindEnum, enum: distillv1.Profile(0).Descriptor(), def: quoted("article"),
		desc: "What to keep: article (the main content), full (the whole page less scripts and chrome) or metadata (title, byline, excerpt and a short lead)."}
	timeoutParam = param{name: "timeout_secs", kind: kindInt32, def: def(fetchopts.DefaultTimeoutSecs),
		desc: "Timeout of each request, in seconds."}
	jsParam = param{name: "js", kind: kindEnum, enum: distillv1.JsMode(0).Descriptor(), def: quoted("auto"),
		desc: "Headless browser rendering; auto renders only a page that is an empty script shell or a challenge."}
	jsWaitParam = param{name: "js_wait", kind: kindInt32,
		desc: "Milliseconds a headless render may wait for the page to settle."}
	allowLocalParam = param{name: "allow_local", kind: kindBool, def: defFalse,
		desc: "Permit loopback addresses (127.0.0.1, localhost); private networks stay refused."}
	respectRobotsParam = param{name: "respect_robots", kind: kindBool, def: defFalse,
		desc: "Obey each site's robots.txt; a disallowed URL fails."}
	maxActionsParam = param{name: "max_actions", kind: kindInt32,
		desc: "Keep at most this many entries per action category, form fields and select options."}
	stepsParam = param{name: "steps", kind: kindJSONArray,
		desc: `Steps run in the rendered page before it is read (Firecrawl's actions): click (selector, repeat), type (selector, value), ` +
			`press (key), scroll, wait (milliseconds), waitForSelector, executeJavascript (script), screenshot; e.g. ` +
			`[{"type":"click","selector":"#more","repeat":3}]. The first failing step fails the call, naming it.`}
	scrollParam = param{name: "scroll", kind: kindInt32,
		desc: fmt.Sprintf("Scroll to the end until the page stops growing, at most this many times (an infinite feed); 0 = %d.", fetchopts.DefaultScrolls)}
	blockParam = param{name: "block", kind: kindStrings,
		desc: `Resources the render skips: any of "images", "fonts", "media".`}
)

// browserParams are the browser-work knobs of the reading tools.
var browserParams = []param{
	stepsParam,
	scrollParam,
	{name: "screenshot", kind: kindString,
		desc: "viewport or full: a picture of the page, base64 in format json (the screenshot tool returns an image)."},
	{name: "screenshot_format", kind: kindString, def: quoted("png"),
		desc: "png or jpeg, for screenshot."},
	{name: "pdf", kind: kindBool, def: defFalse,
		desc: "The page printed to PDF, base64 in format json."},
	{name: "mhtml", kind: kindBool, def: defFalse,
		desc: "The page as one MHTML file, base64 in format json."},
	{name: "capture_network", kind: kindString,
		desc: "Return the page's XHR and fetch responses whose URL matches this regular expression (\"\" for all): url, method, status, request headers, text body; at most 100, 1 MB each, 5 MB in all."},
	{name: "capture_types", kind: kindStrings,
		desc: `Types to capture instead of xhr and fetch: document, script, stylesheet, image, font, media, websocket, other.`},
	{name: "capture_credentials", kind: kindBool, def: defFalse,
		desc: "Keep credentials (Authorization, cookies, tokens) in captured requests instead of redacting them."},
	blockParam,
}

// optionParams are the fetch knobs fetch_url, observe_url and fetch_urls
// share.
var optionParams = []param{
	{name: "format", kind: kindEnum, enum: distillv1.Format(0).Descriptor(), def: quoted("markdown"),
		desc: "markdown (readable page), text (plain text), json (the page, its metadata and all asked for), llm (compact, links as numbered citations) or html (cleaned HTML)."},
	profileParam,
	{name: "stats", kind: kindBool, def: defFalse,
		desc: "Report how many tokens the distilled page saves over the raw HTML."},
	{name: "diagnostics", kind: kindBool, def: defFalse,
		desc: "Report extraction quality: content size, counts of links, tables and actions, whether the page was rendered headless, truncated or looks empty."},
	{name: "max_output_tokens", kind: kindInt64, def: def(fetchopts.DefaultMCPMaxOutputTokens),
		desc: "Truncate the page's Markdown or text to about this many tokens; 0 = unlimited."},
	timeoutParam,
	{name: "max_bytes", kind: kindInt64, def: def(fetchopts.DefaultMaxBytes),
		desc: "Largest response body accepted, in bytes after decompression."},
	{name: "no_cache", kind: kindBool, def: defFalse,
		desc: "Fetch fresh: neither read nor write the on-disk cache."},
	{name: "cache_ttl", kind: kindInt64, def: def(fetchopts.DefaultCacheTTLSecs),
		desc: "Seconds a cached copy stays fresh; 0 = always refetch."},
	{name: "extract_links", kind: kindBool, def: defFalse,
		desc: "Also return the main content's links as {href, text} (in format json)."},
	{name: "extract_tables", kind: kindBool, def: defFalse,
		desc: "Also return tables as {headers, rows} (in format json)."},
	{name: "links_full", kind: kindBool, def: defFalse,
		desc: "With extract_links, take every link of the page, not only the main content's; for crawling."},
	jsParam,
	jsWaitParam,
	{name: "js_wait_for", kind: kindString,
		desc: "CSS selector a headless render waits for before reading the page."},
	allowLocalParam,
	{name: "max_retries", kind: kindInt32, def: def(fetchopts.DefaultMaxRetries),
		desc: "Retries of a transient failure (connection error, timeout, 429, 5xx)."},
	{name: "per_host_concurrency", kind: kindInt32, def: def(fetchopts.DefaultPerHostConcurrency),
		desc: "Most simultaneous requests to one host; 0 = unlimited."},
	{name: "rate_limit", kind: kindNumber, def: json.RawMessage("0"),
		desc: "Requests per second per host; 0 = no limit."},
	respectRobotsParam,
	{name: "extract_actions", kind: kindBool, def: defFalse,
		desc: "Also return the operable action tree (links, forms, buttons, downloads, each with an action_id) in format json."},
	maxActionsParam,
}

// screenshotParams are the screenshot tool's.
var screenshotParams = []param{
	{name: "url", kind: kindString, required: true,
		desc: "Absolute http or https URL of the page."},
	{name: "full_page", kind: kindBool, def: defFalse,
		desc: fmt.Sprintf("Picture the whole page (down to %d px) instead of the %dx%d viewport.", render.MaxShotHeight, render.ViewportWidth, render.ViewportHeight)},
	{name: "format", kind: kindString, def: quoted("png"),
		desc: "png or jpeg for a picture; pdf to print the page, mhtml to archive it as one file (both returned as a resource)."},
	stepsParam,
	scrollParam,
	blockParam,
	jsWaitParam,
	{name: "js_wait_for", kind: kindString,
		desc: "CSS selector to wait for before the picture is taken."},
	timeoutParam,
	allowLocalParam,
}

// readingParams shape what fetch_url and fetch_urls return of a page.
// Their descriptions are short: every tool's schema is read by the model
// on every turn.
var readingParams = []param{
	{name: "query", kind: kindString,
		desc: "A question: keep only the blocks that answer it, under their headings."},
	{name: "chunk", kind: kindInt32,
		desc: "Return a JSON array of chunks of at most this many tokens: {url, index, heading_path, tokens, text}."},
	{name: "chunk_overlap", kind: kindInt32,
		desc: "Tokens each chunk repeats from the one before; at most half of chunk."},
	{name: "citations", kind: kindBool, def: defFalse,
		desc: "Links and images become numbered footnotes under a final ## Links."},
}

// pagePartParams ask for the page's own parts, read from the parse its
// content is read from: keys of the page in format json, a JSON block
// after it in markdown and text. Their descriptions are the shortest the
// tool list's budget allows.
var pagePartParams = []param{
	{name: "include_tags", kind: kindStrings, desc: "CSS selectors the content is made of, as selector."},
	{name: "exclude_tags", kind: kindStrings, desc: "CSS selectors of elements removed before reading."},
	{name: "raw_html", kind: kindBool, def: defFalse, desc: "Add the HTML as served (raw_html)."},
	{name: "clean_html", kind: kindBool, def: defFalse, desc: "Add the cleaned HTML (clean_html)."},
	{name: "images", kind: kindBool, def: defFalse, desc: "Add the image URLs (images)."},
	{name: "head_metadata", kind: kindBool, def: defFalse, desc: "Add the head's metadata (head)."},
}

var (
	urlParam = param{name: "url", kind: kindString, required: true,
		desc: "Absolute http or https URL of the page."}
	selectorParam = param{name: "selector", kind: kindString,
		desc: "CSS selector: return only the matching elements; profile is then ignored."}
	// observe_url takes the steps that bring a page to the state whose
	// actions it lists; pictures and captures are fetch_url's.
	observeParams = concat([]param{urlParam, selectorParam}, optionParams, []param{stepsParam, scrollParam, blockParam})
	fetchParams   = concat([]param{urlParam, selectorParam}, optionParams, browserParams, readingParams, pagePartParams)
	batchParams   = concat([]param{
		{name: "urls", kind: kindStrings, required: true,
			desc: "Absolute http or https URLs to fetch; results come back in this order."},
	}, optionParams, browserParams, []param{
		{name: "concurrency", kind: kindInt32, def: def(fetchopts.DefaultConcurrency),
			desc: "How many of the URLs are fetched at once."},
	}, readingParams)
)

// Session parameters.
var (
	sessionIDParam = param{name: "session_id", kind: kindString, required: true,
		desc: "The session_id session_start returned."}
	sessionStartParams = []param{
		{name: "url", kind: kindString, required: true,
			desc: "Absolute http or https URL to open first."},
		profileParam,
		maxActionsParam,
		timeoutParam,
		allowLocalParam,
		respectRobotsParam,
		{name: "max_action_retries", kind: kindInt32, def: def(1),
			desc: "Extra attempts (0 to 2) for a step that can be repeated safely (observe, follow, GET form) when it fails with 429, 5xx or a transient network error."},
		jsParam,
		jsWaitParam,
	}
	sessionObserveParams = []param{sessionIDParam,
		{name: "url", kind: kindString, required: true,
			desc: "Absolute http or https URL to navigate the session to."}}
	sessionFollowParams = []param{sessionIDParam,
		{name: "action_id", kind: kindString, required: true,
			desc: "A link_* or download_* action_id from the session's last snapshot."}}
	sessionSubmitParams = []param{sessionIDParam,
		{name: "form_id", kind: kindString, required: true,
			desc: "A form_* action_id from the session's last snapshot."},
		{name: "values", kind: kindFormValues,
			desc: `Field values by field name, merged over the form's defaults: a string, number or boolean, or an array for several values, e.g. {"q": "tide pools"}.`},
		{name: "confirm", kind: kindBool, def: defFalse,
			desc: "Send a form that is not a GET. Without it such a form is withheld and you get back what would be sent."}}
	sessionCloseParams = []param{sessionIDParam}
	sessionActParams   = []param{sessionIDParam,
		{name: "steps", kind: kindJSONArray, required: true,
			desc: `Steps to run in the session's current page, in fetch_url's steps format, e.g. [{"type":"click","selector":"#load-more"}].`},
		{name: "confirm", kind: kindBool, def: defFalse,
			desc: "Let the steps send requests other than GET (a form post, a script's POST). Without it the first such request is withheld and you get back what would be sent."}}
)

// The map tool's bounds: a model gets a list it can read, not the
// 100,000 URLs a map may hold.
const (
	// defaultMapLimit and maxMapLimit bound the URLs map returns.
	defaultMapLimit = 500
	maxMapLimit     = 5000
	// maxMapChars bounds the list's text: about fetch_url's default
	// budget of 20,000 tokens, URLs costing a token for every three or
	// four characters.
	maxMapChars = 60_000
)

var mapParams = []param{
	{name: "url", kind: kindString, required: true,
		desc: "Absolute http or https URL of the site's start page, usually its home page; the site is this URL's host."},
	{name: "path_prefix", kind: kindString,
		desc: "Keep only URLs whose path is at or under this prefix, by path segment: /docs keeps /docs and /docs/install, not /docs-old."},
	{name: "include_paths", kind: kindStrings,
		desc: "Regular expressions matched against a URL's path and query; when given, only URLs matching one of them are listed, e.g. [\"^/blog/20(24|25)/\"]."},
	{name: "exclude_paths", kind: kindStrings,
		desc: "Regular expressions matched against a URL's path and query; matching URLs are neither listed nor crawled."},
	{name: "include_subdomains", kind: kindBool, def: defFalse,
		desc: "Also list URLs on the host's subdomains (docs.example.com for example.com), and the bare domain of a www. host."},
	{name: "ignore_robots", kind: kindBool, def: defFalse,
		desc: "Neither obey the site's robots.txt nor drop the URLs it disallows. Leave it false unless the user asked."},
	{name: "map_limit", kind: kindInt32, def: def(defaultMapLimit),
		desc: fmt.Sprintf("Return at most this many URLs, 1 to %d. Without query, the map stops looking once it has this many.", maxMapLimit)},
	{name: "query", kind: kindString,
		desc: "Words of what you are looking for, e.g. \"install windows\": URLs whose path holds them come first, whole words and rare words counting most. The map then looks at every URL before cutting to map_limit."},
	allowLocalParam,
	timeoutParam,
}

// diffParams and brandParams are the diff and brand tools': the page,
// and the few fetch knobs a model may need to reach it.
var (
	diffParams = []param{urlParam,
		{name: "diff_with", kind: kindString, required: true,
			desc: "The page's earlier answer: what fetch_url returned with format=json (or its Markdown)."},
		selectorParam, profileParam, jsParam, allowLocalParam, timeoutParam,
		{name: "no_cache", kind: kindBool, def: defFalse, desc: "Fetch fresh, not from the cache."},
	}
	brandParams = []param{urlParam, jsParam, allowLocalParam, timeoutParam}
)

func concat(lists ...[]param) []param {
	var out []param
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// fetchOptions turns the decoded arguments into FetchOptions. An option
// left out stays unset so fetchopts gives it its default, except the
// output budget, whose MCP default differs from the CLI's.
func fetchOptions(a args) *distillv1.FetchOptions {
	o := &distillv1.FetchOptions{
		Format:             distillv1.Format(a.enum("format")),
		Selector:           a.str("selector"),
		Profile:            distillv1.Profile(a.enum("profile")),
		Stats:              a.flag("stats"),
		Diagnostics:        a.flag("diagnostics"),
		MaxOutputTokens:    a.int64p("max_output_tokens"),
		TimeoutSecs:        a.int32p("timeout_secs"),
		MaxBytes:           a.int64p("max_bytes"),
		NoCache:            a.flag("no_cache"),
		CacheTtl:           a.int64p("cache_ttl"),
		ExtractLinks:       a.flag("extract_links"),
		ExtractTables:      a.flag("extract_tables"),
		LinksFull:          a.flag("links_full"),
		Js:                 distillv1.JsMode(a.enum("js")),
		JsWait:             a.int32p("js_wait"),
		JsWaitFor:          a.str("js_wait_for"),
		AllowLocal:         a.flag("allow_local"),
		MaxRetries:         a.int32p("max_retries"),
		PerHostConcurrency: a.int32p("per_host_concurrency"),
		RateLimit:          a.num("rate_limit"),
		RespectRobots:      a.flag("respect_robots"),
		ExtractActions:     a.flag("extract_actions"),
		MaxActions:         a.int32p("max_actions"),
		Concurrency:        a.int32p("concurrency"),
		Steps:              a.str("steps"),
		Scroll:             a.int32p("scroll"),
		CaptureTypes:       a.strs("capture_types"),
		CaptureCredentials: a.flag("capture_credentials"),
		Block:              a.strs("block"),
		Screenshot:         a.str("screenshot"),
		ScreenshotFormat:   a.str("screenshot_format"),
		Pdf:                a.flag("pdf"),
		Mhtml:              a.flag("mhtml"),
		Query:              a.str("query"),
		Chunk:              a.int32v("chunk"),
		ChunkOverlap:       a.int32v("chunk_overlap"),
		Citations:          a.flag("citations"),
		IncludeTags:        a.strs("include_tags"),
		ExcludeTags:        a.strs("exclude_tags"),
		RawHtml:            a.flag("raw_html"),
		CleanHtml:          a.flag("clean_html"),
		Images:             a.flag("images"),
		HeadMetadata:       a.flag("head_metadata"),
	}
	if c, ok := a["capture_network"].(string); ok {
		o.CaptureNetwork = &c
	}
	if o.MaxOutputTokens == nil {
		budget := int64(fetchopts.DefaultMCPMaxOutputTokens)
		o.MaxOutputTokens = &budget
	}
	return o
}

// tools are distill's MCP tools, in the order clients list them: the
// reading tools, the tools that look at one page another way, then the
// browsing session's.
func tools(svc Service) []tool {
	h := handlers{svc: svc}
	return slices.Concat(readingTools(h), pageTools(h), sessionTools(h))
}

// readingTools read pages: one, several, or a site's.
func readingTools(h handlers) []tool {
	return []tool{
		{
			name: "fetch_url", params: fetchParams, readOnly: true, run: h.fetchURL,
			desc: "Fetch one web page and return it distilled for reading: the main content as clean Markdown " +
				"(default), plain text, or JSON with title, byline, excerpt and status. Navigation, ads and footers " +
				"are removed, and the page is cut to max_output_tokens. " +
				"Use it to read an article, a documentation page or any public URL. With format=json, " +
				"the extract_* and page-part parameters add their data; in markdown or text, stats, diagnostics and page parts follow in blocks of their own. " +
				"A page that cannot be fetched gives an error saying why.",
		},
		{
			name: "observe_url", params: observeParams, readOnly: true, run: h.observeURL,
			desc: "Look at a page to see what can be done on it. Returns JSON: the distilled page (as fetch_url " +
				"with format=json) plus its action tree — links, forms (method, action, fields, submit_id), buttons " +
				"and downloads, each with a stable action_id — and extraction diagnostics. Takes fetch_url's " +
				"parameters; the result is always JSON. Use it to plan a step; to take steps (follow links, " +
				"submit forms) with cookies kept, open a session with session_start.",
		},
		{
			name: "fetch_urls", params: batchParams, readOnly: true, run: h.fetchURLs,
			desc: "Fetch several pages at once, up to concurrency in parallel. Returns a JSON array with one " +
				"entry per URL in the order given: {url, ok: true, result} where result is the page as fetch_url " +
				"returns it with format=json (content in result.markdown; with format text, llm or html also in result.content), or {url, ok: false, error}. " +
				"One failing URL does not fail the others. Use it instead of repeated fetch_url calls when you " +
				"already know the URLs.",
		},
		{
			name: "map", params: mapParams, readOnly: true, run: h.mapSite,
			desc: "List the URLs of a website without reading the pages: from the sitemaps the site publishes " +
				"and, when those list few, a short crawl of its links. Returns the URLs one a line, each page " +
				"once (http/https, trailing slashes, #fragments and tracking parameters do not repeat it), " +
				"then a line of counts and any notes, including how many URLs were left out when the list " +
				"was cut. Stays on the start URL's host. Use it to find the page that " +
				"answers a question on a site you know, or to choose which pages to read with fetch_url " +
				"or fetch_urls.",
		},
		{name: "crawl", params: crawlParams, readOnly: true, run: h.crawlSite, desc: crawlDesc},
	}
}

// pageTools look at one page otherwise than reading it: its data, its
// picture, its changes, its brand.
func pageTools(h handlers) []tool {
	return []tool{
		{
			name: "select", params: selectParams, readOnly: true, run: h.selectPage,
			desc: "Pick data out of one web page as JSON instead of reading it: the values a CSS selector " +
				"(select) or XPath (xpath) matches, records with fields, the elements whose text contains " +
				"find_text (or matches find_regex) with a selector for each, every item like the first match " +
				"with similar, or the page's tables. Use it to extract lists, prices, links or table rows, or to " +
				"find a selector you can reuse. Give exactly one of select, xpath, find_text, find_regex or tables.",
		},
		{
			name: "screenshot", params: screenshotParams, readOnly: true, runContent: h.screenshot,
			desc: "Render a page in a headless browser and return a picture of it: the viewport (1280x800) or, " +
				"with full_page, the whole page, as a PNG or JPEG image; or, with format pdf or mhtml, the page " +
				"printed to PDF or archived as one MHTML file. steps, scroll and js_wait_for bring the page to the " +
				"state to picture first (close a banner, load more). Use it to see a page's layout, charts or " +
				"anything its text does not carry.",
		},
		{
			name: "diff", params: diffParams, readOnly: true, run: h.diff,
			desc: "Compare a page now with an earlier fetch_url format=json answer for it: \"unchanged\", or the " +
				"changed fields, links added and removed, and a unified diff of the Markdown.",
		},
		{
			name: "brand", params: brandParams, readOnly: true, run: h.brand,
			desc: "A site's brand from a page, as JSON: name, logos (URL, size), favicon, theme colour, main " +
				"colours and fonts of its styles, social profiles.",
		},
	}
}

// sessionTools are the browsing session's: open one, move it, act in its
// page, close it.
func sessionTools(h handlers) []tool {
	return []tool{
		{
			name: "session_start", params: sessionStartParams, run: h.sessionStart,
			desc: "Open url in a new browsing session that keeps cookies, the current URL, redirect history and " +
				"the last page between calls. Returns the session view as JSON: {session_id, current_url, " +
				"redirect_history, snapshot, loop, operation_log}; redirect_history lists the URL of every page " +
				"the session has moved to, snapshot is the page with its action tree, loop.state summarises " +
				"it, loop.available_actions lists each action_id you can use next, " +
				"loop.recommended_next_actions suggests some, and loop.failure_reason (http_status_<code>) " +
				"says the last step got an HTTP error. Use a session for multi-step tasks: following " +
				"links, paging through results, searching, logging in. Pass session_id to the other session " +
				"tools and call session_close when done.",
		},
		{
			name: "session_observe", params: sessionObserveParams, run: h.sessionObserve,
			desc: "Navigate an open session to url, keeping its cookies. Returns the session view JSON " +
				"(as session_start) for the new page.",
		},
		{
			name: "session_follow", params: sessionFollowParams, run: h.sessionFollow,
			desc: "Follow a link_* or download_* action_id from the session's last snapshot, as a click would. " +
				"Returns the session view JSON for the page reached.",
		},
		{
			name: "session_submit_form", params: sessionSubmitParams, destructive: true, run: h.sessionSubmitForm,
			desc: "Submit a form_* action_id from the session's last snapshot, with values merged over the " +
				"form's defaults. A GET form (a search, a filter) is sent at once and the session view JSON " +
				"returned. Any other method may change something on the site, so without confirm=true it is " +
				"not sent: you get the session view with needs_confirmation=true and would_submit {method, action, " +
				"fields}, fields as [name, value] pairs in the order they would be sent; check it, then call " +
				"again with confirm=true to send it. If the server answers it with an HTTP error, the snapshot " +
				"shows that answer (often what to correct) while the session stays on the form's page, whose " +
				"actions you can still use.",
		},
		{
			name: "session_act", params: sessionActParams, destructive: true, run: h.sessionAct,
			desc: "Run steps (click, type, press, scroll, wait, waitForSelector, executeJavascript, screenshot) " +
				"in the session's current page, rendered headless with the session's cookies, then read it: " +
				"returns the session view JSON for the page as the steps left it, with steps holding what " +
				"executeJavascript returned. A step that would send anything but a GET (submit a POST form, a " +
				"script's POST) is not sent without confirm=true: you get needs_confirmation=true and would_send " +
				"{step_index, step_type, method, url, body}, and the session is unchanged; check it, then call " +
				"again with confirm=true. Confirmed steps are run once and never retried.",
		},
		{
			name: "session_close", params: sessionCloseParams, run: h.sessionClose,
			desc: "Close a session and forget its cookies, URL, history and snapshot. Returns {session_id, closed}.",
		},
	}
}
