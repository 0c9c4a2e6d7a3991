package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// TestGateVariantDirs: base and head of a program, built in two
// checkouts, gated in one job with --variant NAME:dir=...; each side runs
// its own checkout's program (found there, with the variant's env.), the
// Results record which program (by content) and where, and the report
// says what differs.
func TestGateVariantDirs(t *testing.T) {
	bin := buildTailgate(t)
	root := t.TempDir()
	base, head := filepath.Join(root, "base"), filepath.Join(root, "head")
	script := func(dir, comment string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "#!/bin/sh\n# " + comment + "\necho \"$TG_SIDE\" >> ran\nexec dd if=/dev/zero of=/dev/null bs=4096 count=20000 2>/dev/null\n"
		if err := os.WriteFile(filepath.Join(dir, "work.sh"), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script(base, "the base")
	script(head, "the head")
	sc := filepath.Join(head, "bench.yaml")
	if err := os.WriteFile(sc, []byte(`name: work
workload:
  kind: exec
  command: [./work.sh]
  dir: .
tracers:
  syscall: {syscalls: [read]}
trials: 3
warmup: 0s
duration: 200ms
gate:
  syscall.read: {p99: 10%}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "r.json")
	cmd := exec.Command(bin, "gate", sc, "--variant", "base:dir="+base+",env.TG_SIDE=base", "--variant", "head:dir="+head+",env.TG_SIDE=head",
		"--budget", "12s", "-o", out)
	cmd.Env = append(cmd.Environ(), "CI=true")
	b, _ := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if code != 0 && code != 1 {
		t.Fatalf("gate: exit %d, want a verdict\n%s", code, b)
	}
	for _, side := range []string{"base", "head"} {
		dir := filepath.Join(root, side)
		ran, err := os.ReadFile(filepath.Join(dir, "ran"))
		if err != nil {
			t.Fatalf("%s's program did not run in its checkout: %v", side, err)
		}
		for _, l := range strings.Fields(string(ran)) {
			if l != side {
				t.Fatalf("%s's checkout ran the program with TG_SIDE=%s", side, l)
			}
		}
		res, err := result.Load(strings.TrimSuffix(out, ".json") + "-" + side + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if res.Target.Dir != dir || res.Target.Env["TG_SIDE"] != side {
			t.Errorf("%s's Result records dir %q env %v", side, res.Target.Dir, res.Target.Env)
		}
		xs := res.Scenarios[0].Executables
		if len(xs) != 1 || xs[0].Path != filepath.Join(dir, "work.sh") || len(xs[0].SHA256) != 64 {
			t.Errorf("%s's Result records executables %+v, want its own work.sh with its sha256", side, xs)
		}
	}
	t.Logf("%s", b)
	// The report keeps to 100 columns: its lines are read joined.
	flat := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{"differs:", "work command " + filepath.Join(base, "work.sh") + " → " + filepath.Join(head, "work.sh"), "work command sha256", "env TG_SIDE base → head"} {
		if !strings.Contains(flat, want) {
			t.Errorf("report lacks %q:\n%s", want, b)
		}
	}
}
