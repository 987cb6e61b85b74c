package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/extractor/pdf/pdftest"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/renderer/render"
)

// site is a small web site on loopback with what agents meet: a search
// form, documentation pages, a paginated list, a sign-in form guarding a
// members' page, a flaky page, a slow page and a missing one.
type site struct {
	*httptest.Server
	mu       sync.Mutex
	hits     map[string]int
	times    map[string][]time.Time
	posts    []string // bodies of every POST
	other    *httptest.Server
	otherHit int
}

func page(title, body string) string {
	return "<!doctype html><html><head><title>" + title + "</title></head><body><main><h1>" + title + "</h1>" + body + "</main></body></html>"
}

// prose makes a paragraph long enough to be content, not chrome.
func prose(topic string) string {
	return "<p>" + strings.Repeat("This page is about "+topic+" and explains it in plain words for visitors. ", 4) + "</p>"
}

func newSite(t *testing.T) *site {
	s := &site{hits: map[string]int{}, times: map[string][]time.Time{}}
	s.other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.otherHit++
		s.mu.Unlock()
		_, _ = io.WriteString(w, page("Elsewhere", prose("another origin")))
	}))
	t.Cleanup(s.other.Close)
	mux := http.NewServeMux()
	html := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		html(w, 200, page("Harbour guide", prose("the harbour")+
			`<nav><a href="/docs/start">Getting started</a> <a href="/docs/tides">Tides</a> <a href="/boats?page=1">Boats for hire</a> <a href="/login">Sign in</a> <a href="/members">Members</a></nav>
			<form action="/search" method="get"><label>Search <input type="search" name="q"></label><input type="hidden" name="lang" value="en"><button>Go</button></form>`))
	})
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("q")
		html(w, 200, page("Results for "+q, prose("results for "+q)+`<a href="/docs/tides">Tide tables</a><p>lang=`+r.URL.Query().Get("lang")+`</p>`))
	})
	mux.HandleFunc("GET /docs/start", func(w http.ResponseWriter, _ *http.Request) {
		html(w, 200, page("Getting started", prose("getting started")+`<a href="/docs/tides">Next: Tides</a>`))
	})
	mux.HandleFunc("GET /docs/tides", func(w http.ResponseWriter, _ *http.Request) {
		html(w, 200, page("Tides", prose("tides")+`<a href="/docs/start">Back to getting started</a>`))
	})
	mux.HandleFunc("GET /boats", func(w http.ResponseWriter, r *http.Request) {
		var n int
		_, _ = fmt.Sscan(r.URL.Query().Get("page"), &n)
		body := fmt.Sprintf("<p>Page %d of boats.</p><ul>", n)
		for i := range 3 {
			body += fmt.Sprintf(`<li><a href="/boats/%d">Boat %d</a></li>`, n*3+i, n*3+i)
		}
		body += "</ul>" + prose("boats for hire")
		if n < 3 {
			body += fmt.Sprintf(`<a href="/boats?page=%d">Next</a>`, n+1)
		}
		html(w, 200, page(fmt.Sprintf("Boats, page %d", n), body))
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, _ *http.Request) {
		html(w, 200, page("Sign in", prose("signing in")+`<form action="/login" method="post">
			<input name="user" required><input type="password" name="password" required>
			<select name="remember"><option value="no">No</option><option value="yes">Yes</option></select>
			<input type="hidden" name="step" value="1"><input type="hidden" name="csrf" value="tok123">
			<button>Sign in</button></form>`))
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("csrf") != "tok123" || r.PostForm.Get("user") != "alice" || r.PostForm.Get("password") != "pw" {
			html(w, http.StatusUnauthorized, page("Sign in failed", prose("a failed sign-in")))
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "alice-session", Path: "/", HttpOnly: true})
		http.Redirect(w, r, "/members", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /members", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sid"); err != nil || c.Value != "alice-session" {
			html(w, http.StatusForbidden, page("Members only", prose("a locked door")))
			return
		}
		html(w, 200, page("Members area", "<p>Welcome back, alice.</p>"+prose("members")))
	})
	mux.HandleFunc("GET /flaky", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := s.hits["/flaky"]
		s.mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			html(w, http.StatusServiceUnavailable, page("Busy", "<p>Try again.</p>"))
			return
		}
		html(w, 200, page("Steady now", prose("recovery")))
	})
	mux.HandleFunc("GET /gone", func(w http.ResponseWriter, _ *http.Request) {
		html(w, http.StatusNotFound, page("Not here", prose("absence")))
	})
	// The slow pages never answer: a step that asks for one ends at a
	// deadline of its own or not at all.
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("GET /forms", func(w http.ResponseWriter, _ *http.Request) {
		html(w, 200, page("Forms", prose("forms")+`
			<form action="/slow-post" method="post"><input name="note"><button>Send</button></form>
			<form action="/bounce" method="post"><input name="note"><button>Bounce</button></form>`))
	})
	mux.HandleFunc("POST /slow-post", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("POST /bounce", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.other.URL+"/landing", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("GET /order", func(w http.ResponseWriter, _ *http.Request) {
		html(w, 200, page("Order a mooring", prose("ordering a mooring")+`<form action="/order" method="post">
			<input name="qty" value="0">
			<label><input type="checkbox" name="extra" value="water" checked> Water</label>
			<label><input type="checkbox" name="extra" value="power"> Power</label>
			<label><input type="checkbox" name="extra" value="wifi" checked> Wi-Fi</label>
			<input type="hidden" name="token" value="t1">
			<button>Order</button></form>`))
	})
	mux.HandleFunc("POST /order", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("qty") == "0" {
			html(w, http.StatusUnprocessableEntity, page("Order not placed", "<p>Quantity must be at least 1.</p>"+prose("a rejected order")))
			return
		}
		http.Redirect(w, r, "/order/done", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /order/done", func(w http.ResponseWriter, _ *http.Request) {
		html(w, 200, page("Order placed", prose("a placed order")))
	})
	mux.HandleFunc("GET /shell", func(w http.ResponseWriter, _ *http.Request) {
		// An app shell whose script adds nothing: js=auto escalates, and
		// the render is no better than the page as fetched.
		html(w, 200, `<!doctype html><html><head><title>Empty app</title></head><body><div id="root"></div><script>document.title = "Empty app";</script></body></html>`)
	})
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, _ *http.Request) {
		html(w, 200, `<!doctype html><html><head><title>Members app</title></head><body><div id="root"></div><script>
			fetch('/api/me').then(r => r.text()).then(t => { document.getElementById('root').innerHTML = '<main><h1>Account</h1><p>' + t + '</p>`+strings.Repeat(` The account page lists your moorings, invoices and messages.`, 5)+`</p></main>'; });
			</script></body></html>`)
	})
	mux.HandleFunc("GET /api/me", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sid"); err == nil && c.Value == "alice-session" {
			_, _ = io.WriteString(w, "Signed in as alice.")
			return
		}
		_, _ = io.WriteString(w, "Not signed in.")
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.times[r.URL.Path] = append(s.times[r.URL.Path], time.Now())
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			s.posts = append(s.posts, r.URL.Path+"?"+string(body))
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newManager runs sessions over the real fetcher, extractor and renderer.
func newManager(t *testing.T, cfg Config) *Manager {
	t.Helper()
	// The test pages are on loopback: the operator allows it.
	f := fetch.New(quiet, fetch.WithAllowLocal(true))
	r := render.New(quiet, render.WithAllowLocal(true))
	t.Cleanup(func() {
		_ = r.Close()
		f.Close()
	})
	return New(quiet, pipeline.New(quiet, f, extract.New(quiet, extract.WithPDFCacheDir(pdftest.CacheDir())), r), cfg)
}

