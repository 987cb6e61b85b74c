package session

import (
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

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

// settingsOf reads and checks what a session_start request fixes.
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
