// Package crawljs keeps crawls in NATS JetStream, so that a crawl outlives
// the process running it and politeness holds across processes: each
// crawl's journal (its frontier and seen-set, as the records crawl.Run
// writes) is a subject of one stream, and each host's next turn is a key
// of one key-value bucket that every process updates with compare and
// set.
package crawljs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/proto/failure"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/pace"
)

// Names of the stream and the bucket.
const (
	Stream        = "DISTILL_CRAWLS"
	SubjectPrefix = "distill.crawl."
	PaceBucket    = "distill_crawl_pace"
)

// journalMaxAge is how long a crawl's journal is kept after its last
// record: long enough to resume a crawl the next day.
const journalMaxAge = 7 * 24 * time.Hour

// Config says how the stream and the bucket are stored.
type Config struct {
	// Memory keeps them in memory (the single binary's embedded NATS).
	Memory bool
	// Replicas for a clustered NATS; 0 means 1.
	Replicas int
	// LeaseTTL is how long a crawl's lease outlives a holder that stopped
	// renewing it; 0 or more than LeaseTTL means LeaseTTL.
	LeaseTTL time.Duration
}

func (c Config) leaseTTL() time.Duration {
	if c.LeaseTTL <= 0 || c.LeaseTTL > LeaseTTL {
		return LeaseTTL
	}
	return c.LeaseTTL
}

func (c Config) storage() jetstream.StorageType {
	if c.Memory {
		return jetstream.MemoryStorage
	}
	return jetstream.FileStorage
}

// EnsureStream creates or updates the journals' stream.
func EnsureStream(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:     Stream,
		Subjects: []string{SubjectPrefix + "*"},
		Storage:  cfg.storage(),
		Replicas: max(cfg.Replicas, 1),
		MaxAge:   journalMaxAge,
	})
	if err != nil {
		return fmt.Errorf("ensure stream %s: %w", Stream, err)
	}
	return nil
}

// Journal is a crawl.Journal on the stream's subject for one job id. It
// holds the job's lease from Load to Close: a key of the owners bucket
// that only one process at a time may hold, kept alive while the crawl
// runs and expiring LeaseTTL after its holder died, so that two gateways
// never run one crawl at once.
type Journal struct {
	js    jetstream.JetStream
	id    string
	owner string
	cfg   Config
	// timeout bounds each call within its context: NATS away must not
	// hold a crawl up for as long as the crawl may run.
	timeout time.Duration

	mu    sync.Mutex
	lease *lease
}

// LeaseTTL is how long a crawl's lease outlives a holder that stopped
// renewing it (a gateway killed): another gateway may resume the crawl
// that long after.
const LeaseTTL = 15 * time.Second

// OwnersBucket holds the crawls' leases.
const OwnersBucket = "distill_crawl_owners"

// NewJournal returns the journal of job id, which must be crawl.ValidID.
// owner names the process, in the lease and in the refusal another
// process gets.
func NewJournal(js jetstream.JetStream, id, owner string, cfg Config) (*Journal, error) {
	if !crawl.ValidID(id) {
		return nil, fmt.Errorf("crawl job id %q is not 16 hex digits", id)
	}
	return &Journal{js: js, id: id, owner: owner, cfg: cfg, timeout: 10 * time.Second}, nil
}

// lease is a held lease and its renewal.
type lease struct {
	kv   jetstream.KeyValue
	stop chan struct{}
	done chan struct{}
	// lost is set when the renewal found the lease taken or gone.
	mu   sync.Mutex
	lost error
}

