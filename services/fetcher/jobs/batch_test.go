package jobs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// These tests drive a batch through the events Run waits for, without
// NATS: a job's sequence in the jobs stream is seqBase plus its index.
const seqBase = 100

// span is a job's span that records its end.
type span struct {
	trace.Span
	ends *int
}

func (s span) End(...trace.SpanEndOption) { *s.ends++ }

// testBatch is a batch of n URLs, concurrency at a time, with what it
// delivered and how many of its spans ended.
type testBatch struct {
	*batch
	got  []*internalv1.FetchJobResult
	ends int
}

func newTestBatch(n, concurrency int) *testBatch {
	tb := &testBatch{}
	c := int32(concurrency)
	tb.batch = newBatch(quiet, "B1", urlsN(n), &distillv1.FetchOptions{Concurrency: &c}, time.Minute, func(r *internalv1.FetchJobResult) {
		tb.got = append(tb.got, r)
	})
	return tb
}

// queue stands for Dispatcher.publish: every job is queued, but those
// failing names.
func (tb *testBatch) queue(failing ...int32) func(int32) error {
	return func(idx int32) error {
		for _, f := range failing {
			if f == idx {
				return failure.New(failure.Internal, "queue job for %s: no stream", tb.urls[idx])
			}
		}
		tb.queued(idx, seqBase+uint64(idx), span{trace.SpanFromContext(context.Background()), &tb.ends})
		return nil
	}
}

// delivered lists the indexes delivered, in order.
func (tb *testBatch) delivered() []int32 {
	var out []int32
	for _, r := range tb.got {
		out = append(out, r.GetIndex())
	}
	return out
}

// resultMessage is a result's message as the batch receives it, with
// what the batch did to it.
type resultMessage struct {
	data          []byte
	acked, termed bool
}

func (m *resultMessage) Data() []byte         { return m.data }
func (m *resultMessage) Headers() nats.Header { return nil }
func (m *resultMessage) Ack() error           { m.acked = true; return nil }
func (m *resultMessage) Term() error          { m.termed = true; return nil }

func answer(batchID string, idx int32, finalURL string) *resultMessage {
	data, err := proto.Marshal(&internalv1.FetchJobResult{BatchId: batchID, Index: idx,
		Outcome: &internalv1.FetchJobResult_Result{Result: &distillv1.Distilled{FinalUrl: finalURL}}})
	if err != nil {
		panic(err)
	}
	return &resultMessage{data: data}
}

func sameIndexes(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBatchResult(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		msgs          []*resultMessage
		wantDelivered []int32
		wantAcked     []bool // per message; a message not acked is dropped (termed)
	}{
		{"an answer is delivered", []*resultMessage{answer("B1", 1, "first")}, []int32{1}, []bool{true}},
		{"a second answer to a job is acked and not delivered",
			[]*resultMessage{answer("B1", 1, "first"), answer("B1", 1, "second")}, []int32{1}, []bool{true, true}},
		{"answers to different jobs are each delivered",
			[]*resultMessage{answer("B1", 2, "first"), answer("B1", 0, "first")}, []int32{2, 0}, []bool{true, true}},
		{"an index past the batch is dropped", []*resultMessage{answer("B1", 3, "first")}, nil, []bool{false}},
		{"a negative index is dropped", []*resultMessage{answer("B1", -1, "first")}, nil, []bool{false}},
		{"another batch's answer is dropped", []*resultMessage{answer("B2", 1, "first")}, nil, []bool{false}},
		{"an undecodable message is dropped", []*resultMessage{{data: []byte{0xff, 0xff}}}, nil, []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := newTestBatch(3, 3)
			tb.fill(tb.queue())
			for _, m := range tt.msgs {
				tb.result(context.Background(), m)
			}
			if got := tb.delivered(); !sameIndexes(got, tt.wantDelivered) {
				t.Fatalf("delivered %v, want %v", got, tt.wantDelivered)
			}
			for _, r := range tb.got {
				if r.GetResult().GetFinalUrl() != "first" {
					t.Errorf("delivered %v, want the first answer", r)
				}
			}
			for i, m := range tt.msgs {
				if m.acked != tt.wantAcked[i] || m.termed == tt.wantAcked[i] {
					t.Errorf("message %d: acked %v, termed %v; want acked %v", i, m.acked, m.termed, tt.wantAcked[i])
				}
			}
			if tb.remaining != 3-len(tt.wantDelivered) || len(tb.inFlight) != 3-len(tt.wantDelivered) || tb.ends != len(tt.wantDelivered) {
				t.Errorf("remaining %d, in flight %d, spans ended %d after %d answers", tb.remaining, len(tb.inFlight), tb.ends, len(tt.wantDelivered))
			}
		})
	}
}

