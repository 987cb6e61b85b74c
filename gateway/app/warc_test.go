package app

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/warc"
)

// A Recorder keeps the exchanges of the fetcher in this process: every
// page a System fetches reaches it; a cluster gateway, whose fetchers run
// elsewhere, refuses one.
func TestRecorder(t *testing.T) {
	t.Parallel()
	srv := site(t)
	w, err := warc.Open(filepath.Join(t.TempDir(), "run.warc"), warc.Info{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := &counting{Writer: w}

	if _, err := Open(context.Background(), quiet, Config{Cluster: &ClusterConfig{NATSURL: "nats://127.0.0.1:1"}, Recorder: rec}); !errors.Is(err, ErrRecorderInCluster) {
		t.Errorf("a gateway with a Recorder: %v, want ErrRecorderInCluster", err)
	}

	sys, err := Open(context.Background(), quiet, Config{AllowLocal: true, CacheDir: t.TempDir(), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if _, err := sys.Do(context.Background(), pipeline.Request{URL: srv.URL + "/page", Options: &distillv1.FetchOptions{AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF}}); err != nil {
		t.Fatal(err)
	}
	if n := rec.n.Load(); n != 1 {
		t.Errorf("%d exchanges recorded, want 1", n)
	}
}

// counting is a warc.Writer that counts what it is handed.
type counting struct {
	*warc.Writer
	n atomic.Int32
}

func (c *counting) Record(ex warc.Exchange) {
	c.n.Add(1)
	c.Writer.Record(ex)
}
