package firecrawl

import (
	"context"
	"net/http"

	grpcmd "google.golang.org/grpc/metadata"

	"distill.dev/gateway/host"
)

// RunHeader names the host run a request's model work runs in, as the
// gRPC door's distill-run-id metadata does: the actor's run budgets (its
// steps, bytes, time) are then shared by every request that names the
// run. Without it, each scrape, and each page of a batch, crawl or
// extract, is a run of its own. Firecrawl's API has no such field.
const RunHeader = "X-Distill-Run"

// maxRunBytes bounds a run's name, as the gRPC door bounds it.
const maxRunBytes = 128

// caller is who sent a request, as its token says.
type caller struct {
	// actor is the host actor its model work runs as: the one the host
	// policy maps its token to, or Config.Actor for an API or operator
	// token.
	actor string
	// run is the run RunHeader named, empty for a run per request.
	run string
	// scoped is true for a token the host policy gives an actor and the
	// gRPC API does not take: it reaches only the model work, as host
	// mode's extract and summarize, under the actor's policy.
	scoped bool
}

type callerKey struct{}

// callerOf is who sent r; a request the guard did not see (a test's) is
// the configured actor's.
func (s *Server) callerOf(r *http.Request) caller {
	if c, ok := r.Context().Value(callerKey{}).(caller); ok {
		return c
	}
	return caller{actor: s.cfg.Actor}
}

// identify names the caller of a request whose Authorization header is
// authorization, and refuses one whose token this server does not take.
func (s *Server) identify(r *http.Request) (caller, *apiError) {
	c := caller{actor: s.cfg.Actor}
	authorization := r.Header.Get("Authorization")
	if authorization == "" && isWebSocket(r) {
		// A WebSocket client cannot set a header: Firecrawl's clients
		// offer the token as their subprotocol.
		if t := offeredToken(r); t != "" {
			authorization = "Bearer " + t
		}
	}
	actor, named := s.actorOf(authorization)
	if s.cfg.Auth != nil {
		if err := s.cfg.Auth.CheckHeader(authorization); err != nil {
			if !named {
				return caller{}, &apiError{status: http.StatusUnauthorized, msg: "Unauthorized: " + err.Error()}
			}
			c.scoped = true
		}
	}
	if named {
		c.actor = actor
	}
	if v, ok := r.Header[http.CanonicalHeaderKey(RunHeader)]; ok {
		if len(v) != 1 || v[0] == "" || len(v[0]) > maxRunBytes {
			return caller{}, badRequest("Bad Request: %s must be one value of 1 to %d bytes", RunHeader, maxRunBytes)
		}
		c.run = v[0]
	}
	return c, nil
}

// actorOf is the actor the host policy gives the token of authorization.
func (s *Server) actorOf(authorization string) (string, bool) {
	if s.cfg.Host == nil || authorization == "" {
		return "", false
	}
	md := grpcmd.Pairs("authorization", authorization)
	return s.cfg.Host.Policies().Current().Names().Of(grpcmd.NewIncomingContext(context.Background(), md))
}

func withCaller(ctx context.Context, c caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// who is the host's name for c's model work: its actor, in its named run
// or else in run, a run of this work's own.
func (s *Server) who(c caller, run string) host.Who {
	if c.run != "" {
		return host.Who{Actor: c.actor, Run: c.run}
	}
	return host.Who{Actor: c.actor, Run: "firecrawl-" + run}
}

// onlyModelWork refuses what (a crawl, a batch, a map, a plain scrape) to
// an actor's token: the host policy confines an actor to its allowlist
// and budgets, which only the model work goes through.
func (s *Server) onlyModelWork(r *http.Request, what string) *apiError {
	if !s.callerOf(r).scoped {
		return nil
	}
	return &apiError{status: http.StatusForbidden, code: string(host.NotAuthorized),
		msg: "Forbidden: " + what + " is not for this token: an actor's token (the host policy's) reaches only the json and summary formats of scrape, and extract, under the actor's policy; it needs an API token"}
}

// notForActors refuses h to an actor's token.
func (s *Server) notForActors(what string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.onlyModelWork(r, what); err != nil && isWebSocket(r) {
			refuseWatch(w, r, err.msg)
			return
		} else if err != nil {
			writeError(w, err)
			return
		}
		h(w, r)
	}
}

// actorScrape checks a scrape an actor's token asks for: only the json
// and summary formats, whose pages the host reads under the actor's
// policy, and nothing that acts on a page or sends the actor's headers.
func (s *Server) actorScrape(r *http.Request, p *plan) *apiError {
	if !s.callerOf(r).scoped {
		return nil
	}
	w := p.want
	switch {
	case w.markdown || w.html || w.rawHTML || w.links || w.images || w.screenshot || (p.json == nil && !w.summary):
		return s.onlyModelWork(r, "a scrape with formats other than json and summary")
	case w.actions || p.opts.GetSteps() != "" || len(p.opts.GetHeaders()) > 0:
		return s.onlyModelWork(r, "a scrape with actions or headers")
	}
	return nil
}