func start(t *testing.T, m *Manager, url string, mod func(*distillv1.SessionStartRequest)) *distillv1.SessionView {
	t.Helper()
	// The budget covers a browser's cold start on a loaded machine: the
	// renders here are not about time, and a test of timeouts sets its own.
	req := &distillv1.SessionStartRequest{Url: url, AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF, TimeoutSecs: proto.Int32(30)}
	if mod != nil {
		mod(req)
	}
	res, err := m.Start(context.Background(), req)
	if err != nil {
		t.Fatalf("start %s: %v", url, err)
	}
	return res.GetView()
}

func follow(t *testing.T, m *Manager, id, action string) *distillv1.SessionView {
	t.Helper()
	res, err := m.Follow(context.Background(), &distillv1.SessionFollowRequest{SessionId: id, ActionId: action})
	if err != nil {
		t.Fatalf("follow %s: %v", action, err)
	}
	return res.GetView()
}

func submit(m *Manager, id, form string, values map[string]string, confirm bool) (*distillv1.SessionSubmitFormResponse, error) {
	vals := map[string]*distillv1.FieldValues{}
	for k, v := range values {
		vals[k] = &distillv1.FieldValues{Values: []string{v}}
	}
	return m.SubmitForm(context.Background(), &distillv1.SessionSubmitFormRequest{SessionId: id, FormId: form, Values: vals, Confirm: confirm})
}

