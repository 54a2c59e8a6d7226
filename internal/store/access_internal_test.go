package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAccessChangesCount reads the store's source: every function whose SQL
// changes a table the key lookup reads calls Tx.accessChanged, so that no
// process goes on serving a key from its cache after the change (see
// LookupKey). A new statement on those tables fails this test until it
// counts, or is listed below with why it need not.
func TestAccessChangesCount(t *testing.T) {
	changes := regexp.MustCompile(`(?is)\b(UPDATE\s+(api_keys|applications|developers|invoices|accounts|landlords)\b|(INSERT\s+INTO|DELETE\s+FROM)\s+(api_keys|applications|developers|invoices|accounts|landlords)\b)`)
	exempt := map[string]string{
		"Claim":             "the landlord's clock, which the lookup does not read",
		"Commit":            "the landlord's clock",
		"lockDeveloper":     "SET plan = plan: a lock that changes nothing",
		"CreateEndpoint":    "SET plan = plan: a lock that changes nothing",
		"NoteKeyUse":        "a key's last use: the kept lookups take it from NoteKeyUse",
		"SetPromptPay":      "the landlord's PromptPay receiver, which the lookup does not read",
		"insertKey":         "a new key: no lookup of it can be kept yet",
		"CreateDeveloper":   "a new developer: no key of it exists yet",
		"CreateApplication": "a new application: no key of it exists yet",
		"createLandlord":    "a new landlord: no account of it exists yet",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			changing, counts := false, false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if n.Kind == token.STRING && changes.MatchString(n.Value) {
						changing = true
					}
				case *ast.SelectorExpr:
					if n.Sel.Name == "accessChanged" {
						counts = true
					}
				}
				return true
			})
			if !changing {
				continue
			}
			seen[fn.Name.Name] = true
			if _, ok := exempt[fn.Name.Name]; !ok && !counts {
				t.Errorf("%s (%s) changes what a key lookup reads but does not call tx.accessChanged()", fn.Name.Name, fset.Position(fn.Pos()))
			}
		}
	}
	for name := range exempt {
		if !seen[name] {
			t.Errorf("%s is exempt but changes no such table any more: take it out of the list", name)
		}
	}
}
