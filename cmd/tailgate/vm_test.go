package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// TestRunInDebianVM boots a real Debian cloud kernel (fetched with apt-get
// download on first use) with tailgate as init, runs a scenario with the
// syscall and sched tracers inside, and checks the Result that comes back.
func TestRunInDebianVM(t *testing.T) {
	bin := buildTailgate(t)
	out := filepath.Join(t.TempDir(), "vm.json")
	cmd := exec.Command(bin, "run", "pipe-pingpong", "--kernel", "debian:6.1-cloud", "--accel", "tcg",
		"--trials", "2", "--duration", "1s", "--warmup", "200ms", "-o", out)
	// The VM's work files go under tmp, so QEMU processes of this run can be
	// told from those of other tests running at the same time.
	tmp := t.TempDir()
	cmd.Env = append(cmd.Environ(), "CI=true", "TMPDIR="+tmp)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tailgate run --kernel: %v\n%s", err, b)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Target.Kind != "vm" || r.Target.Accel != "tcg" || !strings.HasPrefix(r.Target.Kernel, "debian:6.1.0-") {
		t.Errorf("target %+v, want a tcg vm of a debian 6.1 kernel", r.Target)
	}
	// The release the guest measured must be the package's ABI.
	abi := strings.TrimPrefix(r.Target.Kernel, "debian:")
	if r.Environment.KernelRelease != abi {
		t.Errorf("guest kernel release %q, package ABI %q", r.Environment.KernelRelease, abi)
	}
	s := r.Find("pipe-pingpong")
	if s == nil || s.Trials != 2 {
		t.Fatalf("pipe-pingpong missing or incomplete in %s:\n%s", out, b)
	}
	for _, tr := range s.Tracers {
		if tr.Variant != "tp_btf" {
			t.Errorf("tracer %s attached as %s in the guest, want tp_btf", tr.Name, tr.Variant)
		}
	}
	for _, m := range []string{"syscall.read", "syscall.write", "sched.runq"} {
		mt := s.Metrics[m]
		if mt == nil {
			t.Errorf("no %s from the guest", m)
			continue
		}
		for i, tr := range mt.Trials {
			// Each round trip is a read and a write per side and wakes
			// each side once.
			if tr.Summary.Count < tr.Ops {
				t.Errorf("%s trial %d: %d events for %d round trips", m, i, tr.Summary.Count, tr.Ops)
			}
		}
	}
	if got := qemuUnder(tmp); got != "" {
		t.Errorf("QEMU left running: %s", got)
	}
}

// qemuUnder returns the command line of any QEMU process still running
// with files under dir.
func qemuUnder(dir string) string {
	out, _ := exec.Command("pgrep", "-a", "-f", "qemu-system.*"+regexp.QuoteMeta(dir)).Output()
	return strings.TrimSpace(string(out))
}
