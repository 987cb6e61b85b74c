// Package session runs stateful browsing for agents. A session keeps a
// cookie jar, the current URL, the redirect history of the last navigation
// and the last snapshot with its action tree; each step (start, observe,
// follow, submit a form) runs the pipeline with the session's cookies and
// commits what it learned only once it has settled, so a step that fails or
// runs out of time leaves the session as it was.
//
// Sessions live in memory, bounded in number and expired when idle.
package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mathrand "math/rand/v2"
	"net/http"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cookies"
	"distill.dev/services/fetcher/pipeline"
)

// Limits of the host, and the seed's defaults.
const (
	DefaultMaxSessions      = 64
	DefaultIdleTTL          = 30 * time.Minute
	DefaultMaxActionRetries = 1
	MaxActionRetries        = 2
	// StepMargin is added to every step's deadline for extraction and
	// scheduling.
	StepMargin = 15 * time.Second
	// maxLogEntries bounds the operation log a view carries.
	maxLogEntries = 50
	retryBase     = 500 * time.Millisecond
	retryMax      = 10 * time.Second
)

// Distiller runs the pipeline for one request.
type Distiller interface {
	Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
}

// ErrMaybeSent is in the chain of a step's error when the step sent a
// request that is not safe to repeat (a confirmed form other than GET) and
// got no answer in time: the server may have acted on it, so it must not
// be sent again.
var ErrMaybeSent = errors.New("the request may already have been received by the server")

// maybeSent adds ErrMaybeSent to a cause's chain without changing its
// text.
type maybeSent struct{ error }

func (e maybeSent) Unwrap() []error { return []error{e.error, ErrMaybeSent} }

// Config bounds what sessions may take from the host. Zero values take the
// defaults.
type Config struct {
	// MaxSessions caps live sessions kept in memory; a start past it is
	// refused. A Store keeps its own cap.
	MaxSessions int
	// IdleTTL expires a session kept in memory this long after its last
	// step. A Store keeps its own idle time.
	IdleTTL time.Duration
	// StepMargin replaces the 15 s margin of the step deadline (tests).
	StepMargin time.Duration
	// Store keeps the sessions between steps; nil keeps them in this
	// process's memory. A cluster of gateways shares a KVStore.
	Store Store
}

// Manager runs the steps of sessions kept in its Store.
type Manager struct {
	logger *slog.Logger
	d      Distiller
	cfg    Config
	store  Store
	// maxSessions and idleTTL are the store's limits, for the refusal
	// ahead of a start's work and for error messages.
	maxSessions int
	idleTTL     time.Duration
	// locks runs the steps of one session one at a time in this process;
	// the store's revisions catch a step taken at the same time elsewhere.
	locks lockTable
}

// New returns a Manager that runs steps through d.
func New(logger *slog.Logger, d Distiller, cfg Config) *Manager {
	if cfg.StepMargin == 0 {
		cfg.StepMargin = StepMargin
	}
	store := cfg.Store
	if store == nil {
		if cfg.MaxSessions <= 0 {
			cfg.MaxSessions = DefaultMaxSessions
		}
		if cfg.IdleTTL <= 0 {
			cfg.IdleTTL = DefaultIdleTTL
		}
		store = NewMemoryStore(cfg.MaxSessions, cfg.IdleTTL)
	}
	m := &Manager{logger: logger, d: d, cfg: cfg, store: store}
	m.maxSessions, m.idleTTL = store.Limits()
	return m
}

// lockTable holds a mutex for each session a step of this process is
// taking or waiting for. An entry lives only as long as it has holders, so
// sessions that expire or are closed elsewhere leave nothing behind; each
// session has a mutex of its own, as steps hold it across network calls.
type lockTable struct {
	mu    sync.Mutex
	locks map[string]*idLock
}

type idLock struct {
	sync.Mutex
	holders int // steps holding or waiting for the lock; guarded by lockTable.mu
}

// lock waits for the session's mutex; unlock releases it and drops the
// entry once no step holds or awaits it.
func (t *lockTable) lock(id string) (unlock func()) {
	t.mu.Lock()
	if t.locks == nil {
		t.locks = map[string]*idLock{}
	}
	l := t.locks[id]
	if l == nil {
		l = &idLock{}
		t.locks[id] = l
	}
	l.holders++
	t.mu.Unlock()

	l.Lock()
	return func() {
		l.Unlock()
		t.mu.Lock()
		if l.holders--; l.holders == 0 {
			delete(t.locks, id)
		}
		t.mu.Unlock()
	}
}

