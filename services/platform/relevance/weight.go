package relevance

import "math"

// BM25's usual constants: how fast repeats of a word stop counting, and
// how much a long document is discounted.
const (
	k1 = 1.2
	b  = 0.75
)

// IDF is how much a word held by df of n documents tells them apart:
// BM25's inverse document frequency, log(1 + (n-df+0.5)/(df+0.5)). A word
// few documents hold weighs much; one every document holds weighs little,
// never below zero; a word none holds weighs the most. A df outside 0 to
// n is taken as the nearer bound.
func IDF(n, df int) float64 {
	df = min(max(df, 0), max(n, 0))
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// BM25 is a word's score in one document: its weight idf times its count
// tf there, where repeats count less and less and a document longer than
// the average (both lengths in words) is discounted. It is 0 when tf is.
func BM25(idf, tf, length, avgLength float64) float64 {
	if tf == 0 {
		return 0
	}
	return idf * tf * (k1 + 1) / (tf + k1*(1-b+b*length/max(avgLength, 1)))
}
