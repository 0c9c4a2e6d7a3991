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

	"github.com/tailgate-ci/tailgate/internal/result"
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

// LookupAll resolves names or paths as Lookup does; none means every
// built-in. One run holds a scenario once, so a scenario named twice, by
// the same argument or two, is refused.
func LookupAll(names []string) ([]*Scenario, error) {
	if len(names) == 0 {
		return Builtin(), nil
	}
	if len(names) > result.MaxScenarios {
		return nil, fmt.Errorf("%d scenarios named; a run holds at most %d (a Result of more is refused): split them over several runs", len(names), result.MaxScenarios)
	}
	var out []*Scenario
	from := map[string]string{} // scenario name → the argument that named it
	for _, n := range names {
		s, err := Lookup(n)
		if err != nil {
			return nil, err
		}
		// A second would add its trials to the first's.
		if prev, dup := from[s.Name]; dup {
			if prev == n {
				return nil, fmt.Errorf("scenario %s is named twice; for more trials use --trials", n)
			}
			return nil, fmt.Errorf("%s and %s are both scenario %s; a run holds each scenario once", prev, n, s.Name)
		}
		from[s.Name] = n
		out = append(out, s)
	}
	return out, nil
}
