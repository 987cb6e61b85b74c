package crawl

import "distill.dev/services/platform/relevance"

// The crawl splits and stems words as the relevance package does; its
// tests know the two by their old names here.
var (
	words      = relevance.Words
	queryWords = relevance.QueryWords
)
