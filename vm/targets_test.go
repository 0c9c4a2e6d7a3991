package vm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/kernels"
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
    clock: real
    deadline: 10m
  - name: c
    kernel: debian:6.1-cloud
    clock: virtual
`
	ts, err := ParseTargetFile([]byte(src), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{
		{Name: "a", Kernel: "debian:6.1-cloud", Settings: Settings{MemMiB: 1024, Accel: "auto", Clock: ClockAuto}},
		{Name: "b", Kernel: "/boot/vmlinuz", Cmdline: "nohz=off", Settings: Settings{VCPUs: 4, MemMiB: 2048, Accel: "tcg", Clock: ClockReal, Deadline: 10 * time.Minute}},
		{Name: "c", Kernel: "debian:6.1-cloud", Settings: Settings{MemMiB: 1024, Accel: "auto", Clock: ClockVirtual}},
	}
	if d := cmp.Diff(want, ts.Targets); d != "" {
		t.Errorf("targets (-want +got):\n%s", d)
	}
	b, err := ts.Find("b")
	if err != nil || b.Name != "b" {
		t.Errorf("Find(b) = %+v, %v", b, err)
	}
	if _, err := ts.Find("d"); err == nil || !strings.Contains(err.Error(), "it has: a, b, c") {
		t.Errorf("Find(c) = %v", err)
	}
	setup, err := b.Settings.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	vm := b.Machine(&kernels.Kernel{Spec: "x"}, setup)
	if vm.Name != "b" || vm.Setup.VCPUs != 4 || vm.Setup.MemMiB != 2048 || vm.Setup.Accel != "tcg" || vm.Setup.Clock != RealTime || vm.Deadline != 10*time.Minute || vm.Cmdline != "nohz=off" {
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
		{"clock", "targets:\n  - name: a\n    kernel: k\n    clock: wall\n", `t.yaml:4: target a: clock "wall": want auto, virtual, real`},
		{"virtual kvm", "targets:\n  - name: a\n    kernel: k\n    accel: kvm\n    clock: virtual\n", "t.yaml:5: target a: clock virtual with accel kvm: virtual time is QEMU's instruction counter"},
		{"virtual vcpus", "targets:\n  - name: a\n    kernel: k\n    vcpus: 2\n    clock: virtual\n", "t.yaml:4: target a: vcpus 2 in virtual time"},
		{"empty", "", "t.yaml: no targets"},
		{"syntax", "targets:\n  - name: [a\n", "t.yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTargetFile([]byte(tc.src), "t.yaml")
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
	_, err := LoadTargetFile(p)
	if err == nil || !strings.Contains(err.Error(), p+":4:") {
		t.Errorf("LoadTargets = %v, want %s:4", err, p)
	}
	if _, err := LoadTargetFile(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, ErrBadTargets) {
		t.Errorf("missing file: %v", err)
	}
}

// debianAlias is a kernel spec that names a Debian line, not one build:
// what the built-in targets boot, so that they keep up with Debian.
var debianAlias = regexp.MustCompile(`^debian:(latest|[0-9]+\.[0-9]+)-(cloud|rt|generic)$`)

func TestDefaultTargets(t *testing.T) {
	ts := DefaultTargetFile()
	if len(ts.Targets) == 0 {
		t.Fatal("no default targets")
	}
	for _, tg := range ts.Targets {
		if !debianAlias.MatchString(tg.Kernel) {
			t.Errorf("target %s: kernel %s is not a debian: alias", tg.Name, tg.Kernel)
		}
	}
}

func TestLoadTargetsLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, content, want string
	}{
		{"oversized", "targets:\n  - name: a\n    kernel: k\n" + strings.Repeat("# padding to past the limit\n", config.MaxInputSize/27+1),
			":1:1: the file is "},
		{"deep flow", "targets:\n  - name: a\n    kernel: k\n    cmdline: " + strings.Repeat("[", 100000) + "\n",
			":4:1: nested more than 64 deep"},
		{"deep block", "targets:\n" + func() string {
			var b strings.Builder
			for i := range 100 {
				b.WriteString(strings.Repeat(" ", 2*i+2) + "x:\n")
			}
			return b.String()
		}(), ":65:1: nested more than 64 deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.content)
			t0 := time.Now()
			_, err := LoadTargetFile(p)
			if d := time.Since(t0); d > time.Second {
				t.Errorf("LoadTargets took %v", d)
			}
			var pe *config.Error
			if !errors.Is(err, ErrBadTargets) || !errors.As(err, &pe) {
				t.Fatalf("err = %v, want ErrBadTargets and a *config.Error", err)
			}
			if !strings.Contains(err.Error(), p+tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q, want one line with %q", err, p+tc.want)
			}
			if _, err := ParseTargetFile([]byte(tc.content), "t.yaml"); !errors.Is(err, ErrBadTargets) || !errors.As(err, &pe) {
				t.Errorf("ParseTargets: %v, want ErrBadTargets and a *config.Error", err)
			}
		})
	}

	// A byte order mark, as some editors write, is not part of the YAML.
	p := write("bom.yaml", "\xef\xbb\xbftargets:\n  - name: a\n    kernel: k\n    bogus: 1\n")
	if _, err := LoadTargetFile(p); err == nil || !strings.Contains(err.Error(), p+":4:") {
		t.Errorf("LoadTargets with a BOM = %v, want the error at %s:4", err, p)
	}
	p = write("bom-ok.yaml", "\xef\xbb\xbftargets:\n  - name: a\n    kernel: k\n")
	ts, err := LoadTargetFile(p)
	if err != nil || len(ts.Targets) != 1 || ts.Targets[0].Name != "a" {
		t.Errorf("LoadTargets with a BOM = %+v, %v", ts, err)
	}
}

// TestTargetsAliasBomb: a targets file of nested aliases (9^8 strings
// from under 600 bytes, which once took 14 GiB to decode) is refused
// before the decoder expands it.
func TestTargetsAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("targets:\n  - name: t\n    kernel: k\n    cmdline: &a [x, x, x, x, x, x, x, x, x]\n")
	prev := "a"
	for i, n := range strings.Split("bcdefgh", "") {
		fmt.Fprintf(&b, "  - name: t%d\n    kernel: k\n    cmdline: &%s [%s*%s]\n", i, n, strings.Repeat("*"+prev+", ", 8), prev)
		prev = n
	}
	_, err := ParseTargetFile([]byte(b.String()), "bomb.yaml")
	var pe *config.Error
	if !errors.Is(err, ErrBadTargets) || !errors.As(err, &pe) || !strings.Contains(err.Error(), "bomb.yaml:4:") || !strings.Contains(err.Error(), "aliases") {
		t.Fatalf("ParseTargets = %v; want ErrBadTargets at bomb.yaml:4 refusing aliases", err)
	}
}

// TestTargetsManyKeys: a 1 MB targets file of 100 000 keys (34 s and
// 427 MB in the parser) is refused at once, in one line.
func TestTargetsManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("targets:\n  - name: t\n    kernel: k\n")
	for i := range 100000 {
		fmt.Fprintf(&b, "k%d: 1\n", i)
	}
	start := time.Now()
	_, err := ParseTargetFile([]byte(b.String()), "keys.yaml")
	if d := time.Since(start); d > time.Second {
		t.Errorf("refused after %v", d)
	}
	if !errors.Is(err, ErrBadTargets) || !strings.Contains(err.Error(), "keys.yaml:2048:1: more than 2048 keys") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("ParseTargets = %v; want one line at keys.yaml:2048", err)
	}
}
