// Package sysctl sets kernel parameters under /proc/sys for the length of a
// measurement and puts them back afterwards, checking by reading back that
// what was restored is what was there before.
//
// A value left changed on a machine is worse than a failed run: every
// restore failure names the key and the command that sets it by hand.
package sysctl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tailgate-ci/tailgate/internal/cmdline"
)

// Root is where the kernel exposes its parameters.
const Root = "/proc/sys"

// Setting is one parameter and the value to give it, e.g.
// vm.swappiness=10.
type Setting struct {
	Key   string // dotted (kernel.timer_migration) or slashed (net/ipv4/conf/eth0.1/rp_filter)
	Value string
}

func (s Setting) String() string { return s.Key + "=" + s.Value }

// Parse reads KEY=VALUE. KEY is dotted as sysctl(8) writes it, or uses
// slashes when a component holds a dot itself (an interface eth0.1).
func Parse(s string) (Setting, error) {
	key, val, ok := strings.Cut(s, "=")
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	if !ok || key == "" {
		return Setting{}, fmt.Errorf("sysctl %q: want KEY=VALUE, e.g. vm.swappiness=10", s)
	}
	if val == "" {
		return Setting{}, fmt.Errorf("sysctl %q: empty value", s)
	}
	if _, err := rel(key); err != nil {
		return Setting{}, fmt.Errorf("sysctl %q: %w", s, err)
	}
	return Setting{Key: key, Value: val}, nil
}

// rel is the key's path below the root.
func rel(key string) (string, error) {
	p := key
	if !strings.Contains(key, "/") {
		p = strings.ReplaceAll(key, ".", "/")
	}
	p = strings.Trim(p, "/")
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return "", fmt.Errorf("key %q is not a sysctl name", key)
		}
	}
	return p, nil
}

// Path returns the file of key below root.
func Path(root, key string) (string, error) {
	r, err := rel(key)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, r), nil
}

// Read returns the current value of key, whitespace normalised.
func Read(root, key string) (string, error) {
	p, err := Path(root, key)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("sysctl %s: no such parameter on this kernel (%s)", key, p)
	}
	if err != nil {
		return "", fmt.Errorf("sysctl %s: %w", key, err)
	}
	return normalize(string(b)), nil
}

// normalize makes a value comparable: multi-value parameters read back
// tab-separated whatever was written.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// write sets key and reads it back. A key the kernel would not open for
// writing is a *NotWrittenError: its value did not change. One that
// reads back another value is a *ReadBackError.
func write(root, key, value string) error {
	p, err := Path(root, key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return &NotWrittenError{Key: key, Err: err}
	}
	_, werr := f.WriteString(value + "\n")
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("sysctl %s=%s: %w", key, value, err)
	}
	got, err := Read(root, key)
	if err != nil {
		return err
	}
	if got != normalize(value) {
		return &ReadBackError{Key: key, Wrote: value, Read: got}
	}
	return nil
}

// NotWrittenError is a key the kernel would not open for writing: nothing
// was written.
type NotWrittenError struct {
	Key string
	Err error
}

func (e *NotWrittenError) Error() string { return fmt.Sprintf("sysctl %s: %v", e.Key, e.Err) }
func (e *NotWrittenError) Unwrap() error { return e.Err }

// ReadBackError is a write the kernel took that reads back another value.
type ReadBackError struct {
	Key, Wrote, Read string
}

func (e *ReadBackError) Error() string {
	return fmt.Sprintf("sysctl %s reads back %q after writing %q", e.Key, e.Read, e.Wrote)
}

// putBack writes saved back over set, the value a run gave the key. A
// write the kernel took that reads back neither the saved value nor set
// is the key changing by itself: it is back as far as anything can put it
// back, and no failure. set is "" when unknown, and then such a key is
// a failure.
func putBack(root string, saved Setting, set string) error {
	err := write(root, saved.Key, saved.Value)
	var rb *ReadBackError
	if errors.As(err, &rb) && set != "" && rb.Read != normalize(set) {
		return nil
	}
	return err
}

// KeyError is a key that tailgate refuses to set, before anything is
// written: one whose value it could not put back as it found it.
type KeyError struct {
	Setting Setting
	Why     string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("sysctl %s cannot be set: %s", e.Setting, e.Why)
}