// loaded is the session as its store holds it.
func loaded(t *testing.T, m *Manager, id string) *Session {
	t.Helper()
	st, _, err := m.store.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return fromState(st)
}

// actionID finds the id of the action labelled label in the view's loop.
func actionID(t *testing.T, v *distillv1.SessionView, kind, label string) string {
	t.Helper()
	for _, a := range v.GetLoop().GetAvailableActions() {
		if a.GetKind() == kind && strings.Contains(a.GetLabel(), label) {
			return a.GetActionId()
		}
	}
	t.Fatalf("no %s %q among %v", kind, label, v.GetLoop().GetAvailableActions())
	return ""
}

func TestSearchFormAndDocsNavigation(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{})
	v := start(t, m, s.URL+"/", nil)
	if v.GetSessionId() == "" || v.GetCurrentUrl() != s.URL+"/" || v.GetSnapshot().GetTitle() != "Harbour guide" {
		t.Fatalf("start view = %v", v)
	}
	st := v.GetLoop().GetState()
	if st.GetStatus() != 200 || st.GetStepsTaken() != 1 || st.GetActionCount() == 0 || st.GetContentChars() == 0 || st.FallbackReason != nil {
		t.Fatalf("loop state = %v", st)
	}
	search := actionID(t, v, "form", "search form")
	var recommended bool
	for _, r := range v.GetLoop().GetRecommendedNextActions() {
		recommended = recommended || r.GetActionId() == search
	}
	if !recommended {
		t.Errorf("the search form is not recommended: %v", v.GetLoop().GetRecommendedNextActions())
	}

	// A GET form submits at once, hidden fields carried.
	res, err := submit(m, v.GetSessionId(), search, map[string]string{"q": "spring tides"}, false)
	if err != nil {
		t.Fatal(err)
	}
	v = res.GetView()
	if res.GetNeedsConfirmation() || v.GetSnapshot().GetTitle() != "Results for spring tides" || !strings.Contains(v.GetSnapshot().GetMarkdown(), "lang=en") {
		t.Fatalf("search result: %v", v.GetSnapshot())
	}
	if want := s.URL + "/search?q=spring+tides&lang=en"; v.GetCurrentUrl() != want {
		t.Errorf("current_url = %s, want %s", v.GetCurrentUrl(), want)
	}

	v = follow(t, m, v.GetSessionId(), actionID(t, v, "link", "Tide tables"))
	if v.GetSnapshot().GetTitle() != "Tides" || v.GetLoop().GetState().GetStepsTaken() != 3 {
		t.Fatalf("after following: %v", v.GetLoop().GetState())
	}
	v = follow(t, m, v.GetSessionId(), actionID(t, v, "link", "Back to getting started"))
	v = follow(t, m, v.GetSessionId(), actionID(t, v, "link", "Next: Tides"))
	if v.GetSnapshot().GetTitle() != "Tides" {
		t.Fatalf("docs navigation ended on %q", v.GetSnapshot().GetTitle())
	}
	ops := v.GetOperationLog()
	if len(ops) != 5 || ops[0].GetOp() != "start" || ops[1].GetOp() != "submit_form" || ops[4].GetOp() != "follow" || ops[4].GetOutcome() != "ok" || ops[4].GetStatus() != 200 {
		t.Fatalf("operation log = %v", ops)
	}
}