func TestBatchExhausted(t *testing.T) {
	t.Parallel()
	const deliveries = 5
	giveUp := func(idx int32) exhaustedJob {
		return exhaustedJob{StreamSeq: seqBase + uint64(idx), Deliveries: deliveries}
	}
	tests := []struct {
		name     string
		answered []int32 // jobs answered before the advisories
		ads      []exhaustedJob
		wantOurs []bool
		wantGone []int32 // delivered as given up
	}{
		{"a job still open is answered as given up", nil, []exhaustedJob{giveUp(1)}, []bool{true}, []int32{1}},
		{"a job already answered is dropped, not answered again", []int32{1}, []exhaustedJob{giveUp(1)}, []bool{true}, nil},
		{"another batch's job is left alone", nil, []exhaustedJob{{StreamSeq: 7, Deliveries: deliveries}}, []bool{false}, nil},
		{"a second advisory for a job is not ours to drop again", nil, []exhaustedJob{giveUp(2), giveUp(2)}, []bool{true, false}, []int32{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := newTestBatch(3, 3)
			tb.fill(tb.queue())
			for _, idx := range tt.answered {
				tb.result(context.Background(), answer("B1", idx, "page"))
			}
			before := len(tb.got)
			for i, ex := range tt.ads {
				if ours := tb.exhausted(ex); ours != tt.wantOurs[i] {
					t.Errorf("advisory %d (seq %d): ours = %v, want %v", i, ex.StreamSeq, ours, tt.wantOurs[i])
				}
			}
			gone := tb.got[before:]
			if len(gone) != len(tt.wantGone) {
				t.Fatalf("delivered %v after the advisories, want given-up answers for %v", gone, tt.wantGone)
			}
			for i, r := range gone {
				e := r.GetError()
				if r.GetIndex() != tt.wantGone[i] || e.GetCode() != failure.Internal || r.GetUrl() != tb.urls[r.GetIndex()] ||
					!strings.Contains(e.GetMessage(), tb.urls[r.GetIndex()]) || !strings.Contains(e.GetMessage(), "5 deliveries") {
					t.Errorf("given up = %v, want an Internal error naming %s and its %d deliveries", r, tb.urls[tt.wantGone[i]], deliveries)
				}
			}
		})
	}
}

func TestBatchTimeout(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		answered []int32
		now      time.Time
		wantOut  []int32 // answered as timed out
	}{
		{"nothing is late yet", nil, t0.Add(-time.Second), nil},
		{"a deadline reached is not yet passed", nil, t0, nil},
		{"the jobs past their deadline time out", nil, t0.Add(1500 * time.Millisecond), []int32{0, 1}},
		{"a job already answered does not time out", []int32{0}, t0.Add(1500 * time.Millisecond), []int32{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := newTestBatch(3, 3)
			tb.fill(tb.queue())
			for idx := range tb.inFlight {
				tb.inFlight[idx] = t0.Add(time.Duration(idx) * time.Second)
			}
			for _, idx := range tt.answered {
				tb.result(context.Background(), answer("B1", idx, "page"))
			}
			before := len(tb.got)
			tb.timeout(tt.now)
			late := map[int32]bool{}
			for _, r := range tb.got[before:] {
				late[r.GetIndex()] = true
				if e := r.GetError(); e.GetCode() != failure.Timeout || !strings.Contains(e.GetMessage(), "no worker answered for "+r.GetUrl()+" within 1m0s") {
					t.Errorf("timed out = %v, want a Timeout naming the URL and the budget", r)
				}
			}
			if len(late) != len(tt.wantOut) || len(tb.got)-before != len(tt.wantOut) {
				t.Fatalf("timed out %v, want %v", tb.got[before:], tt.wantOut)
			}
			for _, idx := range tt.wantOut {
				if !late[idx] {
					t.Errorf("job %d did not time out", idx)
				}
				if _, ok := tb.inFlight[idx]; ok {
					t.Errorf("job %d timed out but is still in flight", idx)
				}
			}
			if want := 3 - len(tt.answered) - len(tt.wantOut); len(tb.inFlight) != want || tb.remaining != want {
				t.Errorf("in flight %d, remaining %d, want %d", len(tb.inFlight), tb.remaining, want)
			}
		})
	}
}

