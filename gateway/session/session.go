// Package session runs stateful browsing for agents. A session keeps a
// cookie jar, the current URL, the history of its navigations and the
// last snapshot with its action tree; each step (start, observe,
// follow, submit a form) runs the pipeline with the session's cookies and
// commits what it learned only once it has settled, so a step that fails or
// runs out of time leaves the session as it was.
//
// Between steps sessions rest in a Store (this process's memory, or a
// key-value bucket the gateways of a cluster share), bounded in number and
// expired when idle.
package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"

	"distill.dev/proto/failure"
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
	// maxHistory bounds redirect_history: the last 100 navigations are
	// plenty to retrace a session, and it is stored and sent every step.
	maxHistory = 100
)

// Distiller runs the pipeline for one request.
type Distiller interface {
	Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
}

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

// Session is one step's working copy of a session's state: loaded from the
// store before the step, saved after it.
type Session struct {
	id       string
	set      settings
	jar      *cookies.Jar
	url      string
	history  []string
	snapshot *distillv1.Distilled // with the whole action tree
	// answer is the HTTP error answer to a confirmed form the last step
	// sent, shown in the view; the session stays on snapshot.
	answer        *distillv1.Distilled
	fallback      string
	failure       string
	failureDetail string
	steps         int32
	visited       map[string]bool
	log           []*distillv1.Operation
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
		Answer: s.answer, FailureDetail: s.failureDetail,
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
		answer: st.GetAnswer(), failureDetail: st.GetFailureDetail(),
	}
	for _, u := range st.GetVisited() {
		s.visited[u] = true
	}
	return s
}

// appendLog adds a step's operations, keeping the most recent.
func (s *Session) appendLog(ops []*distillv1.Operation) {
	s.logged = true
	s.log = append(s.log, ops...)
	if n := len(s.log) - maxLogEntries; n > 0 {
		s.log = append([]*distillv1.Operation(nil), s.log[n:]...)
	}
}
