package history

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// Origin is where a Result came from, as its record says: the commit (any
// case), when it was made (zero: the Result's start), the ref it was
// pushed to, and who recorded it.
type Origin struct {
	Commit     string
	At         time.Time
	Ref        string
	Provenance Provenance
}

// AddResult records the Result file path under its origin: NewRecord, then
// Add. A Result that does not read or cannot be recorded is the input's
// (IsInput).
func (s *Store) AddResult(ctx context.Context, path string, o Origin, opt AddOptions) (Entry, error) {
	r, err := result.Load(path)
	if err != nil {
		return Entry{}, err
	}
	if opt.Check != nil {
		if err := opt.Check(r); err != nil {
			return Entry{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	rec, err := NewRecord(r, strings.ToLower(o.Commit), o.At, o.Ref, o.Provenance)
	if err != nil {
		return Entry{}, fmt.Errorf("%s: %w", path, err)
	}
	return s.Add(ctx, rec, opt)
}

// String is the problem as history check lists it: "error: PATH: ERR",
// "warning: ..." for what loses no data.
func (p Problem) String() string {
	level := "error"
	if p.Warning {
		level = "warning"
	}
	return fmt.Sprintf("%s: %s: %v", level, p.Path, p.Err)
}

// NewPolicy is the policy of history prune's --keep N (the newest
// commits) and --older-than D (ParseAge); one of them must prune.
func NewPolicy(keep int, olderThan string) (Policy, error) {
	p := Policy{Keep: keep}
	if olderThan != "" {
		var err error
		if p.OlderThan, err = ParseAge(olderThan); err != nil {
			return p, badInputf("--older-than %q: want a duration such as 720h or 90d", olderThan)
		}
	}
	if keep < 0 {
		return p, badInputf("--keep %d: want a positive count", keep)
	}
	if p.Keep == 0 && p.OlderThan == 0 {
		return p, badInputf("give --keep N or --older-than D")
	}
	return p, nil
}