// oneWay are the keys some of whose values the kernel takes and never
// lets go back until the next boot, each with the test of a value (read
// as the kernel reads it, kernelInt) and of the key's current one:
// probing such a value would change the machine for good.
var oneWay = map[string]struct {
	locks func(v, cur int64) bool
	why   string
}{
	"kernel/modules_disabled":          {is(1), "the kernel keeps that value until the next boot"},
	"kernel/kexec_load_disabled":       {is(1), "the kernel keeps that value until the next boot"},
	"kernel/unprivileged_bpf_disabled": {is(1), "the kernel keeps that value until the next boot"},
	"kernel/yama/ptrace_scope":         {is(3), "the kernel keeps that value until the next boot"},
	"kernel/tainted":                   {func(v, cur int64) bool { return true }, "the kernel only ever adds taint bits"},
	"kernel/kexec_load_limit_panic":    {below, "the kernel only ever lowers that limit"},
	"kernel/kexec_load_limit_reboot":   {below, "the kernel only ever lowers that limit"},
}

func is(n int64) func(v, cur int64) bool { return func(v, cur int64) bool { return v == n } }

func below(v, cur int64) bool { return v < cur }

// kernelInt reads the first number of value as the kernel's integer
// sysctls do (proc_dointvec, kstrtoul: base 0): blanks before it, a
// sign, 0x for hex and a leading 0 for octal, so that 01 and 0x1 are 1.
// Go's base 0 also takes 0b, 0o and underscores, which the kernel
// refuses: reading such a value as a number errs on the side of refusing
// it. A value that is no number is false: the kernel refuses it too,
// which the probe write finds.
func kernelInt(value string) (int64, bool) {
	f := strings.FieldsFunc(value, func(r rune) bool { return r == 0 || unicode.IsSpace(r) })
	if len(f) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(f[0], 0, 64)
	return n, err == nil
}

// oneWayWhy is why setting s could never be put back, "" when it could.
func oneWayWhy(root string, s Setting) string {
	r, err := rel(s.Key)
	if err != nil {
		return ""
	}
	ow, ok := oneWay[r]
	if !ok {
		return ""
	}
	v, ok := kernelInt(s.Value)
	if !ok {
		return ""
	}
	cur := int64(0)
	if c, err := Read(root, s.Key); err == nil {
		cur, _ = kernelInt(c)
	}
	if !ow.locks(v, cur) {
		return ""
	}
	return fmt.Sprintf("%s (%s reads as %d), so it could not be put back", ow.why, s.Value, v)
}

// stableReads and stableGap: how often, and how far apart, Check reads a
// key to see that it holds still.
const (
	stableReads = 3
	stableGap   = 2 * time.Millisecond
)

// Check refuses, before anything is written, a setting that could not be
// put back as it was: a key this kernel lacks, a read-only key, one whose
// value the kernel changes by itself (fs.file-nr, kernel.random.uuid), a
// value the kernel never lets go of (kernel.modules_disabled=1). A
// missing key is the error of Read; the others are a *KeyError.
func Check(root string, s Setting) error {
	first, err := Read(root, s.Key)
	if err != nil {
		return err
	}
	p, err := Path(root, s.Key)
	if err != nil {
		return err
	}
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("sysctl %s: %w", s.Key, err)
	}
	if perm := st.Mode().Perm(); perm&0o222 == 0 {
		return &KeyError{Setting: s, Why: fmt.Sprintf("the key is read-only (mode %04o)", perm)}
	}
	if why := oneWayWhy(root, s); why != "" {
		return &KeyError{Setting: s, Why: why}
	}
	for range stableReads - 1 {
		time.Sleep(stableGap)
		v, err := Read(root, s.Key)
		if err != nil {
			return err
		}
		if v != first {
			return &KeyError{Setting: s, Why: fmt.Sprintf("the kernel changes the key by itself (read %q, then %q), so it could not be put back as it was", first, v)}
		}
	}
	return nil
}

// Applied is a set of settings in force, with the values they replaced.
type Applied struct {
	root    string
	set     []Setting // the settings, in the order applied
	saved   []Setting // previous values, in the order applied
	journal *journal  // the saved values on disk while any is changed
}

// Apply saves the current value of each setting, in memory and in a
// journal file (see Recover), then writes the new ones in order, each
// checked by reading it back. If any read or write fails, the settings
// already written are restored before Apply returns the error (joined with
// a *RestoreError if restoring failed too). Nothing is written unless the
// journal is on disk first. A key another live run holds in its journal is
// a *BusyError, and nothing is written.
func Apply(root string, settings []Setting) (*Applied, error) {
	a := &Applied{root: root}
	for _, s := range settings {
		old, err := Read(root, s.Key)
		if err != nil {
			return nil, err
		}
		a.saved = append(a.saved, Setting{Key: s.Key, Value: old})
	}
	j, err := writeJournal(JournalDir(root), root, a.saved, settings)
	if err != nil {
		return nil, err
	}
	a.journal = j
	a.set = settings
	for i, s := range settings {
		if err := write(root, s.Key, s.Value); err != nil {
			// Restore puts back only what may have changed: this key (a
			// write that fails part way may still have changed it) and
			// those before it; not this key when it was never opened.
			n := i + 1
			if errors.As(err, new(*NotWrittenError)) {
				n = i
			}
			a.saved = a.saved[:n]
			return nil, errors.Join(err, a.Restore())
		}
	}
	return a, nil
}