func TestPaginatedList(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{})
	v := start(t, m, s.URL+"/boats?page=1", nil)
	for want := 2; want <= 3; want++ {
		recs := v.GetLoop().GetRecommendedNextActions()
		if len(recs) == 0 || recs[0].GetWhy() != "next page of this list" {
			t.Fatalf("page %d: no next-page hint: %v", want-1, recs)
		}
		v = follow(t, m, v.GetSessionId(), recs[0].GetActionId())
		if got := v.GetSnapshot().GetTitle(); got != fmt.Sprintf("Boats, page %d", want) {
			t.Fatalf("followed the hint to %q", got)
		}
	}
	for _, r := range v.GetLoop().GetRecommendedNextActions() {
		if r.GetWhy() == "next page of this list" {
			t.Fatalf("the last page still hints at a next page: %v", r)
		}
	}
}

func TestSignInThenMembersPage(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{})
	// A cap of 3 cuts the form's fields in the view before the hidden
	// csrf; the session still sends it.
	v := start(t, m, s.URL+"/login", func(r *distillv1.SessionStartRequest) { r.MaxActions = proto.Int32(3) })
	form := actionID(t, v, "form", "sign-in form")
	for _, f := range v.GetSnapshot().GetActions().GetForms()[0].GetFields() {
		if f.GetName() == "csrf" {
			t.Fatal("the view shows the csrf field although the cap cut it")
		}
	}
	var danger bool
	for _, a := range v.GetLoop().GetAvailableActions() {
		if a.GetActionId() == form {
			danger = a.GetDangerous()
			if strings.Join(a.GetFields(), ",") != "user,password,remember" {
				t.Errorf("fillable fields = %v", a.GetFields())
			}
		}
	}
	if !danger {
		t.Error("a POST form is not marked dangerous")
	}

	// Without confirm nothing is sent.
	res, err := submit(m, v.GetSessionId(), form, map[string]string{"user": "alice", "password": "pw"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !res.GetNeedsConfirmation() || s.count("/login") != 1 {
		t.Fatalf("withheld = %v, /login hits %d", res.GetNeedsConfirmation(), s.count("/login"))
	}
	ws := res.GetWouldSubmit()
	if ws.GetMethod() != "POST" || ws.GetUrl() != s.URL+"/login" || ws.GetAction() != s.URL+"/login" || ws.GetFields()["csrf"].GetValues()[0] != "tok123" || ws.GetFields()["remember"].GetValues()[0] != "no" {
		t.Fatalf("would_submit = %v", ws)
	}
	if res.GetView().GetCurrentUrl() != s.URL+"/login" || res.GetView().GetLoop().GetState().GetStepsTaken() != 1 {
		t.Fatalf("a withheld form moved the session: %v", res.GetView().GetLoop().GetState())
	}
	if last := res.GetView().GetOperationLog(); last[len(last)-1].GetOutcome() != "needs_confirmation" || last[len(last)-1].GetDetail() != "POST form needs confirm=true" {
		t.Fatalf("operation log = %v", last)
	}

	// A wrong password is an HTTP error: reported, not retried, and the
	// session stays on the form.
	res, err = submit(m, v.GetSessionId(), form, map[string]string{"user": "alice", "password": "nope"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if fr := res.GetView().GetLoop().GetFailureReason(); fr != "http_status_401" || res.GetView().GetCurrentUrl() != s.URL+"/login" {
		t.Fatalf("failed sign-in: failure %q, url %s", fr, res.GetView().GetCurrentUrl())
	}
	if d := res.GetView().GetLoop().GetFailureDetail(); d != "HTTP 401 Unauthorized at "+s.URL+"/login" {
		t.Fatalf("failure_detail = %q", d)
	}
	if len(s.posts) != 1 {
		t.Fatalf("the failed POST was sent %d times", len(s.posts))
	}

	res, err = submit(m, v.GetSessionId(), form, map[string]string{"user": "alice", "password": "pw"}, true)
	if err != nil {
		t.Fatal(err)
	}
	v = res.GetView()
	if v.GetSnapshot().GetTitle() != "Members area" || v.GetCurrentUrl() != s.URL+"/members" || v.GetLoop().FailureReason != nil {
		t.Fatalf("after sign-in: %s %q failure %q", v.GetCurrentUrl(), v.GetSnapshot().GetTitle(), v.GetLoop().GetFailureReason())
	}
	// The failed sign-in did not move the session; the one that did
	// landed on the members' page through a redirect.
	if got := v.GetRedirectHistory(); strings.Join(got, " ") != s.URL+"/login "+s.URL+"/members" {
		t.Fatalf("redirect history = %v", got)
	}
	if want := "/login?user=alice&password=pw&remember=no&step=1&csrf=tok123"; s.posts[1] != want {
		t.Fatalf("sent %q, want %q", s.posts[1], want)
	}

	// The cookie opens the members' page on a later step too.
	obs, err := m.Observe(context.Background(), &distillv1.SessionObserveRequest{SessionId: v.GetSessionId(), Url: s.URL + "/members"})
	if err != nil || obs.GetView().GetSnapshot().GetTitle() != "Members area" {
		t.Fatalf("observe members: %v %v", obs.GetView().GetSnapshot().GetTitle(), err)
	}
	// Another session has its own jar.
	other := start(t, m, s.URL+"/members", nil)
	if other.GetSnapshot().GetTitle() != "Members only" || other.GetLoop().GetFailureReason() != "http_status_403" {
		t.Fatalf("a fresh session reached the members' page: %q", other.GetSnapshot().GetTitle())
	}
}

func TestRetryAfterThenSuccess(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{})
	v := start(t, m, s.URL+"/", nil)
	obs, err := m.Observe(context.Background(), &distillv1.SessionObserveRequest{SessionId: v.GetSessionId(), Url: s.URL + "/flaky"})
	if err != nil {
		t.Fatal(err)
	}
	v = obs.GetView()
	if v.GetSnapshot().GetTitle() != "Steady now" || v.GetLoop().FailureReason != nil {
		t.Fatalf("after retry: %q failure %q", v.GetSnapshot().GetTitle(), v.GetLoop().GetFailureReason())
	}
	times := s.times["/flaky"]
	if len(times) != 2 || times[1].Sub(times[0]) < 900*time.Millisecond {
		t.Fatalf("the retry did not wait for Retry-After: %v", times)
	}
	ops := v.GetOperationLog()
	a, b := ops[len(ops)-2], ops[len(ops)-1]
	if a.GetAttempt() != 1 || a.GetStatus() != 503 || a.GetOutcome() != "retryable_status" || a.GetFailureReason() != "http_status_503" || b.GetAttempt() != 2 || b.GetOutcome() != "ok" || a.GetStep() != b.GetStep() {
		t.Fatalf("operation log = %v", ops)
	}

	// A 404 is an answer: reported in the loop, attempted once, and the
	// session stays where it was.
	obs, err = m.Observe(context.Background(), &distillv1.SessionObserveRequest{SessionId: v.GetSessionId(), Url: s.URL + "/gone"})
	if err != nil {
		t.Fatal(err)
	}
	if s.count("/gone") != 1 || obs.GetView().GetCurrentUrl() != s.URL+"/flaky" || obs.GetView().GetLoop().GetFailureReason() != "http_status_404" || !strings.Contains(obs.GetView().GetLoop().GetFailureDetail(), "HTTP 404 Not Found") {
		t.Fatalf("404: hits %d url %s failure %q", s.count("/gone"), obs.GetView().GetCurrentUrl(), obs.GetView().GetLoop().GetFailureReason())
	}
}

func TestFailedStepsLeaveTheSessionUnchanged(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{StepMargin: 500 * time.Millisecond})
	v := start(t, m, s.URL+"/forms", func(r *distillv1.SessionStartRequest) {
		r.TimeoutSecs = proto.Int32(1)
		r.MaxActionRetries = proto.Int32(0)
	})
	id := v.GetSessionId()
	unchanged := func(t *testing.T) {
		t.Helper()
		sess := loaded(t, m, id)
		if sess.url != s.URL+"/forms" || sess.steps != 1 || sess.snapshot.GetTitle() != "Forms" {
			t.Fatalf("the session moved: %s step %d %q", sess.url, sess.steps, sess.snapshot.GetTitle())
		}
	}

	t.Run("a step past its deadline", func(t *testing.T) {
		// /slow never answers: the step returns only because its own
		// deadline (or its fetch's, within it) ended it, and says so.
		_, err := m.Observe(context.Background(), &distillv1.SessionObserveRequest{SessionId: id, Url: s.URL + "/slow"})
		if failure.CodeOf(err) != failure.Timeout || !strings.Contains(err.Error(), "session is unchanged") {
			t.Fatalf("err = %v (%v)", err, failure.CodeOf(err))
		}
		if errors.Is(err, ErrMaybeSent) {
			t.Fatalf("a GET past its deadline is marked as maybe sent: %v", err)
		}
		unchanged(t)
	})
	t.Run("a confirmed POST without an answer may have been sent", func(t *testing.T) {
		_, err := submit(m, id, "form_0", map[string]string{"note": "hello"}, true)
		if failure.CodeOf(err) != failure.Timeout || !strings.Contains(err.Error(), "may already have been received") || !strings.Contains(err.Error(), "do not submit it again") {
			t.Fatalf("err = %v", err)
		}
		if !errors.Is(err, ErrMaybeSent) {
			t.Fatalf("err = %v, not ErrMaybeSent", err)
		}
		if s.count("/slow-post") != 1 {
			t.Fatalf("the POST was sent %d times", s.count("/slow-post"))
		}
		unchanged(t)
	})
	t.Run("a POST redirected to another origin keeps its body home", func(t *testing.T) {
		_, err := submit(m, id, "form_1", map[string]string{"note": "secret"}, true)
		if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), "another origin") {
			t.Fatalf("err = %v (%v)", err, failure.CodeOf(err))
		}
		if s.otherHit != 0 {
			t.Fatal("the other origin was reached")
		}
		unchanged(t)
	})
	t.Run("bad actions are clear errors and write nothing", func(t *testing.T) {
		_, before, err := m.store.Load(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct{ action, want string }{
			{"link_99", "no link or download"},
			{"form_0", "is a form: submit it with session_submit_form"},
			{"", "action_id is required"},
		} {
			_, err := m.Follow(context.Background(), &distillv1.SessionFollowRequest{SessionId: id, ActionId: tt.action})
			if failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("follow %q: %v", tt.action, err)
			}
		}
		if _, err := submit(m, id, "form_0", map[string]string{"nope": "x"}, true); failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), `no field "nope"; its fields are note`) {
			t.Errorf("unknown field: %v", err)
		}
		if _, err := m.Follow(context.Background(), &distillv1.SessionFollowRequest{SessionId: "s_missing", ActionId: "link_0"}); failure.CodeOf(err) != failure.NotFound {
			t.Errorf("unknown session: %v", err)
		}
		unchanged(t)
		if _, after, _ := m.store.Load(context.Background(), id); after != before {
			t.Fatalf("refused steps wrote the session: revision %d, then %d", before, after)
		}
	})
}

