// The floors of docs/architecture.md and the registry rule of
// docs/registry.md, held on the imports of the module's packages (their
// non-test files: what the command is built from).
package tailgate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tailgate-ci/tailgate"

// floors are the floors of docs/architecture.md by folder. A folder is a
// room, and a package stands in the room of the longest folder here that
// holds it (report/stats/draw in report/stats): it imports from its own
// room or from rooms on lower floors. tools/ (the project's own measuring
// programs) may import anything and is on no floor.
var floors = map[string]int{
	"internal":           1,
	"bpf":                2,
	"kernels":            2,
	"report/stats":       2,
	"scenarios":          3,
	"vm":                 3,
	"report":             3,
	"report/render":      4,
	"report/changepoint": 2,
	"report/show":        5,
	"engine":             6,
	"cmd":                7,
}

// The packages of bpf/ that code outside it may import: the tracer
// registry, which imports every tracer package, and the tracers' core,
// whose Kind is a registry entry.
const (
	registry = module + "/bpf/tracers"
	core     = module + "/bpf/tracing"
)

type goPackage struct {
	ImportPath string
	Imports    []string
}

// modulePackages lists the module's packages with their imports, as
// `go list` sees them on linux.
func modulePackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports", "./...")
	cmd.Env = append(cmd.Environ(), "GOOS=linux")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; expected the whole module", len(pkgs))
	}
	return pkgs
}

// room is the room of a package of the module: the longest folder of
// floors that holds it, else its top-level folder ("" for the module's
// root, "bpf" for bpf/tracers); false for another module's.
func room(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return "", path == module
	}
	for dir := rest; ; {
		if _, ok := floors[dir]; ok {
			return dir, true
		}
		i := strings.LastIndex(dir, "/")
		if i < 0 {
			break
		}
		dir = dir[:i]
	}
	top, _, _ := strings.Cut(rest, "/")
	return top, true
}

func TestFloors(t *testing.T) {
	for _, p := range modulePackages(t) {
		from, _ := room(p.ImportPath)
		if from == "" || from == "tools" {
			continue
		}
		floor, ok := floors[from]
		if !ok {
			t.Errorf("%s is in %s/, which has no floor: give it one in docs/architecture.md and in floors", p.ImportPath, from)
			continue
		}
		for _, imp := range p.Imports {
			to, ok := room(imp)
			if !ok || to == from {
				continue
			}
			switch f, known := floors[to]; {
			case !known:
				t.Errorf("%s (floor %d) imports %s, which is on no floor", p.ImportPath, floor, imp)
			case f > floor:
				t.Errorf("%s (floor %d) imports %s (floor %d): an arrow back up", p.ImportPath, floor, imp, f)
			case f == floor:
				t.Errorf("%s imports %s: %s/ and %s/ share floor %d, whose rooms do not import each other", p.ImportPath, imp, from, to, f)
			}
		}
	}
}

// TestRegistryIsTheOnlyWayIn: outside bpf/, the tracers are reached
// through the registry (bpf/tracers) alone, so that a tracer is its
// package and one line in the registry's list; the core's types
// (bpf/tracing: Kind, Config, Loaded) are what the registry hands out.
func TestRegistryIsTheOnlyWayIn(t *testing.T) {
	for _, p := range modulePackages(t) {
		if from, _ := room(p.ImportPath); from == "bpf" || from == "tools" {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/bpf/") && imp != registry && imp != core {
				t.Errorf("%s imports %s; outside bpf/ a tracer is reached through %s (a hook on its tracing.Kind, docs/registry.md)", p.ImportPath, imp, registry)
			}
		}
	}
}
