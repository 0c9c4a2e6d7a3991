package vmtest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseTargets(t *testing.T) {
	src := `targets:
  - name: a
    kernel: debian:6.1-cloud
  - name: b
    kernel: /boot/vmlinuz
    vcpus: 4
    memory_mib: 2048
    cmdline: nohz=off
    accel: tcg
    deadline: 10m
`
	ts, err := ParseTargets([]byte(src), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{
		{Name: "a", Kernel: "debian:6.1-cloud", VCPUs: 2, MemMiB: 1024, Accel: "auto"},
		{Name: "b", Kernel: "/boot/vmlinuz", VCPUs: 4, MemMiB: 2048, Cmdline: "nohz=off", Accel: "tcg", Deadline: 10 * time.Minute},
	}
	if d := cmp.Diff(want, ts.Targets); d != "" {
		t.Errorf("targets (-want +got):\n%s", d)
	}
	b, err := ts.Find("b")
	if err != nil || b.Name != "b" {
		t.Errorf("Find(b) = %+v, %v", b, err)
	}
	if _, err := ts.Find("c"); err == nil || !strings.Contains(err.Error(), "it has: a, b") {
		t.Errorf("Find(c) = %v", err)
	}
	vm := b.VM(&Kernel{Spec: "x"})
	if vm.Name != "b" || vm.VCPUs != 4 || vm.MemMiB != 2048 || vm.Accel != "tcg" || vm.Deadline != 10*time.Minute || vm.Cmdline != "nohz=off" {
		t.Errorf("VM = %+v", vm)
	}
}

func TestParseTargetsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown field", "targets:\n  - name: a\n    kernel: k\n    cpus: 2\n", `t.yaml:4: unknown field "cpus"`},
		{"unknown top-level", "targets:\n  - name: a\n    kernel: k\nextra: 1\n", `t.yaml:4: unknown field "extra"`},
		{"wrong type", "targets:\n  - name: a\n    kernel: k\n    vcpus: many\n", "t.yaml:4: "},
		{"no kernel", "targets:\n  - name: a\n    kernel: k\n  - name: b\n    vcpus: 2\n", "t.yaml:4: target b has no kernel"},
		{"no name", "targets:\n  - kernel: k\n", "t.yaml:2: target 1 has no name"},
		{"bad name", "targets:\n  - name: 'a b'\n    kernel: k\n", "t.yaml:2: target name \"a b\""},
		{"duplicate", "targets:\n  - name: a\n    kernel: k\n  - name: a\n    kernel: k\n", "t.yaml:4: target a is already defined at t.yaml:2"},
		{"vcpus", "targets:\n  - name: a\n    kernel: k\n    vcpus: 1000\n", "t.yaml:4: target a: vcpus 1000"},
		{"memory", "targets:\n  - name: a\n    kernel: k\n    memory_mib: 16\n", "t.yaml:4: target a: memory_mib 16"},
		{"accel", "targets:\n  - name: a\n    kernel: k\n    accel: xen\n", `t.yaml:4: target a: accel "xen"`},
		{"empty", "", "t.yaml: no targets"},
		{"syntax", "targets:\n  - name: [a\n", "t.yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTargets([]byte(tc.src), "t.yaml")
			if !errors.Is(err, ErrBadTargets) {
				t.Fatalf("err = %v, want ErrBadTargets", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("err has more than one line: %q", err)
			}
		})
	}
}

func TestLoadTargets(t *testing.T) {
	p := filepath.Join(t.TempDir(), "targets.yaml")
	os.WriteFile(p, []byte("targets:\n  - name: a\n    kernel: k\n    bogus: 1\n"), 0o644)
	_, err := LoadTargets(p)
	if err == nil || !strings.Contains(err.Error(), p+":4:") {
		t.Errorf("LoadTargets = %v, want %s:4", err, p)
	}
	if _, err := LoadTargets(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, ErrBadTargets) {
		t.Errorf("missing file: %v", err)
	}
}

func TestDefaultTargets(t *testing.T) {
	ts := DefaultTargets()
	if len(ts.Targets) == 0 {
		t.Fatal("no default targets")
	}
	for _, tg := range ts.Targets {
		if _, ok := parseAlias(strings.TrimPrefix(tg.Kernel, "debian:")); !ok {
			t.Errorf("target %s: kernel %s is not a debian: alias", tg.Name, tg.Kernel)
		}
	}
}