func TestBatchCancel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		answered []int32
	}{
		{"nothing answered", nil},
		{"some answered", []int32{0, 1}},
		{"everything answered", []int32{0, 1, 2, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Two in flight, the rest never queued: cancelling answers both.
			tb := newTestBatch(5, 2)
			for _, idx := range tt.answered {
				tb.fill(tb.queue())
				tb.result(context.Background(), answer("B1", idx, "page"))
			}
			tb.fill(tb.queue())
			before := len(tb.got)
			tb.cancel(context.Canceled)
			if tb.remaining != 0 || len(tb.inFlight) != 0 {
				t.Fatalf("after cancel: remaining %d, in flight %d", tb.remaining, len(tb.inFlight))
			}
			if n := len(tb.got) - before; n != 5-len(tt.answered) {
				t.Fatalf("cancel delivered %d, want the %d still open", n, 5-len(tt.answered))
			}
			for _, r := range tb.got[before:] {
				if e := r.GetError(); e.GetCode() != failure.Canceled || !strings.Contains(e.GetMessage(), r.GetUrl()) {
					t.Errorf("cancelled = %v, want Canceled naming its URL", r)
				}
			}
			if tb.ends != tb.next {
				t.Errorf("%d jobs queued but %d spans ended", tb.next, tb.ends)
			}
		})
	}
}

func TestBatchFill(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		urls, limit  int
		failing      []int32
		wantInFlight []int32
		wantFailed   []int32 // answered with the publish error
	}{
		{"up to the concurrency", 5, 2, nil, []int32{0, 1}, nil},
		{"every URL when fewer", 2, 4, nil, []int32{0, 1}, nil},
		{"a job that cannot be queued is answered and the next is queued", 5, 2, []int32{1}, []int32{0, 2}, []int32{1}},
		{"nothing can be queued", 3, 2, []int32{0, 1, 2}, nil, []int32{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := newTestBatch(tt.urls, tt.limit)
			tb.fill(tb.queue(tt.failing...))
			for _, idx := range tt.wantInFlight {
				if _, ok := tb.inFlight[idx]; !ok {
					t.Errorf("job %d not in flight", idx)
				}
			}
			if len(tb.inFlight) != len(tt.wantInFlight) {
				t.Errorf("in flight %v, want %v", tb.inFlight, tt.wantInFlight)
			}
			if got := tb.delivered(); !sameIndexes(got, tt.wantFailed) {
				t.Fatalf("answered %v, want %v", got, tt.wantFailed)
			}
			for _, r := range tb.got {
				if e := r.GetError(); e.GetCode() != failure.Internal || !strings.Contains(e.GetMessage(), "no stream") {
					t.Errorf("answer = %v, want the publish error", r)
				}
			}
			if tb.remaining != tt.urls-len(tt.wantFailed) {
				t.Errorf("remaining %d, want %d", tb.remaining, tt.urls-len(tt.wantFailed))
			}
		})
	}
	t.Run("an answer frees a slot", func(t *testing.T) {
		t.Parallel()
		tb := newTestBatch(3, 2)
		tb.fill(tb.queue())
		tb.fill(tb.queue())
		if tb.next != 2 {
			t.Fatalf("with none answered, %d jobs queued, want 2", tb.next)
		}
		tb.result(context.Background(), answer("B1", 0, "page"))
		tb.fill(tb.queue())
		if _, ok := tb.inFlight[2]; !ok || tb.next != 3 {
			t.Fatalf("after an answer: in flight %v, next %d", tb.inFlight, tb.next)
		}
	})
}

func TestUntilNextDeadline(t *testing.T) {
	t.Parallel()
	tb := newTestBatch(3, 3)
	if got := tb.untilNextDeadline(); got != time.Hour {
		t.Errorf("with nothing in flight: %s, want an hour", got)
	}
	now := time.Now()
	tb.inFlight[0] = now.Add(40 * time.Minute)
	tb.inFlight[1] = now.Add(20 * time.Minute)
	if got := tb.untilNextDeadline(); got > 20*time.Minute || got < 19*time.Minute {
		t.Errorf("with deadlines in 40 and 20 minutes: %s, want about 20 minutes", got)
	}
	tb.inFlight[2] = now.Add(-time.Minute)
	if got := tb.untilNextDeadline(); got != time.Millisecond {
		t.Errorf("with a deadline passed: %s, want the 1ms floor", got)
	}
}

func TestErrorResultNamesItsJob(t *testing.T) {
	t.Parallel()
	tb := newTestBatch(3, 3)
	r := tb.errorResult(2, failure.New(failure.Blocked, "no"))
	if r.GetJobId() != "B1.2" || r.GetBatchId() != "B1" || r.GetIndex() != 2 || r.GetUrl() != tb.urls[2] || r.GetError().GetCode() != failure.Blocked {
		t.Fatalf("errorResult = %v", r)
	}
}
