// Package lint holds distill's own house rules as go/analysis analyzers,
// which cmd/distill-lint runs under go vet: what staticcheck does not
// know about this code base.
package lint

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// MaxFuncLines is the longest a non-test function may be, from its func
// keyword to its closing brace, unless the allowlist names it.
const MaxFuncLines = 80

// MaxPhaseFuncLines is the longest a non-test function may be in the
// packages the -funclen.phases flag names: those whose work is a list of
// phases (reading a page, running a request, rendering, writing output,
// parsing flags), where a long function is a hub growing back. The
// allowlist does not reach them.
const MaxPhaseFuncLines = 60

// FuncLen reports non-test functions over MaxFuncLines lines, or over
// MaxPhaseFuncLines in a phase package. A hub that grows one more if per
// option is the shape it stops: the next option is a new step, not a
// longer function.
var FuncLen = &analysis.Analyzer{
	Name: "funclen",
	Doc:  fmt.Sprintf("report non-test functions over %d lines that the allowlist does not name, and over %d in the packages -phases names", MaxFuncLines, MaxPhaseFuncLines),
	Run:  runFuncLen,
}

var (
	// allowFile is the allowlist's path, set by the -funclen.allow flag.
	allowFile string
	// phases are the names of the phase packages (the last element of
	// their import path), set by the -funclen.phases flag.
	phases string
)

func init() {
	FuncLen.Flags.StringVar(&allowFile, "allow", "", "file of functions allowed to be longer: lines of \"<import path>.<Func or Type.Method> <reason>\"")
	FuncLen.Flags.StringVar(&phases, "phases", "", fmt.Sprintf("comma-separated package names held to %d lines a function, allowlist or not", MaxPhaseFuncLines))
}

// limit is the most lines a function of the package may have, and whether
// the allowlist may lift it.
func limit(pkgName string) (lines int, allowable bool) {
	for _, name := range strings.Split(phases, ",") {
		if name != "" && name == pkgName {
			return MaxPhaseFuncLines, false
		}
	}
	return MaxFuncLines, true
}

// allowed reads the allowlist: each entry names a function and says why it
// may be long. An entry without a reason is an error, so that none is
// added without one.
func allowed(path string) (map[string]bool, error) {
	out := map[string]bool{}
	if path == "" {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		if strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason", path, n, name)
		}
		out[name] = true
	}
	return out, sc.Err()
}

func runFuncLen(pass *analysis.Pass) (any, error) {
	allow, err := allowed(allowFile)
	if err != nil {
		return nil, err
	}
	most, allowable := limit(pass.Pkg.Name())
	for _, f := range pass.Files {
		if skipFile(pass.Fset, f) {
			continue
		}
		for _, decl := range f.Decls {
			for _, fn := range functions(decl) {
				lines := pass.Fset.Position(fn.end).Line - pass.Fset.Position(fn.pos).Line + 1
				if lines <= most {
					continue
				}
				switch {
				case !allowable:
					pass.Reportf(fn.pos, "%s is %d lines, over %d in a phase package: split it into named steps", fn.name, lines, most)
				case !allow[pass.Pkg.Path()+"."+fn.name]:
					pass.Reportf(fn.pos, "%s is %d lines, over %d: split it into named steps (or allowlist it with a reason)", fn.name, lines, most)
				}
			}
		}
	}
	return nil, nil
}

type function struct {
	name     string
	pos, end token.Pos
}

// functions are the functions a declaration holds: a func declaration, or
// a package-level var set to a function literal.
func functions(decl ast.Decl) []function {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if d.Body == nil {
			return nil
		}
		return []function{{name: funcName(d), pos: d.Pos(), end: d.End()}}
	case *ast.GenDecl:
		var out []function
		for _, spec := range d.Specs {
			vs, ok := spec.(*ast.ValueSpec)
			if !ok {
				continue
			}
			for i, v := range vs.Values {
				if lit, ok := v.(*ast.FuncLit); ok && i < len(vs.Names) {
					out = append(out, function{name: vs.Names[i].Name, pos: lit.Pos(), end: lit.End()})
				}
			}
		}
		return out
	}
	return nil
}

// funcName is Func, or Type.Method for a method.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

// skipFile leaves out tests and generated code.
func skipFile(fset *token.FileSet, f *ast.File) bool {
	return strings.HasSuffix(fset.Position(f.Pos()).Filename, "_test.go") || ast.IsGenerated(f)
}

// MutableExport reports exported package-level variables holding a slice
// or a map: any importer can change them for every other, and one that
// appends to a slice it was handed may write into the package's own
// backing array. Export a function returning a fresh copy, or keep the
// value unexported.
var MutableExport = &analysis.Analyzer{
	Name: "mutableexport",
	Doc:  "report exported package-level vars holding a slice or a map",
	Run:  runMutableExport,
}

func runMutableExport(pass *analysis.Pass) (any, error) {
	for _, f := range pass.Files {
		if skipFile(pass.Fset, f) {
			continue
		}
		for _, decl := range f.Decls {
			d, ok := decl.(*ast.GenDecl)
			if !ok || d.Tok != token.VAR {
				continue
			}
			for _, spec := range d.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if !id.IsExported() {
						continue
					}
					obj := pass.TypesInfo.Defs[id]
					if obj == nil {
						continue
					}
					switch obj.Type().Underlying().(type) {
					case *types.Slice, *types.Map:
						pass.Reportf(id.Pos(), "exported var %s holds a %s any importer can change: export a function returning a copy, or unexport it", id.Name, kind(obj.Type()))
					}
				}
			}
		}
	}
	return nil, nil
}

func kind(t types.Type) string {
	if _, ok := t.Underlying().(*types.Map); ok {
		return "map"
	}
	return "slice"
}