func TestLimitsAndExpiry(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{MaxSessions: 2, IdleTTL: time.Minute})
	now := time.Now()
	m.store.(*MemoryStore).now = func() time.Time { return now }
	a := start(t, m, s.URL+"/docs/start", nil)
	start(t, m, s.URL+"/docs/tides", nil)
	_, err := m.Start(context.Background(), &distillv1.SessionStartRequest{Url: s.URL + "/", AllowLocal: true})
	if failure.CodeOf(err) != failure.Exhausted || !strings.Contains(err.Error(), "too many live sessions (2)") {
		t.Fatalf("third session: %v", err)
	}
	closed, err := m.Close(context.Background(), &distillv1.SessionCloseRequest{SessionId: a.GetSessionId()})
	if err != nil || !closed.GetClosed() {
		t.Fatalf("close: %v %v", closed, err)
	}
	if again, _ := m.Close(context.Background(), &distillv1.SessionCloseRequest{SessionId: a.GetSessionId()}); again.GetClosed() {
		t.Fatal("closing twice reported closed")
	}
	if _, err := m.Follow(context.Background(), &distillv1.SessionFollowRequest{SessionId: a.GetSessionId(), ActionId: "link_0"}); failure.CodeOf(err) != failure.NotFound {
		t.Fatalf("follow on a closed session: %v", err)
	}
	start(t, m, s.URL+"/", nil)
	now = now.Add(2 * time.Minute)
	if n, _ := m.store.Count(context.Background()); n != 0 {
		t.Fatalf("%d sessions outlived their idle time", n)
	}
}

