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
	"strings"
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

// write sets key and reads it back.
func write(root, key, value string) error {
	p, err := Path(root, key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("sysctl %s: %w", key, err)
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
		return fmt.Errorf("sysctl %s reads back %q after writing %q", key, got, value)
	}
	return nil
}

// Applied is a set of settings in force, with the values they replaced.
type Applied struct {
	root  string
	saved []Setting // previous values, in the order applied
}

// Apply saves the current value of each setting, then writes the new
// ones in order, each checked by reading it back. If any read or write
// fails, the settings already written are restored before Apply returns
// the error (joined with a *RestoreError if restoring failed too).
func Apply(root string, settings []Setting) (*Applied, error) {
	a := &Applied{root: root}
	for _, s := range settings {
		old, err := Read(root, s.Key)
		if err != nil {
			return nil, errors.Join(err, a.Restore())
		}
		// Saved before the write: a write that fails part way may still
		// have changed the value.
		a.saved = append(a.saved, Setting{Key: s.Key, Value: old})
		if err := write(root, s.Key, s.Value); err != nil {
			return nil, errors.Join(err, a.Restore())
		}
	}
	return a, nil
}

// Restore writes the saved values back, last applied first, and reads
// each back. It tries every key whatever fails; the error is a
// *RestoreError naming each key left wrong. Restore is idempotent: a
// second call does nothing.
func (a *Applied) Restore() error {
	if a == nil {
		return nil
	}
	var re RestoreError
	for i := len(a.saved) - 1; i >= 0; i-- {
		s := a.saved[i]
		if err := write(a.root, s.Key, s.Value); err != nil {
			re.Failed = append(re.Failed, Failure{Setting: s, Err: err})
		}
	}
	a.saved = nil
	if len(re.Failed) > 0 {
		return &re
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
			f.Setting.Key, f.Setting.Value, f.Err, shellQuote(f.Setting.String())))
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

func shellQuote(s string) string {
	if !strings.ContainsAny(s, " \t'\"$`\\") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
