package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Page is one page of a corpus with its ground truth.
type Page struct {
	ID    string
	URL   string
	HTML  []byte
	Truth string
}

// LoadCorpus reads a corpus laid out as html/<id>.html and
// ground-truth.json ({id: {"articleBody", "url"}}), in id order.
func LoadCorpus(dir string) ([]Page, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "ground-truth.json"))
	if err != nil {
		return nil, fmt.Errorf("load corpus: %w", err)
	}
	var truth map[string]struct {
		ArticleBody string `json:"articleBody"`
		URL         string `json:"url"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		return nil, fmt.Errorf("load corpus: ground-truth.json: %w", err)
	}
	pages := make([]Page, 0, len(truth))
	for id, t := range truth {
		b, err := os.ReadFile(filepath.Join(dir, "html", id+".html"))
		if err != nil {
			return nil, fmt.Errorf("load corpus: %w", err)
		}
		pages = append(pages, Page{ID: id, URL: t.URL, HTML: b, Truth: t.ArticleBody})
	}
	slices.SortFunc(pages, func(a, b Page) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return pages, nil
}