// settings are what session_start fixed for every step of a session.
type settings struct {
	profile       distillv1.Profile
	maxActions    int32
	timeoutSecs   int32
	allowLocal    bool
	respectRobots bool
	retries       int
	js            distillv1.JsMode
	jsWait        *int32
}

// options are the pipeline options of one attempt. Retries belong to the
// session's loop, one HTTP attempt per loop attempt, so the fetcher makes
// none of its own; the cache is off because answers with cookies are one
// user's pages. The action tree is extracted whole: the cap applies to the
// view only, so a form keeps the hidden fields a cap would have cut.
func (s settings) options() *distillv1.FetchOptions {
	return &distillv1.FetchOptions{
		Profile:         s.profile,
		Format:          distillv1.Format_FORMAT_JSON,
		Diagnostics:     true,
		ExtractActions:  true,
		TimeoutSecs:     proto.Int32(s.timeoutSecs),
		AllowLocal:      s.allowLocal,
		RespectRobots:   s.respectRobots,
		MaxRetries:      proto.Int32(0),
		NoCache:         true,
		Js:              s.js,
		JsWait:          s.jsWait,
		MaxOutputTokens: proto.Int64(fetchopts.DefaultMCPMaxOutputTokens),
	}
}

// deadline bounds one step: (max_action_retries + 1) × timeout_secs, or
// js_wait when that is longer, plus the margin.
func (s settings) deadline(margin time.Duration) time.Duration {
	d := time.Duration(s.retries+1) * time.Duration(s.timeoutSecs) * time.Second
	if s.jsWait != nil {
		d = max(d, time.Duration(*s.jsWait)*time.Millisecond)
	}
	return d + margin
}

// Session is one step's working copy of a session's state: loaded from the
// store before the step, saved after it.
type Session struct {
	id       string
	set      settings
	jar      *cookies.Jar
	url      string
	history  []string
	snapshot *distillv1.Distilled // with the whole action tree
	fallback string
	failure  string
	steps    int32
	visited  map[string]bool
	log      []*distillv1.Operation
	// logged is set once the step has logged an operation: a step refused
	// before it did anything leaves nothing to save.
	logged bool
}

// Start opens a session on req.url. The session exists once its first
// page has been reached.
func (m *Manager) Start(ctx context.Context, req *distillv1.SessionStartRequest) (*distillv1.SessionStartResponse, error) {
	set, err := settingsOf(req)
	if err != nil {
		return nil, err
	}
	if req.GetUrl() == "" {
		return nil, failure.New(failure.InvalidArgument, "url is required")
	}
	// Refused before the work, and again by Create should others have
	// started sessions meanwhile.
	if n, err := m.store.Count(ctx); err != nil {
		return nil, err
	} else if n >= m.maxSessions {
		return nil, tooMany(m.maxSessions, m.idleTTL)
	}
	s := &Session{id: newID(), set: set, jar: cookies.New(), visited: map[string]bool{}}
	view, err := m.navigate(ctx, s, "start", req.GetUrl(), navigation{url: req.GetUrl(), idempotent: true})
	if err != nil {
		// A session that never reached a page has nothing to go on from.
		return nil, err
	}
	if err := m.store.Create(ctx, s.state()); err != nil {
		return nil, err
	}
	return &distillv1.SessionStartResponse{View: view}, nil
}

// Observe navigates the session to req.url.
func (m *Manager) Observe(ctx context.Context, req *distillv1.SessionObserveRequest) (*distillv1.SessionObserveResponse, error) {
	if req.GetUrl() == "" {
		return nil, failure.New(failure.InvalidArgument, "url is required")
	}
	view, err := m.step(ctx, req.GetSessionId(), func(s *Session) (*distillv1.SessionView, error) {
		return m.navigate(ctx, s, "observe", req.GetUrl(), navigation{url: req.GetUrl(), idempotent: true})
	})
	if err != nil {
		return nil, err
	}
	return &distillv1.SessionObserveResponse{View: view}, nil
}

