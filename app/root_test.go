package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// builders are the constructors of the parts App holds: outside tests,
// only package app calls them.
var builders = map[string]bool{
	"ingest.NewImporter": true, "jobs.New": true, "jobs.NewQueue": true, "notify.New": true,
	"billing.New": true, "mail.NewOutbox": true, "connect.Service": true,
}

// The program is assembled in one place: no code outside app (tests
// aside) builds an importer, a job client, an outbox, a notifier,
// connections or billing of its own.
func TestOneCompositionRoot(t *testing.T) {
	fset := token.NewFileSet()
	var found []string
	seen := map[string]int{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var sel *ast.SelectorExpr
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, _ = n.Fun.(*ast.SelectorExpr)
			case *ast.CompositeLit:
				sel, _ = n.Type.(*ast.SelectorExpr)
			}
			if sel == nil {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !builders[pkg.Name+"."+sel.Sel.Name] {
				return true
			}
			name := pkg.Name + "." + sel.Sel.Name
			seen[name]++
			if filepath.Dir(path) != "../app" {
				found = append(found, fset.Position(n.Pos()).String()+": "+name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("built outside package app: %s", f)
	}
	// The walk saw app's own calls: it looked where the code is.
	if seen["ingest.NewImporter"] != 1 || seen["jobs.New"] != 1 {
		t.Errorf("calls seen: %v", seen)
	}
}
