package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/request"
)

// emitted is one error code found in the source, with the status its
// constructor gives it.
type emitted struct {
	code, at string
	status   int // 0 when the constructor names no status (a redirect's error)
}

// kindStatus names the statuses a constructor's kind or status argument can
// give, by the identifier written in the source.
var kindStatus = map[string]int{
	"KindInternal": request.KindStatus(rental.KindInternal), "KindInvalid": request.KindStatus(rental.KindInvalid),
	"KindUnauthenticated": request.KindStatus(rental.KindUnauthenticated), "KindPaymentRequired": request.KindStatus(rental.KindPaymentRequired),
	"KindForbidden": request.KindStatus(rental.KindForbidden), "KindNotFound": request.KindStatus(rental.KindNotFound),
	"KindConflict": request.KindStatus(rental.KindConflict), "KindRateLimited": request.KindStatus(rental.KindRateLimited),
	"KindUnavailable":                   request.KindStatus(rental.KindUnavailable),
	"StatusMethodNotAllowed":            http.StatusMethodNotAllowed,
	"StatusRequestTimeout":              http.StatusRequestTimeout,
	"StatusRequestEntityTooLarge":       http.StatusRequestEntityTooLarge,
	"StatusUnsupportedMediaType":        http.StatusUnsupportedMediaType,
	"StatusUnprocessableEntity":         http.StatusUnprocessableEntity,
	"StatusRequestHeaderFieldsTooLarge": http.StatusRequestHeaderFieldsTooLarge,
}

// emittedCodes scans every non-test Go file of internal/ and cmd/ for the
// codes the service can answer with: the code arguments of rental.Errorf,
// rental.Conflict and requestErrorf, the Code of every rental.Error
// literal, and the error parameter of the connect redirect. A code that is
// not a string literal there is an error: the scan could not see it.
func emittedCodes(t *testing.T) []emitted {
	t.Helper()
	var out []emitted
	fset := token.NewFileSet()
	for _, dir := range []string{"../../internal", "../../cmd"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			inRental := f.Name.Name == "rental"
			// called reports whether fun is the named function of package
			// rental (bare inside it) or, for requestErrorf, of this one.
			called := func(fun ast.Expr, name string) bool {
				switch fn := fun.(type) {
				case *ast.Ident:
					return fn.Name == name && (inRental || name == "requestErrorf")
				case *ast.SelectorExpr:
					x, ok := fn.X.(*ast.Ident)
					return ok && x.Name == "rental" && fn.Sel.Name == name
				}
				return false
			}
			literal := func(e ast.Expr, at token.Pos, what string) (string, bool) {
				lit, ok := e.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s: %s with a code that is not a string literal: the scan cannot see it", fset.Position(at), what)
					return "", false
				}
				s, _ := strconv.Unquote(lit.Value)
				return s, true
			}
			status := func(e ast.Expr) int {
				if sel, ok := e.(*ast.SelectorExpr); ok {
					if st, ok := kindStatus[sel.Sel.Name]; ok {
						return st
					}
				}
				if id, ok := e.(*ast.Ident); ok {
					if st, ok := kindStatus[id.Name]; ok {
						return st
					}
				}
				return -1
			}
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				// The constructors themselves pass their code parameter on.
				if ok && fd.Recv == nil && (inRental && (fd.Name.Name == "Errorf" || fd.Name.Name == "Conflict") || fd.Name.Name == "requestErrorf" && f.Name.Name == "api") {
					continue
				}
				ast.Inspect(decl, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CallExpr:
						at := fset.Position(n.Pos()).String()
						switch {
						case called(n.Fun, "Errorf") && len(n.Args) >= 3:
							if c, ok := literal(n.Args[1], n.Pos(), "rental.Errorf"); ok {
								out = append(out, emitted{c, at, status(n.Args[0])})
							}
						case called(n.Fun, "Conflict"):
							if c, ok := literal(n.Args[0], n.Pos(), "rental.Conflict"); ok {
								out = append(out, emitted{c, at, http.StatusConflict})
							}
						case called(n.Fun, "requestErrorf"):
							if c, ok := literal(n.Args[1], n.Pos(), "requestErrorf"); ok {
								out = append(out, emitted{c, at, status(n.Args[0])})
							}
						default:
							// The connect redirect's answer: query.Set("error", code).
							if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Set" && len(n.Args) == 2 {
								if k, ok := n.Args[0].(*ast.BasicLit); ok && k.Value == `"error"` {
									if c, ok := literal(n.Args[1], n.Pos(), `Set("error", …)`); ok {
										out = append(out, emitted{c, at, 0})
									}
								}
							}
						}
					case *ast.CompositeLit:
						isError := false
						switch ty := n.Type.(type) {
						case *ast.SelectorExpr:
							x, ok := ty.X.(*ast.Ident)
							isError = ok && x.Name == "rental" && ty.Sel.Name == "Error"
						case *ast.Ident:
							isError = inRental && ty.Name == "Error"
						}
						if !isError {
							return true
						}
						var code string
						st := -1
						for _, e := range n.Elts {
							kv, ok := e.(*ast.KeyValueExpr)
							if !ok {
								continue
							}
							switch k, _ := kv.Key.(*ast.Ident); {
							case k == nil:
							case k.Name == "Code":
								code, _ = literal(kv.Value, n.Pos(), "rental.Error literal")
							case k.Name == "Kind":
								st = status(kv.Value)
							}
						}
						if code != "" {
							out = append(out, emitted{code, fset.Position(n.Pos()).String(), st})
						}
					}
					return true
				})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Every code the service can emit is on the error page, with the status
// its constructor gives it; and the page lists nothing the service never
// says.
func TestErrorCodesAreDocumented(t *testing.T) {
	t.Parallel()
	found := emittedCodes(t)
	if len(found) < 40 {
		t.Fatalf("the scan found only %d codes: it has lost its way", len(found))
	}
	table := map[string]ErrorCode{}
	for _, c := range ErrorCodes() {
		if _, dup := table[c.Code]; dup {
			t.Errorf("%s is listed twice", c.Code)
		}
		if c.When == "" || c.Do == "" || len(c.Where) == 0 {
			t.Errorf("%s: when, what to do and where are all needed", c.Code)
		}
		table[c.Code] = c
	}
	seen := map[string]bool{}
	for _, e := range found {
		seen[e.code] = true
		c, ok := table[e.code]
		switch {
		case !ok:
			t.Errorf("%s (%s) is not in ErrorCodes: add it with its status, when and what to do", e.code, e.at)
		case e.status < 0:
			t.Errorf("%s (%s): the scan cannot tell its status", e.code, e.at)
		case e.status != c.Status:
			t.Errorf("%s (%s) is answered %d; ErrorCodes says %d", e.code, e.at, e.status, c.Status)
		}
	}
	for code := range table {
		if !seen[code] {
			t.Errorf("%s is in ErrorCodes but the service never emits it", code)
		}
	}
	if !slices.IsSortedFunc(errorCodes, func(a, b ErrorCode) int {
		if a.Status == 0 || b.Status == 0 { // the redirect's codes come last
			return -(a.Status - b.Status)
		}
		if a.Status != b.Status {
			return a.Status - b.Status
		}
		return strings.Compare(a.Code, b.Code)
	}) {
		t.Error("ErrorCodes is not in the page's order: by status, then by code, redirect codes last")
	}
}
