package irq

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// x86Interrupts is this machine's /proc/interrupts, shortened.
const x86Interrupts = `           CPU0       CPU1       
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 25:          0          1  IO-APIC   6-edge      ACPI:Ged
 26:          0          8  IO-APIC   4-edge      ttyS0
 28:          0          0 PCI-MSIX-0000:00:01.0   0-edge      virtio0-config
 36:          0     358322 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
 39:       7261          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0
NMI:          0          0   Non-maskable interrupts
LOC:   19166126   19520479   Local timer interrupts
ERR:          0
MIS:          0
`

// armInterrupts is in the form of an arm64 machine's, with a shared line.
const armInterrupts = `           CPU0       CPU1       CPU2       CPU3
 11:     123456     123000     120000     119999     GICv3  27 Level     arch_timer
 47:         10          0          0          0     GICv3  42 Level     PCIe PME, aerdrv
IPI0:      5000       4000       3000       2000       Rescheduling interrupts
Err:          0
`

func TestParseInterrupts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Interrupt
		err  string
	}{
		{"x86", x86Interrupts, []Interrupt{
			{24, []uint64{1, 0}, 1}, {25, []uint64{0, 1}, 1}, {26, []uint64{0, 8}, 8}, {28, []uint64{0, 0}, 0},
			{36, []uint64{0, 358322}, 358322}, {39, []uint64{7261, 0}, 7261},
		}, ""},
		{"arm64", armInterrupts, []Interrupt{
			{11, []uint64{123456, 123000, 120000, 119999}, 486455}, {47, []uint64{10, 0, 0, 0}, 10},
		}, ""},
		{"no header", " 24: 1 0 IO-APIC 5-edge ACPI:Ged\n", nil, "/proc/interrupts:1: header"},
		{"short line", "CPU0 CPU1\n 24: 1\n", nil, "/proc/interrupts:2: irq 24 has 1 fields, want 2 CPU counts"},
		{"bad count", "CPU0\n 24: x IO-APIC\n", nil, `/proc/interrupts:2: irq 24: count "x"`},
		{"no label", "CPU0\n  hello\n", nil, `/proc/interrupts:2: "  hello" does not start with an irq label`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseInterrupts([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// fakeProc writes interrupts and, per irq, the directories of its
// actions' names beside the files /proc/irq/N/ holds.
func fakeProc(t *testing.T, interrupts string, names map[int][]string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "interrupts"), []byte(interrupts), 0o644); err != nil {
		t.Fatal(err)
	}
	for irq, ns := range names {
		d := filepath.Join(dir, "irq", strconv.Itoa(irq))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"smp_affinity", "spurious", "node"} {
			if err := os.WriteFile(filepath.Join(d, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range ns {
			if err := os.Mkdir(filepath.Join(d, n), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func TestActions(t *testing.T) {
	long := strings.Repeat("x", 40)
	proc := fakeProc(t, x86Interrupts, map[int][]string{
		24: {"ACPI:Ged"},
		25: {"ACPI:Ged"},
		26: {"ttyS0"},
		28: {"virtio0-config"},
		36: {"virtio1-req.0"},
		39: {"virtio2-output.0", long}, // a shared line
		// 40 is not in /proc/interrupts: not looked at.
	})
	got, err := actions(proc)
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{
		{"virtio1-req.0", 358322},
		{"virtio2-output.0", 7261},
		{long[:nameLen-1], 7261}, // as the programs read it
		{"ttyS0", 8},
		{"ACPI:Ged", 2}, // on two irqs: both counted
		{"virtio0-config", 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestActionsOfThisMachine(t *testing.T) {
	as, err := Actions()
	if err != nil {
		t.Fatal(err)
	}
	if len(as) == 0 {
		testenv.Missing(t, testenv.Feature{Name: "irq actions"}, errors.New("no device with interrupts"))
	}
	for _, a := range as {
		if err := CheckName(a.Name); err != nil {
			t.Errorf("action %q: %v", a.Name, err)
		}
	}
	fired := 0
	for _, a := range as {
		if a.Count > 0 {
			fired++
		}
	}
	names, left, err := Discover(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != min(3, fired) || len(names)+len(left) != fired {
		t.Errorf("Discover(3) chose %d and left %d of the %d actions that fired", len(names), len(left), fired)
	}
	for i, name := range append(names, left...) {
		if i >= len(as) || as[i].Name != name {
			t.Errorf("Discover's choice %v, %v is not the busiest first of %v", names, left, as)
			break
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		irqs []string
		err  string
	}{
		{"names", []string{"virtio1-req.0", "ACPI:Ged", "PCIe PME"}, ""},
		{"the limit", strings.Split("a b c d e f g h i j k l m n o p", " "), ""},
		{"beyond", strings.Split("a b c d e f g h i j k l m n o p q", " "), "17 irqs, at most 16"},
		{"nothing", nil, "no irqs to count"},
		{"twice", []string{"a", "a"}, `irq "a" listed twice`},
		{"long", []string{strings.Repeat("y", 32)}, "longer than the 31 bytes the tracer compares; write \"" + strings.Repeat("y", 31) + "\""},
		{"empty", []string{""}, "empty irq name"},
		{"NUL", []string{"a\x00b"}, "holds a NUL byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.irqs)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want one containing %q", err, tt.err)
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	got := Metrics([]string{"virtio1-req.0", "ACPI:Ged"})
	want := []string{"irq.hard.virtio1-req.0", "irq.hard.ACPI:Ged"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
