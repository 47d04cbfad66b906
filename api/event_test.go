package api

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

// TestEventTypesAreListed: every event type constant of the package is in
// EventTypes, so that strata events --type and completion know it.
func TestEventTypesAreListed(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Event") || name.Name == "EventTypes" || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				found++
				if !slices.Contains(EventTypes, v) {
					t.Errorf("%s (%q) is not in EventTypes", name.Name, v)
				}
			}
			return true
		})
	}
	if found < 20 || found != len(EventTypes) {
		t.Errorf("%d event type constants, %d listed", found, len(EventTypes))
	}
}
