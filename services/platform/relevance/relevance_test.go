package relevance

import (
	"math"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"case and punctuation", "Retry, TIMEOUT!", "retry timeout"},
		{"camel case gives its parts", "MaxRetries", "maxretries max retries"},
		{"snake case gives its parts", "max_retries", "max_retries max retries"},
		{"possessive dropped", "the language's rules", "the language rules"},
		{"curly apostrophe", "don’t", "dont"},
		{"link target left out", "see [the guide](https://example.com/x \"Guide\") now", "see the guide now"},
		{"unspaced script by rune", "東京タワー", "東 京 タ ワ ー"},
		{"letters beyond ASCII", "Déploiement façile", "déploiement façile"},
		{"digits", "p/17 v2", "p 17 v2"},
		{"nothing", " -- ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(Split(tt.in), " "); got != tt.want {
				t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ word, want string }{
		{"retries", "retry"},
		{"retry", "retry"},
		{"timeouts", "timeout"},
		{"configure", "configur"},
		{"configured", "configur"},
		{"configuring", "configur"},
		{"rotates", "rotat"},
		{"boxes", "box"},
		{"classes", "class"},
		{"watches", "watch"},
		{"class", "class"},
		{"status", "status"},
		{"analysis", "analysis"},
		{"agreed", "agreed"},
		{"tied", "tied"},
		{"keys", "key"},
		{"api", "api"},
		{"ring", "ring"},
	}
	for _, tt := range tests {
		if got := Stem(tt.word); got != tt.want {
			t.Errorf("Stem(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestWords(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Configuring TLS certificates", "configur tls certificat"},
		{"MaxRetries", "maxretry max retry"},
		{"Rotating API keys", "rotat api key"},
		{"[Retries](https://example.com/retries) explained", "retry explain"},
	}
	for _, tt := range tests {
		if got := strings.Join(Words(tt.in), " "); got != tt.want {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQueryWords(t *testing.T) {
	tests := []struct{ name, query, want string }{
		{"stop words dropped", "How do I change the retry timeout?", "chang retry timeout"},
		{"repeats once, by stem", "retries, retry and timeouts", "retry timeout"},
		{"request words are stop words", "please explain how to list the keys", "key"},
		{"stop words alone", "what is it?", ""},
		{"stemmed stop words", "using things", ""},
		{"identifier", "set max_retries", "set max_retry max retry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(QueryWords(tt.query), " "); got != tt.want {
				t.Errorf("QueryWords(%q) = %q, want %q", tt.query, got, tt.want)
			}
		})
	}
}

func TestStopWord(t *testing.T) {
	// StopWord takes words as Words gives them: "does" is "doe".
	for _, w := range []string{"the", "how", "does", "explain", "things", "using"} {
		if !StopWord(Stem(w)) {
			t.Errorf("StopWord(Stem(%q)) = false", w)
		}
	}
	for _, w := range []string{"retry", "api", "install", "change", "set"} {
		if StopWord(Stem(w)) {
			t.Errorf("StopWord(Stem(%q)) = true", w)
		}
	}
}

func TestIDF(t *testing.T) {
	const n = 10
	prev := math.Inf(1)
	for df := 0; df <= n; df++ {
		w := IDF(n, df)
		if w <= 0 || w >= prev {
			t.Fatalf("IDF(%d, %d) = %v after %v: want positive and falling as more documents hold the word", n, df, w, prev)
		}
		prev = w
	}
	if got, want := IDF(n, 1), math.Log(1+9.5/1.5); math.Abs(got-want) > 1e-12 {
		t.Errorf("IDF(10, 1) = %v, want %v", got, want)
	}
	if IDF(n, n+3) != IDF(n, n) || IDF(n, -1) != IDF(n, 0) {
		t.Errorf("a df outside 0..n: IDF(10, 13) = %v, IDF(10, -1) = %v", IDF(n, n+3), IDF(n, -1))
	}
	if IDF(n, n) > 0.05 {
		t.Errorf("a word every document holds weighs %v, want next to nothing", IDF(n, n))
	}
}

func TestBM25(t *testing.T) {
	const idf = 2.0
	if got := BM25(idf, 0, 10, 10); got != 0 {
		t.Errorf("an absent word scores %v", got)
	}
	// An average document: tf(k1+1)/(tf+k1).
	if got, want := BM25(idf, 1, 10, 10), idf*2.2/2.2; math.Abs(got-want) > 1e-12 {
		t.Errorf("once in an average document: %v, want %v", got, want)
	}
	once, twice, often := BM25(idf, 1, 10, 10), BM25(idf, 2, 10, 10), BM25(idf, 50, 10, 10)
	if !(once < twice && twice < often && often < idf*(k1+1)) {
		t.Errorf("repeats score %v, %v, %v: want rising towards %v", once, twice, often, idf*(k1+1))
	}
	if short, long := BM25(idf, 1, 5, 10), BM25(idf, 1, 40, 10); !(short > once && long < once) {
		t.Errorf("short %v, average %v, long %v: want a long document discounted", short, once, long)
	}
	if got := BM25(idf, 1, 3, 0); got <= 0 || math.IsInf(got, 0) || math.IsNaN(got) {
		t.Errorf("an average length of 0 gives %v", got)
	}
}
