package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// The completion script offers the catalog's scenarios and scenario files
// after run, gate, matrix and calibrate, but not as a flag's value, nor
// after other commands.
func TestCompletionScenarios(t *testing.T) {
	code, script, stderr := runInProcess(t, "completion", "bash")
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var all []string
	for _, s := range engine.Catalog().Scenarios {
		all = append(all, s.Name)
		if !strings.Contains(script, s.Name) {
			t.Errorf("script lacks scenario %s", s.Name)
		}
	}
	testenv.Need(t, testenv.Tool("bash", ""))
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "tailgate.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	// A working directory of scenario files, a Result and a directory.
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(work, "scenarios"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"slow.yaml", "fast.yml", "result.json"} {
		if err := os.WriteFile(filepath.Join(work, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := []string{"fast.yml", "scenarios", "slow.yaml"}
	for _, tc := range []struct {
		name  string
		words []string // the last is the word being completed
		want  []string
	}{
		{"run", []string{"tailgate", "run", "sys"}, []string{"syscall-read", "syscall-write"}},
		{"gate after a flag", []string{"tailgate", "gate", "--vm", "pipe"}, []string{"pipe-pingpong"}},
		{"matrix after a flag's value", []string{"tailgate", "matrix", "--kernel", "debian:6.1-cloud", "--kernel", "debian:6.12-cloud", "fs"},
			[]string{"fsync", "fsync-scratch"}},
		{"calibrate, every scenario and file", []string{"tailgate", "calibrate", ""}, append(slices.Clone(all), files...)},
		{"files", []string{"tailgate", "run", "s"}, []string{"scenarios", "slow.yaml", "syscall-read", "syscall-write"}},
		{"a flag's value", []string{"tailgate", "run", "--kernel", ""}, nil},
		{"flags", []string{"tailgate", "run", "--tri"}, []string{"--trials"}},
		{"not a scenario command", []string{"tailgate", "compare", "sys"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probe := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _tailgate; printf '%s\n' "${COMPREPLY[@]}"`
			cmd := exec.Command(bash, append([]string{"-c", probe, "probe", path}, tc.words...)...)
			cmd.Dir = work
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			got := strings.Fields(string(out))
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("%q completes to %q, want %q", strings.Join(tc.words, " "), got, want)
			}
		})
	}
}