// acquire takes the job's lease, or says who holds it.
func (j *Journal) acquire(ctx context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lease != nil {
		return nil
	}
	kv, err := j.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:   OwnersBucket,
		TTL:      LeaseTTL,
		Storage:  j.cfg.storage(),
		Replicas: max(j.cfg.Replicas, 1),
	})
	if err != nil {
		return fmt.Errorf("crawl lease: %w", err)
	}
	rev, err := kv.Create(ctx, j.id, j.leaseValue())
	if isConflict(err) {
		// Held, or left by a holder that died: its time says which.
		var e jetstream.KeyValueEntry
		if e, err = kv.Get(ctx, j.id); err == nil {
			holder, until := parseLease(e.Value())
			if time.Now().Before(until) {
				return failure.New(failure.Conflict, "crawl %s is running on %s; it can be resumed once that stops (within %s of its dying)", j.id, holder, j.cfg.leaseTTL())
			}
			rev, err = kv.Update(ctx, j.id, j.leaseValue(), e.Revision())
		} else if errors.Is(err, jetstream.ErrKeyNotFound) {
			rev, err = kv.Create(ctx, j.id, j.leaseValue())
		}
	}
	if err != nil {
		if isConflict(err) {
			return failure.New(failure.Conflict, "crawl %s was just taken by another process", j.id)
		}
		return fmt.Errorf("crawl lease: %w", err)
	}
	l := &lease{kv: kv, stop: make(chan struct{}), done: make(chan struct{})}
	j.lease = l
	go j.renew(l, rev)
	return nil
}

// leaseValue is the lease as the bucket keeps it: its holder, and the
// time it runs out unless renewed.
func (j *Journal) leaseValue() []byte {
	return []byte(j.owner + "\n" + strconv.FormatInt(time.Now().Add(j.cfg.leaseTTL()).UnixNano(), 10))
}

// parseLease reads a lease's holder and end; a value without an end (a
// lease of an older gateway) runs out LeaseTTL after it was written,
// which the bucket's TTL sees to.
func parseLease(v []byte) (holder string, until time.Time) {
	h, t, ok := strings.Cut(string(v), "\n")
	ns, err := strconv.ParseInt(t, 10, 64)
	if !ok || err != nil {
		return string(v), time.Now().Add(time.Hour)
	}
	return h, time.Unix(0, ns)
}

// renew keeps the lease alive, a third of its TTL at a time, until Close.
func (j *Journal) renew(l *lease, rev uint64) {
	defer close(l.done)
	t := time.NewTicker(j.cfg.leaseTTL() / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			ctx, cancel := context.WithTimeout(context.Background(), j.timeout)
			_ = l.kv.Delete(ctx, j.id, jetstream.LastRevision(rev))
			cancel()
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), j.timeout)
			next, err := l.kv.Update(ctx, j.id, j.leaseValue(), rev)
			cancel()
			if err == nil {
				rev = next
				continue
			}
			if isConflict(err) || errors.Is(err, jetstream.ErrKeyNotFound) {
				l.mu.Lock()
				l.lost = failure.New(failure.Conflict, "crawl %s: its lease was lost (NATS unreachable for %s, or another process took it)", j.id, j.cfg.leaseTTL())
				l.mu.Unlock()
				return
			}
			// NATS unreachable for now: try again at the next tick, while
			// the lease has time left.
		}
	}
}

// Close gives the lease back.
func (j *Journal) Close() error {
	j.mu.Lock()
	l := j.lease
	j.lease = nil
	j.mu.Unlock()
	if l != nil {
		close(l.stop)
		<-l.done
	}
	return nil
}

// JobID is the id the journal is kept under.
func (j *Journal) JobID() string { return j.id }

func (j *Journal) subject() string { return SubjectPrefix + j.id }

// Load takes the job's lease and reads its records, oldest first.
func (j *Journal) Load(ctx context.Context) ([]crawl.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	if err := j.acquire(ctx); err != nil {
		return nil, err
	}
	stream, err := j.js.Stream(ctx, Stream)
	if err != nil {
		return nil, fmt.Errorf("crawl journal: %w", err)
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(j.subject()))
	if err != nil {
		return nil, fmt.Errorf("crawl journal: %w", err)
	}
	count := int(info.State.Subjects[j.subject()])
	if count == 0 {
		return nil, nil
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{j.subject()}})
	if err != nil {
		return nil, fmt.Errorf("crawl journal: %w", err)
	}
	out := make([]crawl.Record, 0, count)
	for len(out) < count {
		batch, err := cons.Fetch(min(count-len(out), 512), jetstream.FetchMaxWait(j.timeout))
		if err != nil {
			return nil, fmt.Errorf("crawl journal: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			var r crawl.Record
			if err := json.Unmarshal(m.Data(), &r); err != nil {
				return nil, fmt.Errorf("crawl journal %s: a record that is not one: %v", j.id, err)
			}
			out = append(out, r)
			n++
		}
		if err := batch.Error(); err != nil {
			return nil, fmt.Errorf("crawl journal: %w", err)
		}
		if n == 0 {
			return nil, fmt.Errorf("crawl journal %s: %d of %d records arrived", j.id, len(out), count)
		}
	}
	return out, nil
}

