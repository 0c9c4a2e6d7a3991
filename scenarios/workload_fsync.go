package scenarios

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/tailgate-ci/tailgate/internal/config"
)

// Fsync is the fsync workload kind's own parameter: the directory its
// files are written in. Its size and threads are Workload's fields, as for
// the syscall kind.
//
//	workload:
//	  kind: fsync
//	  dir: /var/lib/ci  # default: a new directory under /var/tmp
//	  size: 4096        # bytes written before each fdatasync (default 4 KiB)
//	  threads: 1        # each with a file of its own
type Fsync struct {
	// Dir is an existing directory, on the disk to measure; empty makes
	// one under DefaultFsyncParent for the run and removes it after.
	Dir string `json:"dir,omitempty"`
}

// DefaultFsyncParent is where the fsync kind makes its directory when the
// scenario names none: /var/tmp is on a disk where /tmp may be tmpfs,
// whose fdatasync reaches no device.
const DefaultFsyncParent = "/var/tmp"

// fsyncKind is the fsync workload kind: each thread overwrites the start
// of its file with size bytes and fdatasyncs it, in a loop; ops are
// fdatasyncs.
var fsyncKind = WorkloadKind{
	Name:         "fsync",
	Keys:         []string{"dir", "size", "threads"},
	Parse:        parseFsyncKind,
	DecodeParams: decodeFsync,
	Defaults: func(w *Workload) {
		if w.Size == 0 {
			w.Size = DefaultFsyncSize
		}
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
		switch p := w.Params.(type) {
		case nil:
			w.Params = &Fsync{}
		case *Fsync:
			if p == nil {
				w.Params = &Fsync{}
			}
		}
	},
	Check: func(w Workload) error {
		p, ok := w.Params.(*Fsync)
		if !ok || p == nil {
			return fmt.Errorf("workload kind fsync takes its parameters as *Fsync, got %T", w.Params)
		}
		return firstError([]error{checkIntRange("size", w.Size, 1, maxSize),
			checkIntRange("threads", w.Threads, 1, maxThreads), p.check()})
	},
	New:      newFsyncKind,
	Syscalls: func(Workload) []string { return []string{"fdatasync"} },
}

// DefaultFsyncSize is the fsync kind's default size: one page.
const DefaultFsyncSize = 4096

func (p Fsync) check() error {
	if p.Dir != "" && !filepath.IsAbs(p.Dir) {
		return fmt.Errorf("dir must be an absolute path, got %q", p.Dir)
	}
	return nil
}

// parseFsyncKind is the fsync kind's WorkloadKind.Parse: it reads dir into
// w.Params.
func parseFsyncKind(w *Workload, _ config.Node, fs []config.Field) error {
	p := &Fsync{}
	for _, f := range fs {
		if f.Key != "dir" {
			continue
		}
		dir, err := f.String()
		if err != nil {
			return err
		}
		p.Dir = dir
		if err := p.check(); err != nil {
			return f.Value.Errorf("%v; the directory the file is written in, e.g. /var/tmp", err)
		}
	}
	w.Params = p
	return nil
}

// decodeFsync is the fsync kind's WorkloadKind.DecodeParams.
func decodeFsync(b []byte) (any, error) {
	p := &Fsync{}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, err
	}
	return p, nil
}
