package extract

import (
	"context"
	"net/url"

	"distill.dev/services/extractor/readable"
)

// BlockSamples parses an HTML page, body in UTF-8, as the article profile
// does and returns every block of it with the features the block model
// reads and whether the rules keep it: what the model is trained on.
func BlockSamples(ctx context.Context, body []byte, u *url.URL) ([]readable.Sample, readable.Page, error) {
	doc, err := parseHTML(ctx, whole(body))
	if err != nil {
		return nil, readable.Page{}, err
	}
	readable.ShowStreamed(doc)
	readable.DropVariants(doc)
	readable.ShowNoscript(doc)
	kind := readable.Classify(doc, u)
	samples, err := readable.Samples(ctx, doc, kind)
	return samples, kind, err
}
