package spec

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestKeyListsMatchDecoders reads this package's source: for every
// d.fields call given a key list, the keys its callback's switch (or
// comparison) accepts must be exactly the list's, so that "did you mean"
// never offers a key the decoder refuses nor misses one it accepts.
func TestKeyListsMatchDecoders(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string][]string{}
	var calls []*ast.CallExpr
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if strings.HasSuffix(name.Name, "Keys") && i < len(n.Values) {
						lists[name.Name] = stringsIn(n.Values[i], lists)
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "fields" && len(n.Args) == 4 {
					calls = append(calls, n)
				}
			}
			return true
		})
	}
	checked := 0
	for _, call := range calls {
		name, ok := call.Args[2].(*ast.Ident)
		if !ok || name.Name == "nil" {
			continue
		}
		lit, ok := call.Args[3].(*ast.FuncLit)
		if !ok {
			t.Errorf("%s: the callback is not a function literal; cannot check %s", fset.Position(call.Pos()), name.Name)
			continue
		}
		want, ok := lists[name.Name]
		if !ok {
			t.Errorf("%s: no list %s", fset.Position(call.Pos()), name.Name)
			continue
		}
		got := acceptedKeys(lit, lists)
		slices.Sort(got)
		want = slices.Clone(want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the decoder accepts %q, %s lists %q", fset.Position(call.Pos()), got, name.Name, want)
		}
		checked++
	}
	if checked < 25 {
		t.Fatalf("checked %d decoders; the test no longer finds them", checked)
	}
}

// stringsIn returns the string literals of a []string{...} literal, or of
// append(list, ...) over other lists.
func stringsIn(e ast.Expr, lists map[string][]string) []string {
	var out []string
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil {
				out = append(out, s)
			}
		case *ast.Ident:
			out = append(out, lists[n.Name]...)
		}
		return true
	})
	return out
}

// acceptedKeys are the keys a fields callback accepts: the string cases of
// a switch on its key parameter, the strings it compares the key with, and
// the keys of modeField when it hands the key on to it.
func acceptedKeys(lit *ast.FuncLit, lists map[string][]string) []string {
	param := lit.Type.Params.List[0].Names[0].Name
	isKey := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && id.Name == param
	}
	var out []string
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SwitchStmt:
			if n.Tag != nil && isKey(n.Tag) {
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						if bl, ok := e.(*ast.BasicLit); ok {
							s, _ := strconv.Unquote(bl.Value)
							out = append(out, s)
						}
					}
				}
			}
		case *ast.BinaryExpr:
			if bl, ok := n.Y.(*ast.BasicLit); ok && isKey(n.X) && (n.Op == token.EQL || n.Op == token.NEQ) {
				s, _ := strconv.Unquote(bl.Value)
				out = append(out, s)
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "modeField" {
				out = append(out, lists["modeKeys"]...)
			}
		}
		return true
	})
	return out
}
