package crawljs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/robots"
)

// SeenBucket is the part of a crawl's seen-set that fetcher workers must
// agree on as they read: which page claimed each URL a page or a redirect
// leads to, so that a page reached both by a link and by a redirect is
// fetched once, and each host's robots.txt, read once per crawl by one
// worker for every worker. Its keys are the crawl's id, then "p." and the
// page's key hashed, or "r." and the robots.txt URL hashed; all of a
// crawl's keys are purged when it ends.
const SeenBucket = "distill_crawl_seen"

// Robots values: a read under way ("c" and the time its reader's claim
// runs out) or its answer ("f" and the file as internalv1.RobotsFile).
const (
	robotsClaimed = 'c'
	robotsFile    = 'f'
)

// seen is a handle on the bucket, made on first use.
type seen struct {
	js  jetstream.JetStream
	cfg Config

	mu sync.Mutex
	kv jetstream.KeyValue
}

func (s *seen) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kv != nil {
		return s.kv, nil
	}
	kv, err := s.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:   SeenBucket,
		TTL:      journalMaxAge,
		Storage:  s.cfg.storage(),
		Replicas: max(s.cfg.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("crawl seen bucket: %w", err)
	}
	s.kv = kv
	return kv, nil
}

func pageClaimKey(job, key string) string { return job + ".p." + keyHash(key) }

func robotsKey(job, robotsURL string) string { return job + ".r." + keyHash(robotsURL) }

// claim claims the page of key for the page by, which reads it (itself, or
// through a redirect): the first claim wins, atomically across processes,
// and a claim by the same page again (its item read again after its worker
// died, or a crawl adopted) is its own. A page claimed by another is a
// *crawl.AlreadyRead.
func (s *seen) claim(ctx context.Context, job, key, by string) error {
	kv, err := s.bucket(ctx)
	if err != nil {
		return err
	}
	k, mine := pageClaimKey(job, key), []byte(keyHash(by))
	for range 3 {
		_, err := kv.Create(ctx, k, mine)
		if err == nil {
			return nil
		}
		if !isConflict(err) {
			return fmt.Errorf("crawl claim: %w", err)
		}
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			// Purged between the two: the crawl ended, or try again.
			continue
		}
		if err != nil {
			return fmt.Errorf("crawl claim: %w", err)
		}
		if bytes.Equal(e.Value(), mine) {
			return nil
		}
		return &crawl.AlreadyRead{Key: key}
	}
	return fmt.Errorf("crawl claim of %s: the key keeps changing", key)
}

// robotsRead reads a robots.txt through one worker's fetcher.
type robotsRead func(ctx context.Context) (*robots.Robots, error)

// robotsWait is how often a worker looks again at a robots.txt another
// worker is reading.
const robotsWait = 10 * time.Millisecond

// robots returns the crawl's copy of the robots.txt at robotsURL: the one
// kept, or, when none is, one read through read by the first worker to
// claim it, the others waiting for its answer. A claim whose worker died
// is taken over once its time (hold) runs out.
func (s *seen) robots(ctx context.Context, job, robotsURL string, hold time.Duration, read robotsRead) (*robots.Robots, error) {
	kv, err := s.bucket(ctx)
	if err != nil {
		return nil, err
	}
	k := robotsKey(job, robotsURL)
	claimed := func() []byte {
		return append([]byte{robotsClaimed}, strconv.FormatInt(time.Now().Add(hold).UnixNano(), 10)...)
	}
	for {
		var rev uint64
		e, err := kv.Get(ctx, k)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			rev, err = kv.Create(ctx, k, claimed())
		case err != nil:
			return nil, fmt.Errorf("crawl robots.txt of %s: %w", robotsURL, err)
		default:
			if file, ok := robotsOf(e.Value()); ok {
				return file, nil
			}
			if until := claimEnd(e.Value()); time.Now().Before(until) {
				if err := sleepUntil(ctx, time.Now().Add(robotsWait)); err != nil {
					return nil, err
				}
				continue
			}
			// Its reader died: ours now.
			rev, err = kv.Update(ctx, k, claimed(), e.Revision())
		}
		if isConflict(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("crawl robots.txt of %s: %w", robotsURL, err)
		}
		file, err := read(ctx)
		if err != nil {
			// Another worker, or this one asked again, reads it anew.
			_ = kv.Delete(context.WithoutCancel(ctx), k, jetstream.LastRevision(rev))
			return nil, err
		}
		b, err := proto.Marshal(file.Proto())
		if err == nil {
			_, err = kv.Update(ctx, k, append([]byte{robotsFile}, b...), rev)
		}
		if err != nil && !isConflict(err) {
			return nil, fmt.Errorf("crawl robots.txt of %s: %w", robotsURL, err)
		}
		return file, nil
	}
}

// robotsOf decodes a kept file.
func robotsOf(v []byte) (*robots.Robots, bool) {
	if len(v) == 0 || v[0] != robotsFile {
		return nil, false
	}
	m := &internalv1.RobotsFile{}
	if proto.Unmarshal(v[1:], m) != nil {
		return nil, false
	}
	return robots.FromProto(m), true
}

// claimEnd is when a read under way is given up as dead.
func claimEnd(v []byte) time.Time {
	if len(v) == 0 || v[0] != robotsClaimed {
		return time.Time{}
	}
	ns, err := strconv.ParseInt(string(v[1:]), 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// waitRobots waits for the crawl's copy of the robots.txt at robotsURL,
// which a worker was asked to read: it fails when the read was given up
// (the key deleted) or ctx ends.
func (s *seen) waitRobots(ctx context.Context, job, robotsURL string) (*robots.Robots, error) {
	kv, err := s.bucket(ctx)
	if err != nil {
		return nil, err
	}
	w, err := kv.Watch(ctx, robotsKey(job, robotsURL))
	if err != nil {
		return nil, fmt.Errorf("crawl robots.txt of %s: %w", robotsURL, err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("crawl robots.txt of %s: the watch ended", robotsURL)
			}
			if e == nil {
				continue
			}
			if e.Operation() != jetstream.KeyValuePut {
				return nil, failure.New(failure.Unavailable, "robots.txt of %s: its reader gave up", robotsURL)
			}
			if file, ok := robotsOf(e.Value()); ok {
				return file, nil
			}
		}
	}
}

// forget purges what the bucket keeps of crawl job.
func (s *seen) forget(ctx context.Context, job string) error {
	if _, err := s.bucket(ctx); err != nil {
		return err
	}
	st, err := s.js.Stream(ctx, "KV_"+SeenBucket)
	if err != nil {
		return fmt.Errorf("crawl seen bucket: %w", err)
	}
	return st.Purge(ctx, jetstream.WithPurgeSubject("$KV."+SeenBucket+"."+job+".>"))
}
