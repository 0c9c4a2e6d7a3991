package vm

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/kernels"
)

func TestConsoleScanner(t *testing.T) {
	var log bytes.Buffer
	var progress []string
	s := &consoleScanner{log: &log, progress: func(p string) { progress = append(progress, p) }, started: make(chan struct{})}
	var in strings.Builder
	in.WriteString("SeaBIOS noise\r\n")
	in.WriteString("[    0.000000] Linux version 6.1.0-57-cloud-amd64\r\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&in, "[    1.%06d] line %d\r\n", i, i)
	}
	in.WriteString(consolePrefix + "trial 1/3\r\n")
	in.WriteString(consolePrefix + "Oops is not a kernel line here\r\n")
	in.WriteString("[    2.000000] BUG: kernel NULL pointer dereference, address: 0000000000000000\r\n")
	in.WriteString("[    2.100000] Kernel panic - not syncing: Fatal exception\r\n")
	in.WriteString("no newline at the end")
	s.run(strings.NewReader(in.String()))

	if !s.hasStarted() {
		t.Error("kernel start not seen")
	}
	if log.String() != in.String() {
		t.Error("console log differs from the console")
	}
	if d := cmp.Diff([]string{"trial 1/3", "Oops is not a kernel line here"}, progress); d != "" {
		t.Errorf("progress (-want +got):\n%s", d)
	}
	wantBad := []string{
		"[    2.000000] BUG: kernel NULL pointer dereference, address: 0000000000000000",
		"[    2.100000] Kernel panic - not syncing: Fatal exception",
	}
	if d := cmp.Diff(wantBad, s.bad); d != "" {
		t.Errorf("bad lines (-want +got):\n%s", d)
	}
	tail := s.tail()
	if len(tail) != tailLines || tail[len(tail)-1] != "no newline at the end" || !strings.HasSuffix(tail[len(tail)-6], "line 39") {
		t.Errorf("tail = %q", tail)
	}
	if slices.ContainsFunc(tail, func(l string) bool { return strings.HasSuffix(l, "\r") }) {
		t.Error("tail keeps carriage returns")
	}
}

func TestVMError(t *testing.T) {
	e := &VMError{Err: ErrGuestPanic, Lines: []string{"Kernel panic - not syncing: x", "BUG: y"}, Tail: []string{"a", "b"}, ConsoleLog: "/tmp/c.log"}
	want := "guest kernel panicked: Kernel panic - not syncing: x\n  BUG: y\nlast 2 console lines:\n  | a\n  | b\nconsole log: /tmp/c.log"
	if e.Error() != want {
		t.Errorf("Error() =\n%s\nwant\n%s", e.Error(), want)
	}
	if !errors.Is(e, ErrGuestPanic) {
		t.Error("does not wrap ErrGuestPanic")
	}
	g := &VMError{Err: &GuestError{Msg: "attach sched_switch: permission denied"}, Tail: []string{"a"}, ConsoleLog: "/tmp/c.log"}
	if got := g.Error(); got != "in the guest: attach sched_switch: permission denied\nconsole log: /tmp/c.log" {
		t.Errorf("guest error = %q", got)
	}
}

func TestQEMUArgs(t *testing.T) {
	k := &kernels.Kernel{Image: "/k/vmlinuz", Vmlinux: "/k/vmlinux"}
	for _, tc := range []struct {
		accel string
		clock Clock
		vcpus int
		want  []string
		not   string
	}{
		{"kvm", RealTime, 2, []string{"-accel", "kvm", "-cpu", "host"}, "-icount"},
		{"tcg", RealTime, 2, []string{"-accel", "tcg,thread=single", "-cpu", "max"}, "-icount"},
		{"tcg", RealTime, 1, []string{"-accel", "tcg", "-cpu", "max"}, "ioeventfd"},
		// What makes virtual time repeat itself: instructions as time, a
		// fixed wall clock and random seed, virtio kicks on the vCPU.
		{"tcg", VirtualTime, 1, []string{"-accel", "tcg", "-cpu", "max", "-icount", "shift=0,sleep=off", "-rtc", "base=2020-01-01T00:00:00,clock=vm", "-seed", "1"}, "thread=single"},
		{"tcg", VirtualTime, 1, []string{"-device", "virtio-serial-pci,ioeventfd=off"}, ""},
		{"tcg", VirtualTime, 1, []string{"virtio-blk-pci,drive=scratch,serial=" + ScratchSerial + ",ioeventfd=off"}, ""},
	} {
		b := &boot{vm: Machine{Kernel: k, Setup: Setup{Accel: tc.accel, Clock: tc.clock, VCPUs: tc.vcpus, MemMiB: 512}}, initrd: "/w/initrd", results: "/w/results", scratch: "/w/scratch"}
		args := b.qemuArgs("console=ttyS0")
		joined := strings.Join(args, " ")
		if !strings.Contains(joined, strings.Join(tc.want, " ")) {
			t.Errorf("%s/%s/%d: %s lacks %v", tc.accel, tc.clock, tc.vcpus, joined, tc.want)
		}
		if tc.not != "" && strings.Contains(joined, tc.not) {
			t.Errorf("%s/%s/%d: %s has %q", tc.accel, tc.clock, tc.vcpus, joined, tc.not)
		}
		for _, w := range []string{"-kernel /k/vmlinux", "-initrd /w/initrd", "-smp " + fmt.Sprint(tc.vcpus), "-m 512", "-no-reboot", "-nodefaults", "path=/w/results", "name=results"} {
			if !strings.Contains(joined, w) {
				t.Errorf("%s lacks %q", joined, w)
			}
		}
	}
	if _, _, err := chooseAccel("xen"); err == nil {
		t.Error("accel xen accepted")
	}
	if a, _, err := chooseAccel("tcg"); a != "tcg" || err != nil {
		t.Errorf("chooseAccel(tcg) = %s, %v", a, err)
	}
}