// Append publishes one record and waits for the stream to store it. A
// journal whose lease was lost refuses: another process may be running
// the crawl now.
func (j *Journal) Append(ctx context.Context, r crawl.Record) error {
	j.mu.Lock()
	l := j.lease
	j.mu.Unlock()
	if l != nil {
		l.mu.Lock()
		lost := l.lost
		l.mu.Unlock()
		if lost != nil {
			return lost
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	if _, err := j.js.Publish(ctx, j.subject(), b); err != nil {
		return fmt.Errorf("crawl journal %s: %w", j.id, err)
	}
	return nil
}

// Pacer is a pace.Pacer whose hosts' next turns are keys of a JetStream
// bucket: every process pacing through it takes its turns from the same
// clock, so politeness holds however many processes crawl one site. The
// turns are times on the machines' clocks, which must agree (NTP) to
// within a small part of the delay. A key holds "NANOS", the host's next
// turn, or "hNANOS:TOKEN", a turn taken and held, until its request is
// out, by the claim TOKEN names, or until NANOS for a holder that died.
type Pacer struct {
	js  jetstream.JetStream
	cfg Config

	mu sync.Mutex
	kv jetstream.KeyValue
	// claims are this process's held turns, by host.
	claims map[string]heldTurn
	// gates let one worker of this process at a time ask the bucket for
	// a host's turn; the others wait here, not on the bucket: only one
	// of them could take the turn, and each would read the key every
	// heldPoll meanwhile.
	gates map[string]chan struct{}
}

// NewPacer returns a Pacer; its bucket is made on the first turn.
func NewPacer(js jetstream.JetStream, cfg Config) *Pacer {
	return &Pacer{js: js, cfg: cfg, claims: map[string]heldTurn{}, gates: map[string]chan struct{}{}}
}

// heldTurn is a turn this process holds: the token it was taken with, and
// the key's revision it wrote, which Sent updates without reading it
// again.
type heldTurn struct {
	token string
	rev   uint64
}

// gate is host's gate in this process.
func (p *Pacer) gate(k string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.gates[k]
	if g == nil {
		g = make(chan struct{}, 1)
		p.gates[k] = g
	}
	return g
}

// paceTTL forgets a host nobody has asked for a while: its next turn is
// long past.
const paceTTL = time.Hour

// heldPoll is how often a worker looks again at a host whose turn is
// held: the hold ends when a request is written, a moment after it was
// taken.
const heldPoll = 2 * time.Millisecond

func (p *Pacer) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kv != nil {
		return p.kv, nil
	}
	kv, err := p.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:   PaceBucket,
		TTL:      paceTTL,
		Storage:  p.cfg.storage(),
		Replicas: max(p.cfg.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("crawl pace bucket: %w", err)
	}
	p.kv = kv
	return kv, nil
}

// key is a host as a bucket key: names are made of what keys allow, but
// an IPv6 address has colons.
func key(host string) string {
	return strings.NewReplacer(":", "_", "[", "", "]", "").Replace(strings.ToLower(host))
}

// paceValue is a key's value read: the time it names, whether the turn is
// held, by which claim, and, for a held turn, the time its request goes
// out at the soonest (zero when the value does not say).
func paceValue(v []byte) (at time.Time, held bool, token string, from time.Time) {
	s := string(v)
	if rest, ok := strings.CutPrefix(s, "h"); ok {
		held = true
		var tail, f string
		s, tail, _ = strings.Cut(rest, ":")
		token, f, _ = strings.Cut(tail, ":")
		if ns, err := strconv.ParseInt(f, 10, 64); err == nil {
			from = time.Unix(0, ns)
		}
	}
	if ns, err := strconv.ParseInt(s, 10, 64); err == nil {
		at = time.Unix(0, ns)
	}
	return at, held, token, from
}

// Turn waits until host is free and claims it with compare and set,
// holding it until Sent. A turn still ahead is claimed as soon as it is
// known, and waited for once held: the claim's round trip to NATS is
// spent while the host's previous request is still within its delay, not
// after it.
func (p *Pacer) Turn(ctx context.Context, host string, interval time.Duration) error {
	if interval <= 0 {
		// No pace to keep: nothing to hold.
		return ctx.Err()
	}
	kv, err := p.bucket(ctx)
	if err != nil {
		return err
	}
	k := key(host)
	g := p.gate(k)
	select {
	case g <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g }()
	for {
		var at, from time.Time
		var held bool
		var rev uint64
		e, err := kv.Get(ctx, k)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("crawl pace of %s: %w", host, err)
		default:
			rev = e.Revision()
			at, held, _, from = paceValue(e.Value())
		}
		now := time.Now()
		if held && at.After(now) {
			// Its request goes out at from at the soonest, and frees the
			// host a moment after it is written.
			wait := now.Add(heldPoll)
			if from.After(wait) {
				wait = from
			}
			if err := sleepUntil(ctx, wait); err != nil {
				return err
			}
			continue
		}
		start := now
		if at.After(now) {
			start = at
		}
		token := crawl.NewID()
		val := []byte("h" + strconv.FormatInt(start.Add(pace.MaxHold+pace.Spacing(interval)).UnixNano(), 10) + ":" + token + ":" + strconv.FormatInt(start.UnixNano(), 10))
		var wrote uint64
		if rev == 0 {
			wrote, err = kv.Create(ctx, k, val)
		} else {
			wrote, err = kv.Update(ctx, k, val, rev)
		}
		if err == nil {
			p.mu.Lock()
			p.claims[k] = heldTurn{token: token, rev: wrote}
			p.mu.Unlock()
			if err := sleepUntil(ctx, start); err != nil {
				// Given up before its time: the host is free again a
				// delay from now, later than the turn was.
				p.Sent(ctx, host, interval, time.Time{})
				return err
			}
		}
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case isConflict(err):
			// Another worker took the turn: wait for the next.
			continue
		default:
			return fmt.Errorf("crawl pace of %s: %w", host, err)
		}
	}
}