func TestRenderedStepCarriesOnlyThatURLsCookies(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := newManager(t, Config{})
	v := start(t, m, s.URL+"/login", nil)
	res, err := submit(m, v.GetSessionId(), "form_0", map[string]string{"user": "alice", "password": "pw"}, true)
	if err != nil || res.GetView().GetSnapshot().GetTitle() != "Members area" {
		t.Fatalf("sign-in: %v", err)
	}
	// Now an app shell: js=auto renders it, and its script asks the API who
	// is signed in with the session's cookie.
	st, rev, err := m.store.Load(context.Background(), v.GetSessionId())
	if err != nil {
		t.Fatal(err)
	}
	st.Settings.Js = distillv1.JsMode_JS_MODE_AUTO
	if err := m.store.Save(context.Background(), st, rev); err != nil {
		t.Fatal(err)
	}
	obs, err := m.Observe(context.Background(), &distillv1.SessionObserveRequest{SessionId: v.GetSessionId(), Url: s.URL + "/app"})
	if err != nil {
		t.Fatal(err)
	}
	ls := obs.GetView().GetLoop().GetState()
	if ls.GetFallbackReason() != "js_app" || !ls.GetUsedHeadless() {
		t.Fatalf("loop state = %v\nlog %v", ls, obs.GetView().GetOperationLog())
	}
	if md := obs.GetView().GetSnapshot().GetMarkdown(); !strings.Contains(md, "Signed in as alice.") {
		t.Fatalf("the render was not signed in:\n%s", md)
	}
	for _, op := range obs.GetView().GetOperationLog() {
		if strings.Contains(op.String(), "alice-session") {
			t.Fatal("a cookie value reached the operation log")
		}
	}
}

