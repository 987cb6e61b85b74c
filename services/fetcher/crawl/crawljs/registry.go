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
)

// Registry keeps jobs in JetStream: the Hub's crawls, and the jobs of the
// doors whose jobs are not crawls of the Hub's (the Firecrawl API's batch
// scrapes, crawls and extracts). It lives here, beside JobsBucket, so that
// the hub's JetStream is the one place a job of any kind is registered,
// under the same conventions: each job's record (R, as JSON) is a key of a
// bucket that every process reads and updates with compare and set, and
// watches for a cancel; a job may keep marks beside it (numbers, such as
// how far a client was sent its output); what the job produced is one
// subject of a stream per job, read back in order. Any process sharing the
// NATS answers for a job, whichever runs it.
type Registry[R any] struct {
	js  jetstream.JetStream
	cfg RegistryConfig

	mu     sync.Mutex
	kv     jetstream.KeyValue
	stream jetstream.Stream
}

// RegistryConfig names a Registry's bucket and stream and says how they
// are kept. The stream is made only once a job's items are added or read:
// a registry whose jobs produce nothing of their own there (the Hub's
// crawls, whose output is the Hub's stream) has none.
type RegistryConfig struct {
	// Name makes the names: bucket distill_<name>_jobs, stream
	// DISTILL_<NAME>_ITEMS, subjects distill.<name>.items.<id>. Letters,
	// digits and underscores.
	Name string
	// TTL is how long a record is kept after its last update, and an
	// item after it was added.
	TTL time.Duration
	// Storage is memory on the single binary's embedded NATS, files in a
	// cluster; Replicas 0 means 1.
	Storage  jetstream.StorageType
	Replicas int
}

// NewRegistry returns the registry cfg names over js; its bucket and
// stream are made on first use.
func NewRegistry[R any](js jetstream.JetStream, cfg RegistryConfig) (*Registry[R], error) {
	if cfg.Name == "" || strings.Trim(cfg.Name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return nil, fmt.Errorf("job registry: name %q is not lower-case letters, digits and underscores", cfg.Name)
	}
	if js == nil {
		return nil, errors.New("job registry: no JetStream")
	}
	return &Registry[R]{js: js, cfg: cfg}, nil
}

func (r *Registry[R]) subject(id string) string {
	return "distill." + r.cfg.Name + ".items." + id
}

// registryBucket is the bucket of the registry named name.
func registryBucket(name string) string { return "distill_" + name + "_jobs" }

// open makes the bucket on first use.
func (r *Registry[R]) open(ctx context.Context) (jetstream.KeyValue, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kv != nil {
		return r.kv, nil
	}
	kv, err := r.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:   registryBucket(r.cfg.Name),
		TTL:      r.cfg.TTL,
		Storage:  r.cfg.Storage,
		Replicas: max(r.cfg.Replicas, 1),
	})
	if err != nil {
		return nil, unavailableAs(fmt.Errorf("jobs bucket: %w", err), "jobs")
	}
	r.kv = kv
	return kv, nil
}

// itemStream makes the stream of the jobs' items on first use.
func (r *Registry[R]) itemStream(ctx context.Context) (jetstream.Stream, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stream != nil {
		return r.stream, nil
	}
	name := "DISTILL_" + strings.ToUpper(r.cfg.Name) + "_ITEMS"
	stream, err := r.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:     name,
		Subjects: []string{"distill." + r.cfg.Name + ".items.*"},
		Storage:  r.cfg.Storage,
		Replicas: max(r.cfg.Replicas, 1),
		MaxAge:   r.cfg.TTL,
	})
	if err != nil {
		return nil, unavailableAs(fmt.Errorf("ensure stream %s: %w", name, err), "jobs")
	}
	r.stream = stream
	return stream, nil
}

func unavailableAs(err error, what string) error {
	if _, ok := errors.AsType[*failure.Error](err); ok {
		return err
	}
	return failure.Wrap(failure.Unavailable, err, "%s", what)
}

