package crawl

import (
	"slices"
	"testing"
)

func TestFrontier(t *testing.T) {
	type op struct {
		push  *Entry
		start string // frontier.started
	}
	e := func(key string, depth int, score float64) op {
		return op{push: &Entry{URL: "https://example.com/" + key, Key: key, Depth: depth, Score: score}}
	}
	tests := []struct {
		name      string
		bestFirst bool
		ops       []op
		want      []string // keys in the order pop gives them
	}{
		{"breadth first: by depth, then as found", false,
			[]op{e("c", 2, 0), e("a", 1, 0), e("b", 1, 0)}, []string{"a", "b", "c"}},
		{"breadth first ignores scores", false,
			[]op{e("a", 1, 0.1), e("b", 1, 0.9)}, []string{"a", "b"}},
		{"best first: by score, then depth, then as found", true,
			[]op{e("a", 1, 0.2), e("b", 2, 0.9), e("c", 1, 0.9), e("d", 1, 0.2)}, []string{"c", "b", "a", "d"}},
		{"a URL is queued once", false,
			[]op{e("a", 1, 0), e("a", 1, 0), e("b", 1, 0)}, []string{"a", "b"}},
		{"found again with a better score, it moves up", true,
			[]op{e("a", 1, 0.5), e("b", 1, 0.2), e("b", 1, 0.8)}, []string{"b", "a"}},
		{"found again nearer the start, it keeps the lesser depth", false,
			[]op{e("a", 2, 0), e("b", 2, 0), e("b", 1, 0)}, []string{"b", "a"}},
		{"a worse score changes nothing", true,
			[]op{e("a", 1, 0.5), e("b", 1, 0.6), e("b", 1, 0.1)}, []string{"b", "a"}},
		{"a page reached by a redirect is not queued again", false,
			[]op{e("a", 1, 0), {start: "b"}, e("b", 1, 0), {start: "a"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFrontier(tt.bestFirst)
			for _, o := range tt.ops {
				if o.push != nil {
					f.push(*o.push)
				} else {
					f.started(o.start)
				}
			}
			var got []string
			for {
				e, ok := f.pop()
				if !ok {
					break
				}
				got = append(got, e.Key)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("order %q, want %q", got, tt.want)
			}
			for _, k := range got {
				if f.push(Entry{Key: k, Depth: 0, Score: 1}) {
					t.Errorf("%s was queued again after it was started", k)
				}
			}
		})
	}
}

func TestFrontierRequeue(t *testing.T) {
	f := newFrontier(false)
	f.push(Entry{Key: "a", Depth: 1})
	f.push(Entry{Key: "b", Depth: 1})
	a, _ := f.pop()
	// A page in flight when the crawl died goes back, in its old place.
	f.requeue(a)
	if got, _ := f.pop(); got.Key != "a" {
		t.Errorf("popped %s after requeue, want a (found first)", got.Key)
	}
}