// gatedDistiller answers every URL with a page titled after it. Once
// armed, each call reports its URL on arrived and waits for release, so
// that steps taken at the same time have all loaded the session before
// any of them saves it.
type gatedDistiller struct {
	arrived chan string
	release chan struct{}
}

func (g *gatedDistiller) Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	if g.arrived != nil {
		g.arrived <- req.URL
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &pipeline.Result{Distilled: &distillv1.Distilled{Status: http.StatusOK, FinalUrl: req.URL, Title: req.URL}}, nil
}

// Two managers over one store are two gateways of a cluster; when both
// step one session at once, one step is kept and the other is refused as
// a conflict, never silently lost.
func TestConcurrentStepsOnTwoGatewaysConflict(t *testing.T) {
	t.Parallel()
	stores := []struct {
		name  string
		store func(t *testing.T) Store
	}{
		{"memory", func(*testing.T) Store { return NewMemoryStore(8, time.Minute) }},
		{"kv", func(t *testing.T) Store {
			kv, err := NewKVStore(embeddedJetStream(t), testKey, 8, time.Minute, 1)
			if err != nil {
				t.Fatal(err)
			}
			return kv
		}},
	}
	for _, tt := range stores {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := tt.store(t)
			d := &gatedDistiller{}
			gateways := []*Manager{New(quiet, d, Config{Store: store}), New(quiet, d, Config{Store: store})}
			res, err := gateways[0].Start(ctx, &distillv1.SessionStartRequest{Url: "https://example.com/start"})
			if err != nil {
				t.Fatal(err)
			}
			id := res.GetView().GetSessionId()

			d.arrived, d.release = make(chan string, len(gateways)), make(chan struct{})
			urls := []string{"https://example.com/a", "https://example.com/b"}
			errs := make([]error, len(gateways))
			var wg sync.WaitGroup
			for i, m := range gateways {
				wg.Go(func() {
					_, errs[i] = m.Observe(ctx, &distillv1.SessionObserveRequest{SessionId: id, Url: urls[i]})
				})
			}
			for range gateways {
				select {
				case <-d.arrived:
				case <-time.After(10 * time.Second):
					t.Fatal("the steps did not both reach the pipeline")
				}
			}
			close(d.release)
			wg.Wait()

			kept := -1
			for i, err := range errs {
				switch {
				case err == nil && kept < 0:
					kept = i
				case failure.CodeOf(err) != failure.Conflict:
					t.Fatalf("errors = %v, want one step kept and one conflict", errs)
				}
			}
			if kept < 0 {
				t.Fatalf("errors = %v, want one step kept", errs)
			}
			st, _, err := store.Load(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if st.GetCurrentUrl() != urls[kept] || st.GetSteps() != 2 || len(st.GetOperationLog()) != 2 || st.GetOperationLog()[1].GetTarget() != urls[kept] {
				t.Fatalf("stored session = %s step %d log %v, want the kept step to %s", st.GetCurrentUrl(), st.GetSteps(), st.GetOperationLog(), urls[kept])
			}
		})
	}
}