// Create registers job id with rec, refusing an id registered already.
func (r *Registry[R]) Create(ctx context.Context, id string, rec R) error {
	kv, b, err := r.encode(ctx, id, rec)
	if err != nil {
		return err
	}
	if _, err := kv.Create(ctx, id, b); err != nil {
		if isConflict(err) || errors.Is(err, jetstream.ErrKeyExists) {
			return failure.New(failure.Conflict, "job %s exists already", id)
		}
		return unavailableAs(err, "job "+id)
	}
	return nil
}

// Put registers job id with rec, replacing the record it had if any.
func (r *Registry[R]) Put(ctx context.Context, id string, rec R) error {
	kv, b, err := r.encode(ctx, id, rec)
	if err != nil {
		return err
	}
	if _, err := kv.Put(ctx, id, b); err != nil {
		return unavailableAs(err, "job "+id)
	}
	return nil
}

// encode is rec as job id's record is kept, and the bucket to keep it in.
func (r *Registry[R]) encode(ctx context.Context, id string, rec R) (jetstream.KeyValue, []byte, error) {
	kv, err := r.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, nil, failure.Wrap(failure.Internal, err, "job %s", id)
	}
	return kv, b, nil
}

// Get is job id's record, failure.NotFound when there is none.
func (r *Registry[R]) Get(ctx context.Context, id string) (R, error) {
	rec, _, err := r.get(ctx, id)
	return rec, err
}

func (r *Registry[R]) get(ctx context.Context, id string) (R, uint64, error) {
	var rec R
	kv, err := r.open(ctx)
	if err != nil {
		return rec, 0, err
	}
	e, err := kv.Get(ctx, id)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrInvalidKey):
		return rec, 0, failure.New(failure.NotFound, "no job %q", id)
	case err != nil:
		return rec, 0, unavailableAs(err, "job "+id)
	}
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return rec, 0, failure.Wrap(failure.Internal, err, "job %s", id)
	}
	return rec, e.Revision(), nil
}

// Update changes job id's record with change, which reports whether it
// changed anything, and writes it unless another process wrote first, in
// which case change is given the newer record. It returns the record as
// it is kept.
func (r *Registry[R]) Update(ctx context.Context, id string, change func(*R) bool) (R, error) {
	kv, err := r.open(ctx)
	if err != nil {
		var zero R
		return zero, err
	}
	for {
		rec, rev, err := r.get(ctx, id)
		if err != nil || !change(&rec) {
			return rec, err
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return rec, failure.Wrap(failure.Internal, err, "job %s", id)
		}
		_, err = kv.Update(ctx, id, b, rev)
		if err == nil {
			return rec, nil
		}
		if !isConflict(err) {
			return rec, unavailableAs(err, "job "+id)
		}
		if ctx.Err() != nil {
			return rec, failure.Wrap(failure.Canceled, ctx.Err(), "job %s", id)
		}
	}
}

// Delete forgets job id: its record and its items.
func (r *Registry[R]) Delete(ctx context.Context, id string) error {
	kv, err := r.open(ctx)
	if err != nil {
		return err
	}
	stream, err := r.itemStream(ctx)
	if err != nil {
		return err
	}
	if err := stream.Purge(ctx, jetstream.WithPurgeSubject(r.subject(id))); err != nil {
		return unavailableAs(err, "job "+id)
	}
	if err := kv.Purge(ctx, id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return unavailableAs(err, "job "+id)
	}
	return nil
}

// A job's marks are numbers it keeps beside its record, in the same
// bucket and for as long, each under its own key, <name>.<id>: no job id
// has a dot (none could name its items' subject), so List and Watch,
// which read records, pass them by.
func markKey(id, name string) string { return name + "." + id }

func isMarkKey(k string) bool { return strings.Contains(k, ".") }

// SetMark keeps job id's mark name at v.
func (r *Registry[R]) SetMark(ctx context.Context, id, name string, v uint64) error {
	kv, err := r.open(ctx)
	if err != nil {
		return err
	}
	if _, err := kv.Put(ctx, markKey(id, name), strconv.AppendUint(nil, v, 10)); err != nil {
		return unavailableAs(err, "job "+id)
	}
	return nil
}

