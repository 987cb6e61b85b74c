package pick

import (
	"fmt"
	"strings"

	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xpath"

	"distill.dev/proto/failure"
	"distill.dev/services/extractor/internal/halt"
)

// Bounds on an XPath expression. The shape bounds refuse what no real
// expression needs before anything is fetched; the step budget bounds
// what a short expression can still cost on a large page, such as a
// predicate that searches the whole page for each element it filters.
const (
	// MaxXPathBytes is the longest expression accepted.
	MaxXPathBytes = 1024
	// MaxXPathNesting is how deep predicates may nest inside one another.
	MaxXPathNesting = 3
	// MaxXPathSteps is the most location steps (a / or //) an
	// expression may hold, predicates included.
	MaxXPathSteps = 64
	// MaxXPathMoves is the most moves from node to node one evaluation
	// may make: about a hundred times what a search of a large page
	// (100,000 elements, a few moves each) takes.
	MaxXPathMoves = 1 << 25
)

// CompileXPath checks an XPath 1.0 expression against the bounds and
// compiles it.
func CompileXPath(expr string) (e *xpath.Expr, err error) {
	if len(expr) > MaxXPathBytes {
		return nil, failure.New(failure.InvalidArgument, "invalid XPath %s: %d bytes long, over the limit of %d", quote(expr), len(expr), MaxXPathBytes)
	}
	nesting, steps := measureXPath(expr)
	switch {
	case nesting > MaxXPathNesting:
		return nil, failure.New(failure.InvalidArgument, "invalid XPath %s: nests predicates %d deep, over the limit of %d", quote(expr), nesting, MaxXPathNesting)
	case steps > MaxXPathSteps:
		return nil, failure.New(failure.InvalidArgument, "invalid XPath %s: %d location steps, over the limit of %d", quote(expr), steps, MaxXPathSteps)
	}
	// The parser is not ours: a panic on some odd input is a bad
	// argument, not a crash.
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, failure.New(failure.InvalidArgument, "invalid XPath %s: %v", quote(expr), r)
		}
	}()
	e, err = xpath.Compile(expr)
	if err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "invalid XPath %s", quote(expr))
	}
	return e, nil
}

// measureXPath returns how deep an expression nests its predicates and
// how many location steps it has, skipping string literals. It does not
// trust expr to be well formed: the compiler refuses a malformed one.
func measureXPath(expr string) (nesting, steps int) {
	depth := 0
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; c {
		case '"', '\'':
			for i++; i < len(expr) && expr[i] != c; i++ {
			}
		case '[':
			depth++
			nesting = max(nesting, depth)
		case ']':
			depth = max(depth-1, 0)
		case '/':
			steps++
			if i+1 < len(expr) && expr[i+1] == '/' {
				i++
			}
		}
	}
	return nesting, steps
}

// budget is shared by the navigators of one evaluation: every move counts
// against MaxXPathMoves and looks at the context now and then. Once either
// ends, every move fails, so the engine runs out of nodes and returns.
type budget struct {
	tick  *halt.Ticker
	moves int
	limit int
	over  bool
}

func (b *budget) ok() bool {
	b.moves++
	if b.moves > b.limit {
		b.over = true
	}
	return !b.over && !b.tick.Stop()
}

// err is the error for an evaluation cut short, or nil.
func (b *budget) err(expr string) error {
	if b.over {
		return failure.New(failure.InvalidArgument, "XPath %s: more than %d moves on this page; narrow it (fewer // searches inside predicates)", quote(expr), b.limit)
	}
	return b.tick.Err("evaluating the XPath")
}

// navigator is htmlquery's navigator with every move paid from a budget.
type navigator struct {
	*htmlquery.NodeNavigator
	b *budget
}

var _ xpath.NodeNavigator = (*navigator)(nil)

func (n *navigator) Copy() xpath.NodeNavigator {
	return &navigator{NodeNavigator: n.NodeNavigator.Copy().(*htmlquery.NodeNavigator), b: n.b}
}

func (n *navigator) MoveToParent() bool { return n.b.ok() && n.NodeNavigator.MoveToParent() }
func (n *navigator) MoveToNextAttribute() bool {
	return n.b.ok() && n.NodeNavigator.MoveToNextAttribute()
}
func (n *navigator) MoveToChild() bool    { return n.b.ok() && n.NodeNavigator.MoveToChild() }
func (n *navigator) MoveToFirst() bool    { return n.b.ok() && n.NodeNavigator.MoveToFirst() }
func (n *navigator) MoveToNext() bool     { return n.b.ok() && n.NodeNavigator.MoveToNext() }
func (n *navigator) MoveToPrevious() bool { return n.b.ok() && n.NodeNavigator.MoveToPrevious() }

func (n *navigator) MoveTo(other xpath.NodeNavigator) bool {
	o, ok := other.(*navigator)
	return ok && n.NodeNavigator.MoveTo(o.NodeNavigator)
}

// evaluate runs e from nav and returns its nodes (navigators positioned on
// each, in the order the engine gives them) or its scalar: a float64,
// string or bool. It stops after limit nodes but counts the rest.
func evaluate(e *xpath.Expr, nav *navigator, limit int) (nodes []*navigator, total int, scalar any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = failure.New(failure.InvalidArgument, "XPath %s: %v", quote(e.String()), r)
		}
	}()
	switch v := e.Evaluate(nav).(type) {
	case *xpath.NodeIterator:
		for v.MoveNext() {
			// The whitespace between tags is not text anyone picks.
			if c := v.Current(); c.NodeType() == xpath.TextNode && strings.TrimSpace(c.Value()) == "" {
				continue
			}
			if total < limit {
				nodes = append(nodes, v.Current().Copy().(*navigator))
			}
			total++
		}
	case float64, string, bool:
		scalar = v
	default:
		return nil, 0, nil, failure.New(failure.InvalidArgument, "XPath %s: gives a %T", quote(e.String()), v)
	}
	return nodes, total, scalar, nav.b.err(e.String())
}

// scalarString writes an XPath scalar as XPath's string() would.
func scalarString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return fmt.Sprint(v)
	case float64:
		return xpathNumber(v)
	}
	return ""
}

// xpathNumber writes a number as XPath's string() does: integers without
// a decimal point.
func xpathNumber(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprint(f)
}
