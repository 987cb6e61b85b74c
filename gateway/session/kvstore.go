package session

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/envflag"
)

// Bucket is the JetStream key-value bucket sessions live in.
const Bucket = "distill_sessions"

// ParseKey reads a KVStore key: 32 bytes in standard or URL-safe base64,
// padded or not.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != 32 {
				return nil, fmt.Errorf("%s must hold 32 bytes, it holds %d", envflag.SessionKey, len(k))
			}
			return k, nil
		}
	}
	return nil, fmt.Errorf("%s is not base64 (make one with: head -c 32 /dev/urandom | base64)", envflag.SessionKey)
}

// KVStore keeps sessions in a JetStream key-value bucket, so that every
// gateway of a cluster can take any session's next step and a gateway that
// restarts loses nothing. Each session is compressed and encrypted with
// AES-256-GCM (its id bound in as additional data): cookie values and pages
// never rest in NATS in the clear. The bucket's TTL is the idle expiry: a
// step rewrites the session and starts its time again.
type KVStore struct {
	js       jetstream.JetStream
	aead     cipher.AEAD
	max      int
	ttl      time.Duration
	replicas int

	mu sync.Mutex
	kv jetstream.KeyValue
}

// NewKVStore returns a store in js's bucket. The bucket is made on first
// use, so a gateway can start before NATS answers.
func NewKVStore(js jetstream.JetStream, key []byte, maxSessions int, ttl time.Duration, replicas int) (*KVStore, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	return &KVStore{js: js, aead: aead, max: maxSessions, ttl: ttl, replicas: max(replicas, 1)}, nil
}

func (k *KVStore) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kv != nil {
		return k.kv, nil
	}
	kv, err := k.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:   Bucket,
		History:  1,
		TTL:      k.ttl,
		Storage:  jetstream.FileStorage,
		Replicas: k.replicas,
	})
	if err != nil {
		return nil, failure.Wrap(failure.Unavailable, err, "session store")
	}
	k.kv = kv
	return kv, nil
}

// Limits implements Store.
func (k *KVStore) Limits() (int, time.Duration) { return k.max, k.ttl }

// Count implements Store.
func (k *KVStore) Count(ctx context.Context) (int, error) {
	kv, err := k.bucket(ctx)
	if err != nil {
		return 0, err
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return 0, failure.Wrap(failure.Unavailable, err, "session store")
	}
	n := 0
	for range keys.Keys() {
		n++
	}
	return n, nil
}

// Create implements Store.
func (k *KVStore) Create(ctx context.Context, st *internalv1.SessionState) error {
	n, err := k.Count(ctx)
	if err != nil {
		return err
	}
	if n >= k.max {
		return tooMany(k.max, k.ttl)
	}
	val, err := k.seal(st)
	if err != nil {
		return err
	}
	kv, err := k.bucket(ctx)
	if err != nil {
		return err
	}
	if _, err := kv.Create(ctx, st.GetId(), val); err != nil {
		return failure.Wrap(failure.Unavailable, err, "session store")
	}
	return nil
}

// Load implements Store.
func (k *KVStore) Load(ctx context.Context, id string) (*internalv1.SessionState, uint64, error) {
	kv, err := k.bucket(ctx)
	if err != nil {
		return nil, 0, err
	}
	e, err := kv.Get(ctx, id)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrInvalidKey):
		return nil, 0, failure.New(failure.NotFound, "no session %q", id)
	case err != nil:
		return nil, 0, failure.Wrap(failure.Unavailable, err, "session store")
	}
	st, err := k.open(id, e.Value())
	if err != nil {
		return nil, 0, err
	}
	return st, e.Revision(), nil
}

// Save implements Store.
func (k *KVStore) Save(ctx context.Context, st *internalv1.SessionState, rev uint64) error {
	kv, err := k.bucket(ctx)
	if err != nil {
		return err
	}
	val, err := k.seal(st)
	if err != nil {
		return err
	}
	_, err = kv.Update(ctx, st.GetId(), val, rev)
	switch {
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch), errors.Is(err, jetstream.ErrKeyExists):
		return conflict(st.GetId())
	case err != nil:
		return failure.Wrap(failure.Unavailable, err, "session store")
	}
	return nil
}

// Delete implements Store.
func (k *KVStore) Delete(ctx context.Context, id string) (bool, error) {
	kv, err := k.bucket(ctx)
	if err != nil {
		return false, err
	}
	if _, err := kv.Get(ctx, id); err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrInvalidKey) {
			return false, nil
		}
		return false, failure.Wrap(failure.Unavailable, err, "session store")
	}
	// Purge, not delete: the session's last value goes too.
	if err := kv.Purge(ctx, id); err != nil {
		return false, failure.Wrap(failure.Unavailable, err, "session store")
	}
	return true, nil
}

var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	zdec, _ = zstd.NewReader(nil)
)

// seal is the stored form of st: zstd, then AES-GCM with a random nonce
// ahead of the ciphertext.
func (k *KVStore) seal(st *internalv1.SessionState) ([]byte, error) {
	plain, err := proto.Marshal(st)
	if err != nil {
		return nil, failure.Wrap(failure.Internal, err, "encode session")
	}
	packed := zenc.EncodeAll(plain, nil)
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(packed)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, failure.Wrap(failure.Internal, err, "session nonce")
	}
	return k.aead.Seal(nonce, nonce, packed, []byte(st.GetId())), nil
}

func (k *KVStore) open(id string, val []byte) (*internalv1.SessionState, error) {
	ns := k.aead.NonceSize()
	if len(val) < ns {
		return nil, failure.New(failure.Internal, "session %q: stored value is damaged", id)
	}
	packed, err := k.aead.Open(nil, val[:ns], val[ns:], []byte(id))
	if err != nil {
		return nil, failure.New(failure.Internal, "session %q cannot be decrypted: the gateways must share one %s", id, envflag.SessionKey)
	}
	plain, err := zdec.DecodeAll(packed, nil)
	if err != nil {
		return nil, failure.Wrap(failure.Internal, err, "session %q", id)
	}
	st := &internalv1.SessionState{}
	if err := proto.Unmarshal(plain, st); err != nil {
		return nil, failure.Wrap(failure.Internal, err, "session %q", id)
	}
	return st, nil
}