// Probe checks each setting (Check), then writes it and restores it at
// once, so that a key the kernel will not let be written (read-only, or a
// value it rejects) is found before any measurement rather than after the
// first. Its error for such a key is a *ProbeError; a *RestoreError if
// putting a value back failed; a *BusyError if another run holds the key.
func Probe(root string, settings []Setting) error {
	for _, s := range settings {
		if err := Check(root, s); err != nil {
			return &ProbeError{Setting: s, Err: err}
		}
		a, err := Apply(root, []Setting{s})
		if err != nil {
			var re *RestoreError
			if errors.As(err, &re) || errors.As(err, new(*BusyError)) {
				return err
			}
			return &ProbeError{Setting: s, Err: err}
		}
		if err := a.Restore(); err != nil {
			return err
		}
	}
	return nil
}

// ProbeError is a setting the kernel would not take.
type ProbeError struct {
	Setting Setting
	Err     error
}

func (e *ProbeError) Error() string {
	var ke *KeyError
	if errors.As(e.Err, &ke) {
		return ke.Error()
	}
	return fmt.Sprintf("sysctl %s cannot be set on this kernel: %v", e.Setting, unwrapSysctl(e.Err))
}

func (e *ProbeError) Unwrap() error { return e.Err }

// unwrapSysctl drops the "sysctl KEY=VALUE: " context the error of write
// repeats, for a message that names the setting once.
func unwrapSysctl(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// setValue is the value a names for key, "" when none.
func (a *Applied) setValue(key string) string {
	for _, s := range a.set {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// Restore writes the saved values back, last applied first, and reads
// each back; a key that already reads its saved value is not written. It
// tries every key whatever fails; the error is a *RestoreError naming each
// key left wrong, and then the journal stays for the next Recover. Restore
// is idempotent: a second call does nothing.
func (a *Applied) Restore() error {
	if a == nil {
		return nil
	}
	var re RestoreError
	for i := len(a.saved) - 1; i >= 0; i-- {
		s := a.saved[i]
		if cur, err := Read(a.root, s.Key); err == nil && cur == normalize(s.Value) {
			continue // never changed: a read-only key stays restorable
		}
		if err := putBack(a.root, s, a.setValue(s.Key)); err != nil {
			re.Failed = append(re.Failed, Failure{Setting: s, Err: err})
		}
	}
	a.saved = nil
	if a.journal != nil {
		if len(re.Failed) == 0 {
			a.journal.remove()
		} else {
			a.journal.release()
		}
		a.journal = nil
	}
	if len(re.Failed) > 0 {
		return &re
	}
	return nil
}

// Suspend puts the saved values back for a while, last applied first,
// each read back, and keeps the journal: the settings are out of force
// until Resume, and a run that dies meanwhile leaves nothing for Recover
// to do but remove it. A variant whose settings hold during its own
// slices of a shared round only suspends them between its slices and
// restores them once, at the end. A key that cannot be put back is a
// *RestoreError, and the journal then stays for Recover.
func (a *Applied) Suspend() error {
	if a == nil {
		return nil
	}
	var re RestoreError
	for i := len(a.saved) - 1; i >= 0; i-- {
		s := a.saved[i]
		if err := putBack(a.root, s, a.setValue(s.Key)); err != nil {
			re.Failed = append(re.Failed, Failure{Setting: s, Err: err})
		}
	}
	if len(re.Failed) > 0 {
		return &re
	}
	return nil
}

// Resume writes the settings again after Suspend, in order, each read
// back. After Restore it is an error: the journal is gone.
func (a *Applied) Resume() error {
	if a == nil || a.journal == nil {
		return errors.New("sysctl: resume after restore")
	}
	for _, s := range a.set {
		if err := write(a.root, s.Key, s.Value); err != nil {
			return err
		}
	}
	return nil
}

// RestoreError lists the parameters that could not be put back.
type RestoreError struct {
	Failed []Failure
}

// Failure is one parameter left changed: Setting is the value it must get
// back.
type Failure struct {
	Setting Setting
	Err     error
}

func (e *RestoreError) Error() string {
	var parts []string
	for _, f := range e.Failed {
		parts = append(parts, fmt.Sprintf("could not restore sysctl %s to %q (%v); set it by hand: sysctl -w %s",
			f.Setting.Key, f.Setting.Value, f.Err, cmdline.Quote(f.Setting.String())))
	}
	return strings.Join(parts, "; ")
}

func (e *RestoreError) Unwrap() []error {
	var out []error
	for _, f := range e.Failed {
		out = append(out, f.Err)
	}
	return out
}
