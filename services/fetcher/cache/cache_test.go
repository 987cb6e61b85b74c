package cache

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func open(t *testing.T, dir string) (*Cache, *clock) {
	t.Helper()
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	c, err := Open(dir, WithClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	return c, clk
}

func key(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return Key(u)
}

func answer(status int32, body string) *internalv1.FetcherServiceFetchResponse {
	return &internalv1.FetcherServiceFetchResponse{
		FinalUrl:        "https://example.com/final",
		Status:          status,
		ContentType:     "text/html",
		Charset:         "utf-8",
		Body:            []byte(body),
		RedirectHistory: []string{"https://example.com/start"},
	}
}

func TestRoundTrip(t *testing.T) {
	c, clk := open(t, t.TempDir())
	k := key(t, "https://example.com/start")
	want := answer(200, "<p>hello</p>")
	want.FromCache = true
	if err := c.Put(k, want); err != nil {
		t.Fatal(err)
	}
	e, ok := c.Get(k, time.Hour)
	if !ok {
		t.Fatal("miss after put")
	}
	stored := proto.CloneOf(want)
	stored.FromCache = false
	if !proto.Equal(e.Response, stored) {
		t.Errorf("got %v, want %v", e.Response, stored)
	}
	if !e.StoredAt.Equal(clk.now()) {
		t.Errorf("StoredAt = %v, want %v", e.StoredAt, clk.now())
	}
}

func TestKey(t *testing.T) {
	a := key(t, "https://example.com/a?x=1")
	if b := key(t, "https://example.com/a?x=1#part"); a != b {
		t.Error("the fragment changed the key")
	}
	if b := key(t, "https://example.com/a?x=2"); a == b {
		t.Error("the query did not change the key")
	}
	if len(a) != 64 {
		t.Errorf("key %q is not hex SHA-256", a)
	}
}

func TestFreshness(t *testing.T) {
	c, clk := open(t, t.TempDir())
	k := key(t, "https://example.com/")
	if err := c.Put(k, answer(200, "x")); err != nil {
		t.Fatal(err)
	}
	clk.advance(59 * time.Minute)
	if _, ok := c.Get(k, time.Hour); !ok {
		t.Error("a 59-minute-old entry is stale under a one-hour TTL")
	}
	if _, ok := c.Get(k, 0); ok {
		t.Error("TTL 0 served an entry")
	}
	clk.advance(time.Minute)
	if _, ok := c.Get(k, time.Hour); ok {
		t.Error("a one-hour-old entry is fresh under a one-hour TTL")
	}
	if _, ok := c.Get(k, 2*time.Hour); !ok {
		t.Error("an expired entry was deleted instead of kept for a longer TTL")
	}
}

func TestOnlySuccessesAreStored(t *testing.T) {
	for _, status := range []int32{200, 204, 304, 400, 404, 500, 503} {
		t.Run(strconv.Itoa(int(status)), func(t *testing.T) {
			c, _ := open(t, t.TempDir())
			k := key(t, "https://example.com/")
			if err := c.Put(k, answer(status, "x")); err != nil {
				t.Fatal(err)
			}
			_, ok := c.Get(k, time.Hour)
			if want := status < 400; ok != want {
				t.Errorf("stored = %v, want %v", ok, want)
			}
		})
	}
}

func TestPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "cache")
	c, _ := open(t, dir)
	k := key(t, "https://example.com/")
	if err := c.Put(k, answer(200, "x")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, entriesDir), filepath.Dir(c.path(k))} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := st.Mode().Perm(); m != 0o700 {
			t.Errorf("%s: mode %o, want 700", p, m)
		}
	}
	st, err := os.Stat(c.path(k))
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o600 {
		t.Errorf("entry mode %o, want 600", m)
	}
}

func TestOpenFailsOnUnusableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(filepath.Join(file, "cache"))
	if err == nil {
		t.Fatal("Open under a regular file succeeded")
	}
	if !strings.Contains(err.Error(), "cache dir") {
		t.Errorf("error %q does not say what failed", err)
	}
}

// Without a directory, the cache is distill's under the user's cache
// directory ($XDG_CACHE_HOME on Linux).
func TestDefaultDirIsUnderTheUserCacheDir(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", base)
	c, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, "distill"); c.Dir() != want {
		t.Errorf("Dir = %q, want %q", c.Dir(), want)
	}
}

func TestCorruptEntryIsAMissAndRemoved(t *testing.T) {
	cases := map[string]func([]byte) []byte{
		"empty":          func([]byte) []byte { return nil },
		"truncated head": func(b []byte) []byte { return b[:headerSize-1] },
		"truncated body": func(b []byte) []byte { return b[:len(b)-3] },
		"trailing bytes": func(b []byte) []byte { return append(b, 0) },
		"flipped bit":    func(b []byte) []byte { b[len(b)-5] ^= 1; return b },
		"bad magic":      func(b []byte) []byte { b[0] = 'X'; return b },
		"garbage":        func([]byte) []byte { return bytes.Repeat([]byte{0xff}, 100) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			c, _ := open(t, t.TempDir())
			k := key(t, "https://example.com/")
			if err := c.Put(k, answer(200, "<p>some body bytes</p>")); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(c.path(k))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(c.path(k), damage(b), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, ok := c.Get(k, time.Hour); ok {
				t.Fatal("a damaged entry was served")
			}
			if _, err := os.Stat(c.path(k)); !os.IsNotExist(err) {
				t.Errorf("damaged entry left in place: %v", err)
			}
		})
	}
}

