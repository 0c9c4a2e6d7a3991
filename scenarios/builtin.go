package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

const builtinPrefix = "builtin:"

// Builtin returns the built-in scenarios, sorted by name. Each call returns
// fresh values the caller may change.
func Builtin() []*Scenario {
	files, err := fs.Glob(builtinFS, "builtin/*.yaml")
	if err != nil {
		panic(err) // the pattern is valid
	}
	var ss []*Scenario
	for _, f := range files {
		b, err := builtinFS.ReadFile(f)
		if err != nil {
			panic(err)
		}
		s, err := Parse(builtinPrefix+path.Base(f), b)
		if err != nil {
			// The files are embedded and parsed by the tests.
			panic(err)
		}
		ss = append(ss, s)
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].Name < ss[j].Name })
	return ss
}

// Lookup returns the built-in scenario named nameOrPath ("builtin:NAME"
// and "builtin:NAME.yaml", as in Scenario.Source, work too), else loads
// nameOrPath as a scenario file. A built-in name wins over a file of the
// same name in the working directory.
func Lookup(nameOrPath string) (*Scenario, error) {
	name, isBuiltin := strings.CutPrefix(nameOrPath, builtinPrefix)
	if isBuiltin {
		name = strings.TrimSuffix(name, ".yaml")
	}
	var names []string
	for _, s := range Builtin() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	unknown := fmt.Errorf("unknown scenario %q; built-in: %s; or give the path of a scenario file", nameOrPath, strings.Join(names, ", "))
	if isBuiltin {
		return nil, unknown
	}
	looksLikePath := strings.ContainsRune(nameOrPath, os.PathSeparator) || strings.HasSuffix(nameOrPath, ".yaml") || strings.HasSuffix(nameOrPath, ".yml")
	if _, err := os.Stat(nameOrPath); errors.Is(err, fs.ErrNotExist) && !looksLikePath {
		return nil, unknown
	}
	return Load(nameOrPath)
}
