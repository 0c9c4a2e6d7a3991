// The house rule that no function runs over 80 lines, held on the
// module's non-test, non-generated Go files.
package tailgate_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const maxFunctionLines = 80

// longFunctions are the functions allowed over maxFunctionLines, by
// "file name": none since the last three were split.
var longFunctions = map[string]bool{}

// functionLines is the length of every function and method declared in
// the module's Go files, signature to closing brace, by "file name"
// (methods as "file Type.name"). Tests, bpf2go output, other generated
// files and testdata are left out.
func functionLines(t *testing.T) map[string]int {
	t.Helper()
	lines := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, "_bpfel.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			lines[filepath.ToSlash(path)+" "+funcName(fd)] = fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 1000 {
		t.Fatalf("found %d functions; expected the whole module", len(lines))
	}
	return lines
}

// funcName is fd's name, a method's as Type.name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

func TestNoLongFunctions(t *testing.T) {
	for fn, n := range functionLines(t) {
		if n > maxFunctionLines && !longFunctions[fn] {
			t.Errorf("%s is %d lines; split it into steps of at most %d lines whose names say what each does", fn, n, maxFunctionLines)
		}
	}
}
