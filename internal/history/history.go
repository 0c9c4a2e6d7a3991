// Package history is the store of main's Results: one record per commit
// and target, plus an index, kept in a directory or on a git branch
// (docs/history.md). Every change is one transaction on the store's
// content: under a lock for a directory, a commit pushed without force for
// a branch (redone on the new tip when another writer pushed first), so
// two writers that append at once both land and a reader never sees half
// a record.
package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// Format is the version of the index and record documents this package
// writes. Readers refuse a newer one.
const Format = 1

// IndexFile is the index's name at the store's root; records live under
// RecordsDir.
const (
	IndexFile  = "tailgate-history.json"
	RecordsDir = "records"
)

// Errors a caller can test for.
var (
	// ErrFutureFormat: the store was written by a newer tailgate.
	ErrFutureFormat = errors.New("history store format is newer than this tailgate")
	// ErrCorrupt: a document of the store does not parse or does not match
	// the index.
	ErrCorrupt = errors.New("history store is corrupt")
	// ErrDuplicate: the commit and target are recorded already.
	ErrDuplicate = errors.New("already recorded")
	// ErrBadInput: a commit, time or target that cannot be recorded.
	ErrBadInput = errors.New("bad history input")
	// ErrNotFound: no record matches.
	ErrNotFound = errors.New("not in the history")
)

// IsInput says err is the input's or the store's content (a bad commit, a
// record already there or corrupt, a store missing or newer, a link in
// it that another user could have placed), not the
// machinery's (git, the disk): the user's to fix.
func IsInput(err error) bool {
	for _, target := range []error{ErrBadInput, ErrDuplicate, ErrCorrupt, ErrFutureFormat, ErrNotFound,
		result.ErrCorrupt, result.ErrFutureSchema, fs.ErrNotExist, safefile.ErrPlantedLink, safefile.ErrSymlink} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// Index lists every record of the store, oldest first.
type Index struct {
	Format  int     `json:"format"`
	Entries []Entry `json:"entries"`
}

// Entry is one record as the index lists it: enough to order and select
// records without reading them, and the digest that proves a record whole.
type Entry struct {
	Commit string    `json:"commit"`
	Time   time.Time `json:"time"` // the commit's time: the series' order
	Ref    string    `json:"ref,omitempty"`
	Target string    `json:"target"`
	Path   string    `json:"path"` // the record, relative to the store's root
	SHA256 string    `json:"sha256"`
	Size   int64     `json:"size"`
	Added  time.Time `json:"added"`
	// Scenarios are the names of the record's scenarios.
	Scenarios []string `json:"scenarios"`
}

// Record is one Result stored under its commit, with where it came from.
type Record struct {
	Format     int            `json:"format"`
	Commit     string         `json:"commit"`
	Time       time.Time      `json:"time"`
	Ref        string         `json:"ref,omitempty"`
	Target     string         `json:"target"`
	Added      time.Time      `json:"added"`
	Provenance Provenance     `json:"provenance"`
	Result     *result.Result `json:"result"`
}

// Provenance is who added a record: the tailgate and, in CI, the run.
type Provenance struct {
	Tailgate result.Version `json:"tailgate"`
	// Run identifies the CI run that added the record (GitHub Actions:
	// repository/actions/runs/ID/attempts/N), when there was one.
	Run string `json:"run,omitempty"`
}

// CIProvenance is the provenance of a record added now by tailgate,
// running as v: in GitHub Actions (getenv finds GITHUB_RUN_ID) the run's
// attempt too.
func CIProvenance(v result.Version, getenv func(string) string) Provenance {
	p := Provenance{Tailgate: v}
	if id := getenv("GITHUB_RUN_ID"); id != "" {
		p.Run = fmt.Sprintf("%s/%s/actions/runs/%s/attempts/%s", getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), id, getenv("GITHUB_RUN_ATTEMPT"))
	}
	return p
}

var (
	commitRE     = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
	fullCommitRE = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
)

// CheckCommit checks that c is a commit id as a store may list it: 7 to
// 64 lower-case hex digits (older tailgates recorded abbreviated ones).
func CheckCommit(c string) error {
	if !commitRE.MatchString(c) {
		return fmt.Errorf("%w: commit %q is not a commit id (7 to 64 hex digits, as git rev-parse HEAD prints)", ErrBadInput, c)
	}
	return nil
}

// CheckFullCommit checks that c is a whole commit id, 40 hex digits (64
// for a SHA-256 repository): what a new record is filed under. An
// abbreviation would file one commit under two ids.
func CheckFullCommit(c string) error {
	if !fullCommitRE.MatchString(c) {
		return fmt.Errorf("%w: commit %q is not a whole commit id: give its 40 hex digits (64 in a SHA-256 repository), as git rev-parse HEAD prints them", ErrBadInput, c)
	}
	return nil
}