// Mark is job id's mark name, 0 when it has none.
func (r *Registry[R]) Mark(ctx context.Context, id, name string) (uint64, error) {
	kv, err := r.open(ctx)
	if err != nil {
		return 0, err
	}
	e, err := kv.Get(ctx, markKey(id, name))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrInvalidKey):
		return 0, nil
	case err != nil:
		return 0, unavailableAs(err, "job "+id)
	}
	v, err := strconv.ParseUint(string(e.Value()), 10, 64)
	if err != nil {
		return 0, failure.Wrap(failure.Internal, err, "job %s mark %s", id, name)
	}
	return v, nil
}

// ClearMark forgets job id's mark name.
func (r *Registry[R]) ClearMark(ctx context.Context, id, name string) error {
	kv, err := r.open(ctx)
	if err != nil {
		return err
	}
	if err := kv.Delete(ctx, markKey(id, name)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return unavailableAs(err, "job "+id)
	}
	return nil
}

// Listed is one job of List.
type Listed[R any] struct {
	ID     string
	Record R
}

// List is every job's record, in no order. A job's marks are not jobs.
func (r *Registry[R]) List(ctx context.Context) ([]Listed[R], error) {
	kv, err := r.open(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, unavailableAs(err, "jobs")
	}
	defer func() { _ = keys.Stop() }()
	var ids []string
	for k := range keys.Keys() {
		if !isMarkKey(k) {
			ids = append(ids, k)
		}
	}
	out := make([]Listed[R], 0, len(ids))
	for _, id := range ids {
		rec, err := r.Get(ctx, id)
		switch failure.CodeOf(err) {
		case failure.NotFound, failure.Internal:
			// Forgotten since it was listed, or not a record any
			// caller could read: the others are listed all the same.
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Listed[R]{ID: id, Record: rec})
	}
	return out, nil
}

// Watch sends job id's record, then the record again each time it is
// written, until ctx ends or the job is forgotten; then it closes the
// channel.
func (r *Registry[R]) Watch(ctx context.Context, id string) (<-chan R, error) {
	kv, err := r.open(ctx)
	if err != nil {
		return nil, err
	}
	w, err := kv.Watch(ctx, id)
	if err != nil {
		return nil, unavailableAs(err, "job "+id)
	}
	out := make(chan R)
	go func() {
		defer close(out)
		defer func() { _ = w.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil {
					// The end of the values already kept.
					continue
				}
				if e.Operation() != jetstream.KeyValuePut {
					return
				}
				var rec R
				if json.Unmarshal(e.Value(), &rec) != nil {
					continue
				}
				select {
				case out <- rec:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// Append adds one item to what job id produced, and returns its sequence.
func (r *Registry[R]) Append(ctx context.Context, id string, item []byte) (uint64, error) {
	if _, err := r.itemStream(ctx); err != nil {
		return 0, err
	}
	ack, err := r.js.Publish(ctx, r.subject(id), item)
	if err != nil {
		return 0, unavailableAs(fmt.Errorf("job %s: %w", id, err), "job "+id)
	}
	return ack.Sequence, nil
}

// Items hands each the items job id produced after sequence after, in
// the order they were added, and returns the sequence of the last one
// handed (after when there were none). One consumer reads them in
// batches: a status poll of a batch of thousands of pages is a few round
// trips, not one per page.
func (r *Registry[R]) Items(ctx context.Context, id string, after uint64, each func(seq uint64, item []byte)) (uint64, error) {
	stream, err := r.itemStream(ctx)
	if err != nil {
		return after, err
	}
	cons, err := stream.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubject: r.subject(id),
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   after + 1,
		AckPolicy:     jetstream.AckNonePolicy,
		MemoryStorage: true,
		// Left behind only if this process dies while reading.
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return after, unavailableAs(err, "job "+id)
	}
	defer func() { _ = stream.DeleteConsumer(context.WithoutCancel(ctx), cons.CachedInfo().Name) }()
	for {
		batch, err := cons.FetchNoWait(itemsBatch)
		if err != nil {
			return after, unavailableAs(err, "job "+id)
		}
		n := 0
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				return after, unavailableAs(err, "job "+id)
			}
			each(md.Sequence.Stream, m.Data())
			after, n = md.Sequence.Stream, n+1
		}
		if err := batch.Error(); err != nil {
			return after, unavailableAs(err, "job "+id)
		}
		if n == 0 {
			return after, nil
		}
	}
}

// itemsBatch is how many items Items asks for at once.
const itemsBatch = 512
