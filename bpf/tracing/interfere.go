package tracing

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/cilium/ebpf"
)

// LoadError classifies a failure to load the programs of object name as
// Load does: a *VerifierError with the end of the verifier's log, or
// ErrPrivileges.
func LoadError(name string, err error) error { return loadError(name, err) }

// InterferenceLog is the loaded and attached interference log
// (Kind.Interference).
type InterferenceLog interface {
	// Map is the per-CPU log, for TracerOptions.Interference.
	Map() *ebpf.Map
	// Variant is the variant of the log's programs that attached.
	Variant() Variant
	// LoadCost is what loading the log's programs cost.
	LoadCost() (LoadCost, error)
	// Close detaches and unloads the log; it returns the first error.
	Close() error
}

// configureInterference makes an object built with evidence.bpf.h walk
// the interference log m (bpf/interfere's map) for the events it keeps:
// m takes the place of the object's own interfere_log. Without evidence
// or without m the walk stays dead code.
func configureInterference(spec *ebpf.CollectionSpec, k int, m *ebpf.Map) (map[string]*ebpf.Map, error) {
	on, ok := spec.Variables["evidence_interfere"]
	if !ok || k == 0 || m == nil {
		return nil, nil
	}
	if err := on.Set(true); err != nil {
		return nil, fmt.Errorf("set evidence_interfere: %w", err)
	}
	return map[string]*ebpf.Map{"interfere_log": m}, nil
}

// Interference is what else ran on an event's CPU while the event was open
// (bpf/include/evidence.bpf.h, from bpf/interfere's log): time in hardirq
// handlers, in softirqs and in other tasks than the event's own (idle is
// none of these), and the largest contributors. For an event that slept
// (a syscall that blocked) the CPU is the one it ended on.
type Interference struct {
	HardirqNs, SoftirqNs, TaskNs uint64
	// Partial: the window began before the oldest segment the CPU's log
	// still held, so the figures count only the part since then.
	Partial bool
	// Top are the contributors, largest first.
	Top []Contributor
}

// Contributor is one context that ran in an event's window.
type Contributor struct {
	Kind string // "hardirq", "softirq" or "task"
	// Name is the hardirq action's name ("local_timer" for the local
	// timer interrupt), the softirq vector's (net_rx) or the task's comm.
	Name string
	ID   uint32 // irq number, vector, or tid; 0 for the local timer
	Ns   uint64
}

const (
	interfereName  = 16 // INTERFERE_NAME of interfere.h
	evidenceTop    = 8  // EVIDENCE_TOP of evidence.bpf.h
	interfereOn    = 1  // EVIDENCE_INTERFERE_ON
	interfereParts = 2  // EVIDENCE_INTERFERE_PARTIAL
	interfereTimer = 0x80000000
)

// softirqNames are the vectors' names by number, as the softirq tracer
// names its metrics.
var softirqNames = []string{"hi", "timer", "net_tx", "net_rx", "block", "irq_poll", "tasklet", "sched", "hrtimer", "rcu"}

// interferenceRecord mirrors the interference fields that follow
// evidenceRecord in struct evidence_event.
type interferenceRecord struct {
	HardirqNs, SoftirqNs, TaskNs uint64
	Flags, _                     uint32
	Top                          [evidenceTop]struct {
		Ns       uint64
		Kind, ID uint32
		Name     [interfereName]byte
	}
}

var evidenceRecordSize = binary.Size(evidenceRecord{})

// decodeInterference reads the interference of a raw evidence event; nil
// when it was not measured.
func decodeInterference(raw []byte) (*Interference, error) {
	var r interferenceRecord
	if len(raw) < evidenceRecordSize {
		return nil, nil // evidenceRecord's decoder says what is wrong
	}
	if err := binary.Read(bytes.NewReader(raw[evidenceRecordSize:]), binary.LittleEndian, &r); err != nil {
		return nil, fmt.Errorf("interference of an evidence record of %d bytes: %w", len(raw), err)
	}
	if r.Flags&interfereOn == 0 {
		return nil, nil
	}
	in := &Interference{HardirqNs: r.HardirqNs, SoftirqNs: r.SoftirqNs, TaskNs: r.TaskNs, Partial: r.Flags&interfereParts != 0}
	for _, t := range r.Top {
		c := Contributor{ID: t.ID, Ns: t.Ns, Name: cstring(t.Name[:])}
		switch t.Kind {
		case 1:
			c.Kind = "hardirq"
			if t.ID&interfereTimer != 0 {
				c.ID = 0
			}
		case 2:
			c.Kind = "softirq"
			c.Name = fmt.Sprintf("vector %d", t.ID)
			if int(t.ID) < len(softirqNames) {
				c.Name = softirqNames[t.ID]
			}
		case 3:
			c.Kind = "task"
		default:
			continue
		}
		in.Top = append(in.Top, c)
	}
	sort.SliceStable(in.Top, func(i, j int) bool { return in.Top[i].Ns > in.Top[j].Ns })
	return in, nil
}