// fileName turns a target name into a file name: what is not a letter,
// digit, '.', '-' or '_' becomes '_', and a digest of the name keeps two
// names that map alike apart.
func fileName(target string) string {
	ok := target != "" && !strings.HasPrefix(target, ".")
	var b strings.Builder
	for _, r := range target {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			ok = false
			b.WriteByte('_')
		}
	}
	if !ok || b.Len() > 100 {
		sum := sha256.Sum256([]byte(target))
		s := b.String()
		if len(s) > 100 {
			s = s[:100]
		}
		return s + "-" + hex.EncodeToString(sum[:4])
	}
	return b.String()
}

// RecordPath is where the record of commit and target lives.
func RecordPath(commit, target string) string {
	return RecordsDir + "/" + commit + "/" + fileName(target) + ".json"
}

// NewRecord makes the record of r under commit.
func NewRecord(r *result.Result, commit string, at time.Time, ref string, prov Provenance) (*Record, error) {
	if err := CheckFullCommit(commit); err != nil {
		return nil, err
	}
	if r == nil || len(r.Scenarios) == 0 {
		return nil, fmt.Errorf("%w: the Result has no scenarios", ErrBadInput)
	}
	if r.Partial {
		return nil, fmt.Errorf("%w: the Result is partial (the run was interrupted or failed part way); record a complete run", ErrBadInput)
	}
	if r.Target.Name == "" {
		return nil, fmt.Errorf("%w: the Result names no target", ErrBadInput)
	}
	if at.IsZero() {
		at = r.Started
	}
	return &Record{
		Format: Format, Commit: commit, Time: at.UTC(), Ref: ref, Target: r.Target.Name,
		Provenance: prov, Result: r,
	}, nil
}

// ParseIndex decodes an index document.
func ParseIndex(b []byte) (*Index, error) {
	var probe struct {
		Format *int `json:"format"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", IndexFile, ErrCorrupt, err)
	}
	if probe.Format == nil || *probe.Format < 1 {
		return nil, fmt.Errorf("%s: %w: no format version", IndexFile, ErrCorrupt)
	}
	if *probe.Format > Format {
		return nil, fmt.Errorf("%s: %w: format %d, this tailgate reads up to %d; upgrade tailgate", IndexFile, ErrFutureFormat, *probe.Format, Format)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var ix Index
	if err := dec.Decode(&ix); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", IndexFile, ErrCorrupt, err)
	}
	// A path is read and removed: it must be the record's own, inside the
	// store, whoever edited the index.
	for i, e := range ix.Entries {
		if err := CheckCommit(e.Commit); err != nil {
			return nil, fmt.Errorf("%s: %w: entry %d: %v", IndexFile, ErrCorrupt, i+1, err)
		}
		if want := RecordPath(e.Commit, e.Target); e.Path != want {
			return nil, fmt.Errorf("%s: %w: entry %d names %q, not the record of commit %s target %q (%s)", IndexFile, ErrCorrupt, i+1, e.Path, e.Commit, e.Target, want)
		}
	}
	return &ix, nil
}

// ParseRecord decodes a record document and checks its Result.
func ParseRecord(name string, b []byte) (*Record, error) {
	var raw struct {
		Format *int            `json:"format"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrCorrupt, err)
	}
	if raw.Format == nil || *raw.Format < 1 {
		return nil, fmt.Errorf("%s: %w: no format version", name, ErrCorrupt)
	}
	if *raw.Format > Format {
		return nil, fmt.Errorf("%s: %w: format %d, this tailgate reads up to %d; upgrade tailgate", name, ErrFutureFormat, *raw.Format, Format)
	}
	res, err := result.Parse(raw.Result)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var rec Record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&struct {
		*Record
		Result json.RawMessage `json:"result"`
	}{Record: &rec}); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrCorrupt, err)
	}
	rec.Result = res
	return &rec, nil
}

func marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(indentLeaves(b), '\n'), nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// sortEntries orders entries by commit time, then by when they were added.
func sortEntries(es []Entry) {
	slices.SortStableFunc(es, func(a, b Entry) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return a.Added.Compare(b.Added)
	})
}

// Commits returns the distinct commits of the index in series order (by
// their first record).
func (ix *Index) Commits() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range ix.Entries {
		if !seen[e.Commit] {
			seen[e.Commit] = true
			out = append(out, e.Commit)
		}
	}
	return out
}

// Lookup returns the entries whose commit starts with prefix (at least 7
// digits), for one commit: an ambiguous prefix is an error.
func (ix *Index) Lookup(prefix string) ([]Entry, error) {
	if len(prefix) < 7 {
		return nil, fmt.Errorf("%w: commit %q: give at least 7 hex digits", ErrBadInput, prefix)
	}
	var out []Entry
	commit := ""
	for _, e := range ix.Entries {
		if !strings.HasPrefix(e.Commit, strings.ToLower(prefix)) {
			continue
		}
		if commit != "" && e.Commit != commit {
			return nil, fmt.Errorf("%w: commit %q matches both %s and %s; give more digits", ErrBadInput, prefix, commit, e.Commit)
		}
		commit = e.Commit
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("commit %s: %w", prefix, ErrNotFound)
	}
	return out, nil
}
