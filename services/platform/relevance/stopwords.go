package relevance

import "strings"

// StopWord reports whether w, a word as Words gives it, is one a question
// is made of rather than about ("how", "the", "does", "explain"). Such
// words are dropped from questions before anything is scored.
func StopWord(w string) bool {
	return stopWords[w]
}

// stopWords are the stop words, stemmed as Words stems a question's.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because
		been before being below between both but by can could did do does doing down during each few for from
		further had has have having he her here hers herself him himself his how i if in into is it its itself
		just me more most my myself no nor not now of off on once only or other our ours ourselves out over own
		same she should so some such than that the their theirs them themselves then there these they this those
		through to too under until up very was we were what when where which while who whom why will with would
		you your yours yourself yourselves tell show explain describe give find list please much many get got
		use using used way ways thing things`) {
		m[Stem(w)] = true
	}
	return m
}()
