// Package proc reads what tailgate needs of a process from /proc.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrFormat is a /proc/PID/stat that does not read as one.
var ErrFormat = errors.New("not a /proc/PID/stat")

// Stat is a process's /proc/PID/stat, the fields tailgate reads.
type Stat struct {
	// Comm is the command name (field 2), which may hold any byte but a
	// NUL, parentheses and spaces too.
	Comm string
	// State is the process state (field 3): R, S, D, Z, X, ...
	State byte
	// PPID is the parent's pid (field 4).
	PPID int
	// StartTime is when the process started, in clock ticks after boot
	// (field 22): with the pid, it names one process, never a later one
	// that reuses the pid.
	StartTime uint64
}

// Exited reports whether the process has exited: a zombie, or dead.
func (s Stat) Exited() bool { return s.State == 'Z' || s.State == 'X' }

// ReadStat reads /proc/PID/stat. An error of the read is returned as it
// is (the process is gone); text that does not parse is ErrFormat.
func ReadStat(pid int) (Stat, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	st, err := ParseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("%s: %w: %w", path, ErrFormat, err)
	}
	return st, nil
}

// ParseStat parses the text of a /proc/PID/stat.
func ParseStat(b []byte) (Stat, error) {
	// The command name is in parentheses and may hold ") ": the last
	// one ends it.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("no command name")
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3, so field 22 is f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("%d fields", len(f)+2)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Stat{}, fmt.Errorf("parent pid %q", f[1])
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("start time %q", f[19])
	}
	return Stat{Comm: string(b[open+1 : end]), State: f[0][0], PPID: ppid, StartTime: start}, nil
}