// Sent ends this process's hold on host: the next turn is
// Spacing(interval) after at (after now for a request never written). It
// returns at once; the bucket is updated in the background, while the
// other workers look again. at is when the request was written, which
// the turn held the host until: no pad for the round trips to NATS is
// needed, for no other worker's request can start before the bucket
// says at, and they read it on the same clock (across machines, clocks
// kept by NTP agree to far less than Spacing's twentieth).
func (p *Pacer) Sent(ctx context.Context, host string, interval time.Duration, at time.Time) {
	if interval <= 0 {
		return
	}
	if at.IsZero() {
		at = time.Now()
	}
	k := key(host)
	p.mu.Lock()
	claim := p.claims[k]
	delete(p.claims, k)
	p.mu.Unlock()
	token := claim.token
	want := at.Add(pace.Spacing(interval))
	// The write outlives the caller's context, which may be ending with
	// its page: the host must be freed all the same.
	base := context.WithoutCancel(ctx)
	go func() {
		ctx, cancel := context.WithTimeout(base, max(interval, 5*time.Second))
		defer cancel()
		kv, err := p.bucket(ctx)
		if err != nil {
			return
		}
		value := []byte(strconv.FormatInt(want.UnixNano(), 10))
		if claim.rev != 0 {
			// The key as the claim left it, unless the hold ran out and
			// another took it: one write, no read.
			if _, err := kv.Update(ctx, k, value, claim.rev); !isConflict(err) {
				return
			}
		}
		for range 10 {
			e, err := kv.Get(ctx, k)
			if err != nil {
				return
			}
			next, held, holder, _ := paceValue(e.Value())
			switch {
			case held && holder != token:
				// Another claim holds it: ours ran out long ago.
				return
			case !held && !next.Before(want):
				return
			}
			if _, err := kv.Update(ctx, k, value, e.Revision()); !isConflict(err) {
				return
			}
		}
	}()
}

func isConflict(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return true
	}
	return errors.Is(err, jetstream.ErrKeyExists)
}

func sleepUntil(ctx context.Context, at time.Time) error {
	wait := time.Until(at)
	if wait <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