func TestPruneAndClear(t *testing.T) {
	c, clk := open(t, t.TempDir())
	put := func(path string) {
		t.Helper()
		if err := c.Put(key(t, "https://example.com/"+path), answer(200, path)); err != nil {
			t.Fatal(err)
		}
	}
	put("old1")
	put("old2")
	clk.advance(2 * time.Hour)
	put("new1")
	put("new2")
	put("new3")

	entries, size, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	if entries != 5 || size <= 0 {
		t.Fatalf("Info = %d entries, %d bytes; want 5 entries", entries, size)
	}
	removed, freed, err := c.Prune(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 2 || freed <= 0 || freed >= size {
		t.Errorf("Prune = %d removed, %d freed of %d; want 2 removed", removed, freed, size)
	}
	if _, ok := c.Get(key(t, "https://example.com/new1"), time.Hour); !ok {
		t.Error("Prune removed a young entry")
	}
	removed, freed2, err := c.Clear()
	if err != nil {
		t.Fatal(err)
	}
	if removed != 3 || freed+freed2 != size {
		t.Errorf("Clear = %d removed, %d freed; want 3 and %d", removed, freed2, size-freed)
	}
	if entries, size, _ := c.Info(); entries != 0 || size != 0 {
		t.Errorf("after Clear: %d entries, %d bytes", entries, size)
	}
}

func TestPruneRemovesLeftoverTempFilesOnly(t *testing.T) {
	c, clk := open(t, t.TempDir())
	k := key(t, "https://example.com/")
	if err := c.Put(k, answer(200, "x")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(c.path(k))
	stale := filepath.Join(dir, tempPrefix+"stale")
	fresh := filepath.Join(dir, tempPrefix+"fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := clk.now().Add(-2 * tempGrace)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(fresh, clk.now(), clk.now()); err != nil {
		t.Fatal(err)
	}
	if removed, _, err := c.Prune(24 * time.Hour); err != nil || removed != 0 {
		t.Fatalf("Prune = %d, %v; want 0 entries removed", removed, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("a crashed writer's temp file was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a write in flight lost its temp file")
	}
}

// writerBody makes a body whose every byte says which writer wrote it, so
// a reader can tell a whole entry from a mix of two.
func writerBody(writer int) []byte {
	return bytes.Repeat([]byte{byte('a' + writer)}, 64<<10+writer)
}

func checkWhole(e *Entry) error {
	body := e.Response.GetBody()
	if len(body) == 0 {
		return fmt.Errorf("empty body")
	}
	w := int(body[0] - 'a')
	if !bytes.Equal(body, writerBody(w)) {
		return fmt.Errorf("body of %d bytes mixes writers", len(body))
	}
	if want := fmt.Sprintf("https://example.com/%d", w); e.Response.GetFinalUrl() != want {
		return fmt.Errorf("final_url %q with the body of writer %d", e.Response.GetFinalUrl(), w)
	}
	return nil
}

func writeLoop(c *Cache, k string, writer, n int) error {
	resp := answer(200, "")
	resp.Body = writerBody(writer)
	resp.FinalUrl = fmt.Sprintf("https://example.com/%d", writer)
	for range n {
		if err := c.Put(k, resp); err != nil {
			return err
		}
	}
	return nil
}

func TestConcurrentWritersNeverTear(t *testing.T) {
	dir := t.TempDir()
	k := key(t, "https://example.com/contended")
	const writers, rounds = 6, 50

	// Writers in other processes, as two `distill` commands would be.
	var procs []*exec.Cmd
	for w := writers; w < writers+2; w++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriterProcess$")
		cmd.Env = append(os.Environ(), "CACHE_TEST_WRITER="+dir+"|"+k+"|"+strconv.Itoa(w)+"|"+strconv.Itoa(rounds))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("writer process: %s", out.String())
			}
		})
		procs = append(procs, cmd)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	for w := range writers {
		// A Cache per goroutine, as separate processes would have.
		c, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := writeLoop(c, k, w, rounds); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			for range rounds {
				if e, ok := c.Get(k, time.Hour); ok {
					if err := checkWhole(e); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("writer process: %v", err)
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := c.Get(k, time.Hour)
	if !ok {
		t.Fatal("no entry after the writers finished")
	}
	if err := checkWhole(e); err != nil {
		t.Error(err)
	}
	if entries, _, _ := c.Info(); entries != 1 {
		t.Errorf("%d entries, want 1", entries)
	}
}

// TestHelperWriterProcess is the other process of
// TestConcurrentWritersNeverTear; it does nothing when run by itself.
func TestHelperWriterProcess(t *testing.T) {
	spec := os.Getenv("CACHE_TEST_WRITER")
	if spec == "" {
		t.Skip("runs as a child of TestConcurrentWritersNeverTear")
	}
	parts := strings.Split(spec, "|")
	w, _ := strconv.Atoi(parts[2])
	n, _ := strconv.Atoi(parts[3])
	c, err := Open(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := writeLoop(c, parts[1], w, 1); err != nil {
			t.Fatal(err)
		}
		if e, ok := c.Get(parts[1], time.Hour); ok {
			if err := checkWhole(e); err != nil {
				t.Fatal(err)
			}
		}
	}
}
