package pick

import (
	"regexp"
	"strings"

	"github.com/andybalholm/cascadia"

	"distill.dev/proto/failure"
)

// Bounds on a CSS selector (--selector, --select, a --field). cascadia matches a :has() by searching the
// subtree of every element it is tried on, so each :has() nested inside
// another multiplies the work by the page's size: one hostile selector ran
// for 11.5 CPU-minutes. Real selectors stay far inside these.
const (
	// MaxSelectorBytes is the longest selector accepted.
	MaxSelectorBytes = 1024
	// MaxSelectorNesting is how deep functional pseudo-classes (:not(),
	// :is(), :where(), :has(), ...) may nest inside one another.
	MaxSelectorNesting = 3
	// MaxSelectorHasDepth is how many :has() may nest: one, never a
	// :has() inside another.
	MaxSelectorHasDepth = 1
	// MaxSelectorParts is the most compound selectors (div.a, p:first-child)
	// a selector may join, with combinators, commas or inside
	// pseudo-classes.
	MaxSelectorParts = 64
)

// CompileCSS checks a CSS selector against the bounds above and parses
// it: an error naming the problem when cascadia cannot parse it or it is
// over a bound, nil and no error for an empty one.
func CompileCSS(sel string) (cascadia.Selector, error) {
	if strings.TrimSpace(sel) == "" {
		return nil, nil
	}
	if len(sel) > MaxSelectorBytes {
		return nil, failure.New(failure.InvalidArgument, "invalid selector %s: %d bytes long, over the limit of %d", quoteSelector(sel), len(sel), MaxSelectorBytes)
	}
	m := measureSelector(sel)
	switch {
	case m.hasDepth > MaxSelectorHasDepth:
		return nil, failure.New(failure.InvalidArgument, "invalid selector %s: nests :has() %d deep, over the limit of %d (a :has() inside a :has() searches every subtree of every subtree)", quoteSelector(sel), m.hasDepth, MaxSelectorHasDepth)
	case m.nesting > MaxSelectorNesting:
		return nil, failure.New(failure.InvalidArgument, "invalid selector %s: nests pseudo-classes %d deep, over the limit of %d", quoteSelector(sel), m.nesting, MaxSelectorNesting)
	case m.parts > MaxSelectorParts:
		return nil, failure.New(failure.InvalidArgument, "invalid selector %s: joins %d compound selectors, over the limit of %d", quoteSelector(sel), m.parts, MaxSelectorParts)
	}
	s, err := cascadia.Compile(sel)
	if err != nil {
		// ErrorCode has no code for a bad argument other than a URL.
		return nil, failure.Wrap(failure.InvalidArgument, err, "invalid selector %s", quoteSelector(sel))
	}
	return s, nil
}

// quoteSelector quotes a selector for an error message, shortened: the
// message is one line, and the selector may be a kilobyte.
func quoteSelector(sel string) string {
	const show = 80
	if len(sel) <= show {
		return `"` + sel + `"`
	}
	cut := show
	for cut > 0 && !utf8RuneStart(sel[cut]) {
		cut--
	}
	return `"` + sel[:cut] + `..."`
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// selectorShape is what CheckSelector bounds.
type selectorShape struct {
	nesting  int // deepest nesting of functional pseudo-classes
	hasDepth int // deepest nesting of :has()
	parts    int // compound selectors
}

// nestingPseudos are the functional pseudo-classes whose argument is
// itself a selector; :has() and cascadia's :haschild() search below the
// element.
var nestingPseudos = map[string]bool{
	"not": true, "is": true, "where": true, "has": true, "haschild": true,
}

// measureSelector scans sel as CSS tokens, skipping strings and escapes,
// for the shape of its selectors. It runs before cascadia parses, so it
// must not trust sel to be well formed; a malformed one is then refused by
// the parser.
func measureSelector(sel string) selectorShape {
	var m selectorShape
	// Each open parenthesis: whether it opened a selector argument, and
	// whether that argument is a :has().
	type frame struct{ selector, has bool }
	var stack []frame
	nesting, has := 0, 0
	boundary := true // at the start of a compound selector
	for i := 0; i < len(sel); i++ {
		c := sel[i]
		switch {
		case c == '\\':
			i++ // the escaped character is part of a name
			if boundary {
				m.parts++
				boundary = false
			}
		case c == '"' || c == '\'':
			for i++; i < len(sel) && sel[i] != c; i++ {
				if sel[i] == '\\' {
					i++
				}
			}
		case c == '(':
			// The pseudo-class name runs back from the parenthesis to its
			// colon.
			j := i
			for j > 0 && isNameByte(sel[j-1]) {
				j--
			}
			name := strings.ToLower(sel[j:i])
			f := frame{}
			if j > 0 && sel[j-1] == ':' && nestingPseudos[name] {
				f = frame{selector: true, has: name == "has" || name == "haschild"}
				nesting++
				m.nesting = max(m.nesting, nesting)
				if f.has {
					has++
					m.hasDepth = max(m.hasDepth, has)
				}
			}
			stack = append(stack, f)
			boundary = true
			if !f.selector {
				// An+B, a language or a string: not selectors. Skip to
				// the closing parenthesis.
				for i+1 < len(sel) && sel[i+1] != ')' {
					i++
				}
			}
		case c == ')':
			if n := len(stack); n > 0 {
				f := stack[n-1]
				stack = stack[:n-1]
				if f.selector {
					nesting--
				}
				if f.has {
					has--
				}
			}
			boundary = false
		case c == ',' || c == '>' || c == '+' || c == '~' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			boundary = true
		default:
			if boundary {
				m.parts++
				boundary = false
			}
		}
	}
	return m
}

func isNameByte(b byte) bool {
	return b == '-' || b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// take is what a CSS pick returns of each element it matches.
type take int

const (
	takeText take = iota // its visible text
	takeOwn              // ::text, its own text nodes
	takeAttr             // ::attr(NAME)
	takeHTML             // ::html
)

// cssPick is a CSS selector with the pseudo-element saying what to take
// of each match. sel is nil for a bare pseudo-element, which in a field
// takes from the match itself.
type cssPick struct {
	sel  cascadia.Selector
	take take
	attr string
}

// pseudoElement is the trailing ::attr(NAME), ::text or ::html of a pick.
var pseudoElement = regexp.MustCompile(`(?i)::(?:attr\(\s*([^()\s]+)\s*\)|(text)|(html))\s*$`)

// compileCSSPick splits the pseudo-element off sel and compiles the rest
// within the bounds.
func compileCSSPick(sel string) (cssPick, error) {
	var c cssPick
	rest := sel
	if m := pseudoElement.FindStringSubmatchIndex(sel); m != nil {
		rest = sel[:m[0]]
		switch {
		case m[2] >= 0:
			c.take, c.attr = takeAttr, strings.ToLower(strings.Trim(sel[m[2]:m[3]], `"'`))
		case m[4] >= 0:
			c.take = takeOwn
		default:
			c.take = takeHTML
		}
	} else if strings.Contains(sel, "::") {
		return c, failure.New(failure.InvalidArgument, "invalid selector %s: the only pseudo-elements are a trailing ::attr(NAME), ::text or ::html", quoteSelector(sel))
	}
	s, err := CompileCSS(rest)
	if err != nil {
		return c, err
	}
	c.sel = s
	return c, nil
}

// quote quotes a user's string for a one-line message, shortened.
func quote(s string) string { return quoteSelector(s) }
