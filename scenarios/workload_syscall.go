package scenarios

import (
	"errors"

	"github.com/tailgate-ci/tailgate/internal/config"
)

// Syscall is the syscall workload kind's own parameters: which syscall
// each thread makes in a loop, with what buffer, how often. Its threads
// and cpus are Workload's fields.
//
//	workload:
//	  kind: syscall
//	  syscall: read   # read (of /dev/zero), write (to /dev/null), getppid; default read
//	  size: 4096      # read and write: bytes per call (default 4 KiB)
//	  rate: 0         # calls/s per thread; 0 (the default) is a closed loop
//	  threads: 1
//	  cpus: "1"       # a CPU list the threads are pinned to
type Syscall struct {
	Name string `json:"syscall,omitempty"`
	// Size is the bytes per read or write; 0 for getppid.
	Size int `json:"size,omitempty"`
	// Rate is calls per second per thread; 0 is a closed loop.
	Rate float64 `json:"rate,omitempty"`
}

// workloadSyscalls are the syscalls the syscall kind makes.
var workloadSyscalls = []string{"read", "write", "getppid"}

var syscallKind = WorkloadKind{
	Name:         "syscall",
	Keys:         []string{"syscall", "size", "threads", "rate", "cpus"},
	Parse:        parseSyscall,
	DecodeParams: decodeParams[Syscall],
	Defaults: func(w *Workload) {
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
		p, ok := paramsCopy[Syscall](*w)
		if !ok {
			return
		}
		if p.Name == "" {
			p.Name = DefaultSyscall
		}
		if p.Size == 0 && (p.Name == "read" || p.Name == "write") {
			p.Size = DefaultSize
		}
		w.Params = p
	},
	Check: func(w Workload) error {
		p, err := kindParams[Syscall](w)
		if err != nil {
			return err
		}
		if p.Name == "getppid" && p.Size != 0 {
			return errors.New("size does not apply to syscall getppid")
		}
		errs := []error{checkOneOf("syscall", p.Name, workloadSyscalls)}
		if p.Name != "getppid" {
			errs = append(errs, checkIntRange("size", p.Size, 1, maxSize))
		}
		errs = append(errs, checkIntRange("threads", w.Threads, 1, maxThreads), checkRate(p.Rate), checkCPUs(w.CPUs))
		return firstError(errs)
	},
	New: newSyscallKind,
	Syscalls: func(w Workload) []string {
		if p, ok := w.Params.(*Syscall); ok && p != nil {
			return []string{p.Name}
		}
		return nil
	},
}

// parseSyscall is the syscall kind's WorkloadKind.Parse.
func parseSyscall(_ config.Node, fs []config.Field) (any, error) {
	p := &Syscall{}
	var sizeAt *config.Field
	for i, f := range fs {
		var err error
		switch f.Key {
		case "syscall":
			p.Name, err = f.OneOf("syscall for the syscall workload", workloadSyscalls)
		case "size":
			sizeAt = &fs[i]
			p.Size, err = f.Int(1, maxSize)
		case "rate":
			r, ok := f.Number()
			if !ok || checkRate(r) != nil {
				err = f.Value.Errorf("rate must be a number from 0 (closed loop) to %g operations per second per thread, got %q", maxRate, f.Value.Text())
			}
			p.Rate = r
		}
		if err != nil {
			return nil, err
		}
	}
	if sizeAt != nil && p.Name == "getppid" {
		return nil, sizeAt.KeyAt.Errorf("size does not apply to syscall getppid; remove it")
	}
	return p, nil
}
