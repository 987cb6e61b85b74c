package harness

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Page is one page of a corpus with its ground truth.
type Page struct {
	ID   string
	URL  string
	HTML []byte
	// Truth is the text the page's extraction is scored against.
	Truth string
	// Type is the page's type in a typed corpus (one of PageTypes), empty
	// in an untyped one.
	Type string
}

// pageTypes are WCXB's page types, in the order its tables list them,
// and "other" for any type it does not name.
var pageTypes = []string{"article", "forum", "product", "collection", "listing", "documentation", "service", "other"}

// PageTypes are WCXB's page types, in the order its tables list them, and
// "other" for any type it does not name: a copy the caller may keep.
func PageTypes() []string { return slices.Clone(pageTypes) }

// Layout is how a corpus is stored on disk.
type Layout int

const (
	// Scrapinghub is html/<id>.html with one ground-truth.json
	// ({id: {"articleBody", "url"}}), untyped.
	Scrapinghub Layout = iota
	// WCXB is html/<id>.html.gz with one ground-truth/<id>.json per page
	// (url, ground_truth.main_content, _internal.page_type.primary).
	WCXB
)

func (l Layout) String() string {
	if l == WCXB {
		return "WCXB"
	}
	return "scrapinghub"
}

// Corpus is a loaded corpus.
type Corpus struct {
	// Dir is the directory the pages were read from: for a WCXB
	// repository, its dev split.
	Dir    string
	Layout Layout
	// Pages are in id order.
	Pages []Page
}

// ErrNotCorpus is returned for a directory in neither layout.
var ErrNotCorpus = errors.New("not a corpus: want ground-truth.json and html/<id>.html, or WCXB's ground-truth/<id>.json and html/<id>.html.gz")

// LoadCorpus reads the corpus in dir, recognising its layout. A WCXB
// repository's root stands for its dev split: the held-out test split is
// never read.
func LoadCorpus(dir string) (Corpus, error) {
	split, layout, err := detect(dir)
	if err != nil {
		return Corpus{}, err
	}
	var pages []Page
	if layout == WCXB {
		pages, err = loadWCXB(split)
	} else {
		pages, err = loadScrapinghub(split)
	}
	if err != nil {
		return Corpus{}, err
	}
	slices.SortFunc(pages, func(a, b Page) int { return strings.Compare(a.ID, b.ID) })
	return Corpus{Dir: split, Layout: layout, Pages: pages}, nil
}

func detect(dir string) (string, Layout, error) {
	switch {
	case isFile(filepath.Join(dir, "ground-truth.json")):
		return dir, Scrapinghub, nil
	case isDir(filepath.Join(dir, "ground-truth")) && isDir(filepath.Join(dir, "html")):
		return dir, WCXB, nil
	case isDir(filepath.Join(dir, "dev", "ground-truth")) && isDir(filepath.Join(dir, "dev", "html")):
		return filepath.Join(dir, "dev"), WCXB, nil
	}
	return "", 0, fmt.Errorf("load corpus %s: %w", dir, ErrNotCorpus)
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func loadScrapinghub(dir string) ([]Page, error) {
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
	return pages, nil
}

// wcxbTruth is the part of a WCXB ground-truth file the benchmark reads.
type wcxbTruth struct {
	URL      string `json:"url"`
	Internal struct {
		PageType json.RawMessage `json:"page_type"`
	} `json:"_internal"`
	GroundTruth struct {
		// A file without main_content scores against an empty text, as
		// in the benchmark's evaluator.
		MainContent string `json:"main_content"`
	} `json:"ground_truth"`
}

func loadWCXB(dir string) ([]Page, error) {
	files, err := filepath.Glob(filepath.Join(dir, "ground-truth", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("load corpus: %w", err)
	}
	pages := make([]Page, 0, len(files))
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".json")
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("load corpus: %w", err)
		}
		var t wcxbTruth
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("load corpus: %s: %w", f, err)
		}
		typ, err := pageType(t.Internal.PageType)
		if err != nil {
			return nil, fmt.Errorf("load corpus: %s: page_type: %w", f, err)
		}
		html, err := readWCXBPage(dir, id)
		if err != nil {
			return nil, fmt.Errorf("load corpus: %w", err)
		}
		pages = append(pages, Page{ID: id, URL: t.URL, HTML: html, Truth: t.GroundTruth.MainContent, Type: typ})
	}
	return pages, nil
}

// pageType reads _internal.page_type as the benchmark's evaluator does: an
// object's primary or a bare string, article when absent, category as
// collection.
func pageType(raw json.RawMessage) (string, error) {
	var typ string
	switch raw = bytes.TrimSpace(raw); {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &typ); err != nil {
			return "", err
		}
	default:
		var obj struct {
			Primary string `json:"primary"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return "", err
		}
		typ = obj.Primary
	}
	switch typ {
	case "":
		return "article", nil
	case "category":
		return "collection", nil
	}
	if !slices.Contains(pageTypes, typ) {
		return "other", nil
	}
	return typ, nil
}

// readWCXBPage reads html/<id>.html.gz, or html/<id>.html for a split
// someone unpacked.
func readWCXBPage(dir, id string) ([]byte, error) {
	path := filepath.Join(dir, "html", id+".html.gz")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		if b, err2 := os.ReadFile(filepath.Join(dir, "html", id+".html")); err2 == nil {
			return b, nil
		}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