// Follow follows a link_* or download_* action of the last snapshot.
func (m *Manager) Follow(ctx context.Context, req *distillv1.SessionFollowRequest) (*distillv1.SessionFollowResponse, error) {
	view, err := m.step(ctx, req.GetSessionId(), func(s *Session) (*distillv1.SessionView, error) {
		href, err := followTarget(s.snapshot.GetActions(), req.GetActionId())
		if err != nil {
			return nil, err
		}
		return m.navigate(ctx, s, "follow", req.GetActionId(), navigation{url: href, idempotent: true})
	})
	if err != nil {
		return nil, err
	}
	return &distillv1.SessionFollowResponse{View: view}, nil
}

// SubmitForm submits a form of the last snapshot with req.values merged
// over its defaults. A GET form is sent at once; any other is withheld
// unless req.confirm, and the answer says what it would send.
func (m *Manager) SubmitForm(ctx context.Context, req *distillv1.SessionSubmitFormRequest) (*distillv1.SessionSubmitFormResponse, error) {
	var out *distillv1.SessionSubmitFormResponse
	_, err := m.step(ctx, req.GetSessionId(), func(s *Session) (*distillv1.SessionView, error) {
		sub, err := buildSubmission(s.snapshot.GetActions(), req.GetFormId(), req.GetValues())
		if err != nil {
			return nil, err
		}
		nav := navigation{url: sub.target, idempotent: sub.method == http.MethodGet}
		if !nav.idempotent {
			if !req.GetConfirm() {
				out = s.withhold(sub)
				return out.GetView(), nil
			}
			nav.method, nav.body, nav.contentType = sub.method, []byte(sub.encoded), "application/x-www-form-urlencoded"
		}
		view, err := m.navigate(ctx, s, "submit_form", sub.formID, nav)
		if err != nil {
			return nil, err
		}
		out = &distillv1.SessionSubmitFormResponse{View: view}
		return view, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Close forgets a session. Closing one that does not exist is not an
// error: closed is false.
func (m *Manager) Close(ctx context.Context, req *distillv1.SessionCloseRequest) (*distillv1.SessionCloseResponse, error) {
	if req.GetSessionId() == "" {
		return nil, failure.New(failure.InvalidArgument, "session_id is required")
	}
	ok, err := m.store.Delete(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	return &distillv1.SessionCloseResponse{SessionId: req.GetSessionId(), Closed: ok}, nil
}

// step loads a session, runs do on it, and saves what do left once do has
// logged an operation, even when it failed. A session changed by another
// gateway in the meantime is not overwritten.
func (m *Manager) step(ctx context.Context, id string, do func(*Session) (*distillv1.SessionView, error)) (*distillv1.SessionView, error) {
	if id == "" {
		return nil, failure.New(failure.InvalidArgument, "session_id is required")
	}
	defer m.locks.lock(id)()

	st, rev, err := m.store.Load(ctx, id)
	if err != nil {
		if failure.CodeOf(err) == failure.NotFound {
			return nil, failure.New(failure.NotFound, "no session %q: it was closed, expired after %s idle, or never started; start one with session_start", id, m.idleTTL)
		}
		return nil, err
	}
	s := fromState(st)
	view, stepErr := do(s)
	if !s.logged {
		return view, stepErr
	}
	// The step's outcome is saved even if the caller has gone.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := m.store.Save(sctx, s.state(), rev); err != nil && stepErr == nil {
		return nil, err
	}
	return view, stepErr
}

func settingsOf(req *distillv1.SessionStartRequest) (settings, error) {
	set := settings{
		profile:       req.GetProfile(),
		timeoutSecs:   fetchopts.DefaultTimeoutSecs,
		allowLocal:    req.GetAllowLocal(),
		respectRobots: req.GetRespectRobots(),
		retries:       DefaultMaxActionRetries,
		js:            req.GetJs(),
		jsWait:        req.JsWait,
	}
	if req.MaxActions != nil {
		if req.GetMaxActions() < 0 {
			return settings{}, failure.New(failure.InvalidArgument, "max_actions must not be negative, got %d", req.GetMaxActions())
		}
		set.maxActions = req.GetMaxActions()
	}
	if req.TimeoutSecs != nil {
		set.timeoutSecs = req.GetTimeoutSecs()
	}
	if req.MaxActionRetries != nil {
		set.retries = min(max(int(req.GetMaxActionRetries()), 0), MaxActionRetries)
	}
	if err := fetchopts.Validate(set.options()); err != nil {
		return settings{}, failure.Wrap(failure.InvalidArgument, err, "invalid session options")
	}
	return set, nil
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "s_" + hex.EncodeToString(b)
}

// state is what the store keeps of s.
func (s *Session) state() *internalv1.SessionState {
	st := &internalv1.SessionState{
		Id: s.id,
		Settings: &internalv1.SessionSettings{
			Profile: s.set.profile, MaxActions: s.set.maxActions, TimeoutSecs: s.set.timeoutSecs,
			AllowLocal: s.set.allowLocal, RespectRobots: s.set.respectRobots,
			MaxActionRetries: int32(s.set.retries), Js: s.set.js, JsWait: s.set.jsWait,
		},
		Jar: s.jar.Entries(), CurrentUrl: s.url, RedirectHistory: s.history, Snapshot: s.snapshot,
		FallbackReason: s.fallback, FailureReason: s.failure, Steps: s.steps, OperationLog: s.log,
	}
	for u := range s.visited {
		st.Visited = append(st.Visited, u)
	}
	return st
}

// fromState is the working copy of a stored session.
func fromState(st *internalv1.SessionState) *Session {
	set := st.GetSettings()
	s := &Session{
		id: st.GetId(),
		set: settings{
			profile: set.GetProfile(), maxActions: set.GetMaxActions(), timeoutSecs: set.GetTimeoutSecs(),
			allowLocal: set.GetAllowLocal(), respectRobots: set.GetRespectRobots(),
			retries: int(set.GetMaxActionRetries()), js: set.GetJs(), jsWait: set.JsWait,
		},
		jar: cookies.FromEntries(st.GetJar()), url: st.GetCurrentUrl(), history: st.GetRedirectHistory(),
		snapshot: st.GetSnapshot(), fallback: st.GetFallbackReason(), failure: st.GetFailureReason(),
		steps: st.GetSteps(), visited: map[string]bool{}, log: st.GetOperationLog(),
	}
	for _, u := range st.GetVisited() {
		s.visited[u] = true
	}
	return s
}

// navigation is what one step requests.
type navigation struct {
	url         string
	method      string // "" for GET
	body        []byte
	contentType string
	// idempotent steps may be attempted again.
	idempotent bool
}

// navigate runs one step and commits it once it settles.
func (m *Manager) navigate(ctx context.Context, s *Session, op, target string, nav navigation) (*distillv1.SessionView, error) {
	deadline := s.set.deadline(m.cfg.StepMargin)
	stepCtx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()

	jar := s.jar.Clone()
	step := s.steps + 1

	attempts := 1
	if nav.idempotent {
		attempts += s.set.retries
	}
	var (
		res *pipeline.Result
		err error
		ops []*distillv1.Operation
	)
	for attempt := 1; ; attempt++ {
		res, err = m.d.Do(stepCtx, pipeline.Request{
			URL: nav.url, Options: s.set.options(),
			Method: nav.method, Body: nav.body, BodyContentType: nav.contentType,
			Jar: jar,
		})
		entry := &distillv1.Operation{Step: step, Op: op, Target: target, Attempt: int32(attempt)}
		ops = append(ops, entry)
		var again bool
		switch {
		case err != nil:
			entry.Outcome = "error"
			entry.FailureReason = proto.String(err.Error())
			again = transient(stepCtx, err)
		case res.Distilled.GetStatus() >= 400:
			code := res.Distilled.GetStatus()
			entry.Outcome, entry.Status = "http_error", proto.Int32(code)
			entry.FailureReason = proto.String(httpFailure(code, res.Distilled.GetFinalUrl()))
			again = code == http.StatusTooManyRequests || code >= 500
		default:
			entry.Outcome, entry.Status = "ok", proto.Int32(res.Distilled.GetStatus())
		}
		if !again || attempt >= attempts {
			break
		}
		wait := backoff(attempt)
		if res != nil && res.RetryAfter > 0 {
			wait = res.RetryAfter
		}
		if d, ok := stepCtx.Deadline(); ok && time.Until(d) <= wait {
			// Waiting would miss the step's deadline: the last answer
			// stands.
			break
		}
		select {
		case <-time.After(wait):
		case <-stepCtx.Done():
		}
		if stepCtx.Err() != nil {
			err = stepCtx.Err()
			break
		}
	}

	s.appendLog(ops)
	if err != nil {
		return nil, m.stepError(ctx, stepCtx, deadline, op, nav, err)
	}

	s.steps = step
	// Cookies set by an answer are kept whatever its status: a browser
	// keeps them too.
	s.jar = jar
	status := res.Distilled.GetStatus()
	s.failure = ""
	if status >= 400 {
		s.failure = httpFailure(status, res.Distilled.GetFinalUrl())
		if s.snapshot != nil {
			// An HTTP error does not move the session: the page it is on,
			// its history and its actions stay, and the loop says what
			// failed.
			return s.view(), nil
		}
	}
	s.url = res.Distilled.GetFinalUrl()
	s.history = res.RedirectHistory
	s.snapshot = res.Distilled
	s.fallback = res.FallbackReason
	s.visited[s.url] = true
	return s.view(), nil
}

// stepError explains a failed step.
func (m *Manager) stepError(callerCtx, stepCtx context.Context, deadline time.Duration, op string, nav navigation, err error) error {
	sent := nav.method != "" && nav.method != http.MethodGet
	timedOut := errors.Is(stepCtx.Err(), context.DeadlineExceeded) && callerCtx.Err() == nil
	switch {
	case sent && (timedOut || failure.CodeOf(err) == failure.Timeout):
		return failure.Wrap(failure.Timeout, maybeSent{err}, "%s: no answer in time to the %s; the request may already have been received by the server, so do not submit it again: observe the page to see what happened", op, nav.method)
	case timedOut:
		return failure.Wrap(failure.Timeout, err, "%s: step exceeded its %s deadline; the session is unchanged and still usable", op, deadline)
	}
	return failure.Wrap(failure.CodeOf(err), err, "%s failed; the session is unchanged", op)
}

// transient reports whether another attempt of an idempotent step might
// succeed: a network failure or a fetch timeout, while the step still has
// time.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	switch failure.CodeOf(err) {
	case failure.Network, failure.Timeout:
		return true
	}
	return false
}

// backoff is a full-jitter wait before attempt+1.
func backoff(attempt int) time.Duration {
	ceiling := min(retryMax, time.Duration(float64(retryBase)*math.Pow(2, float64(attempt-1))))
	return mathrand.N(ceiling + 1)
}

func httpFailure(status int32, url string) string {
	return fmt.Sprintf("HTTP %d %s at %s", status, http.StatusText(int(status)), url)
}

// appendLog adds a step's operations, keeping the most recent.
func (s *Session) appendLog(ops []*distillv1.Operation) {
	s.logged = true
	s.log = append(s.log, ops...)
	if n := len(s.log) - maxLogEntries; n > 0 {
		s.log = append([]*distillv1.Operation(nil), s.log[n:]...)
	}
}

// withhold answers a non-GET form sent without confirm: the session is
// unchanged but for its log, and the answer says what a confirmed submit
// would send.
func (s *Session) withhold(sub *submission) *distillv1.SessionSubmitFormResponse {
	s.appendLog([]*distillv1.Operation{{
		Step: s.steps + 1, Op: "submit_form", Target: sub.formID, Attempt: 0, Outcome: "withheld",
		FailureReason: proto.String(sub.method + " form needs confirm=true"),
	}})
	fields := make(map[string]*distillv1.FieldValues, len(sub.fields))
	for _, f := range sub.fields {
		fv := fields[f.name]
		if fv == nil {
			fv = &distillv1.FieldValues{}
			fields[f.name] = fv
		}
		fv.Values = append(fv.Values, f.value)
	}
	return &distillv1.SessionSubmitFormResponse{
		View:              s.view(),
		NeedsConfirmation: true,
		WouldSubmit:       &distillv1.FormSubmission{Method: sub.method, Url: sub.target, Fields: fields},
	}
}
