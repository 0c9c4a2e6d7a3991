package history

import (
	"context"
	"errors"
	"fmt"
	"github.com/tailgate-ci/tailgate/internal/result"
	"io/fs"
	"strings"
	"time"
)

// DefaultBranch is the branch a git store uses when its spec names none.
const DefaultBranch = "tailgate-history"

// Store is a history store: a directory (Open of a path) or a branch of a
// git repository (Open of "git:REPO[#BRANCH]").
type Store struct {
	spec string
	b    backend
}

// backend is where a store's files live. A transaction reads a snapshot
// and returns the files to put and delete; the backend applies them all
// or none, retrying on a fresh snapshot when another writer won.
type backend interface {
	snapshot(ctx context.Context) (snapshot, error)
	update(ctx context.Context, msg string, fn func(snapshot) (*change, error)) error
}

// snapshot is a store's content at one moment.
type snapshot interface {
	// read returns the file name (slash-separated, relative to the
	// root); a missing file is fs.ErrNotExist.
	read(name string) ([]byte, error)
	// list returns every file under dir, relative to the root.
	list(dir string) ([]string, error)
	// sizes returns every file under dir, relative to the root, with
	// its size in bytes.
	sizes(dir string) (map[string]int64, error)
	close() error
}

// change is what a transaction writes: puts are applied before deletes,
// and the index last of the puts, so that the index never names a record
// that is not there yet.
type change struct {
	put map[string][]byte
	del []string
}

// Open returns the store spec names: "git:REPO[#BRANCH]" is a branch
// (default DefaultBranch) of the git repository REPO, a path or a URL
// git can push to; anything else is a directory.
func Open(spec string) (*Store, error) {
	if spec == "" {
		return nil, fmt.Errorf("%w: empty store; give a directory or git:REPO[#BRANCH]", ErrBadInput)
	}
	if rest, ok := strings.CutPrefix(spec, "git:"); ok {
		repo, branch, _ := strings.Cut(rest, "#")
		if branch == "" {
			branch = DefaultBranch
		}
		if repo == "" {
			return nil, fmt.Errorf("%w: store %q names no repository; write git:REPO[#BRANCH], e.g. git:.#%s", ErrBadInput, spec, DefaultBranch)
		}
		if strings.HasPrefix(branch, "-") || strings.ContainsAny(branch, " ~^:?*[\\") || strings.Contains(branch, "..") {
			return nil, fmt.Errorf("%w: store %q: %q is not a branch name", ErrBadInput, spec, branch)
		}
		return &Store{spec: spec, b: &gitStore{repo: repo, branch: branch}}, nil
	}
	return &Store{spec: spec, b: &dirStore{dir: spec}}, nil
}

// String returns the spec the store was opened with.
func (s *Store) String() string { return s.spec }

// readIndex returns the snapshot's index; a store without one is empty.
func readIndex(sn snapshot) (*Index, error) {
	b, err := sn.read(IndexFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &Index{Format: Format}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseIndex(b)
}

// AddOptions control Add.
type AddOptions struct {
	// Replace overwrites a record of the same commit and target instead
	// of refusing it (ErrDuplicate).
	Replace bool
	// Now is the time the record is added; zero is time.Now.
	Now time.Time
	// Check, when set, checks the Result AddResult reads beyond its
	// reader (the digests of its scenarios' definitions, which this
	// package cannot compute); an error is the input's.
	Check func(*result.Result) error
}

// Add stores rec and lists it in the index, in one transaction.
func (s *Store) Add(ctx context.Context, rec *Record, opt AddOptions) (Entry, error) {
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	rec.Added = now.UTC()
	rec.Format = Format
	b, err := marshal(rec)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{
		Commit: rec.Commit, Time: rec.Time, Ref: rec.Ref, Target: rec.Target,
		Path: RecordPath(rec.Commit, rec.Target), SHA256: digest(b), Size: int64(len(b)), Added: rec.Added,
	}
	for _, sc := range rec.Result.Scenarios {
		e.Scenarios = append(e.Scenarios, sc.Name)
	}
	sb, err := marshalSummary(rec, e.SHA256)
	if err != nil {
		return Entry{}, err
	}
	msg := fmt.Sprintf("history: add %s %s", short(rec.Commit), rec.Target)
	err = s.b.update(ctx, msg, func(sn snapshot) (*change, error) {
		ix, err := readIndex(sn)
		if err != nil {
			return nil, err
		}
		kept := ix.Entries[:0:0]
		for _, old := range ix.Entries {
			if old.Commit == e.Commit && old.Target == e.Target {
				if !opt.Replace {
					return nil, fmt.Errorf("commit %s target %s: %w (added %s); pass --replace to overwrite it", e.Commit, e.Target, ErrDuplicate, old.Added.Format(time.RFC3339))
				}
				continue
			}
			kept = append(kept, old)
		}
		ix.Entries = append(kept, e)
		sortEntries(ix.Entries)
		ixb, err := marshal(ix)
		if err != nil {
			return nil, err
		}
		return &change{put: map[string][]byte{e.Path: b, SummaryPath(e.Path): sb, IndexFile: ixb}}, nil
	})
	return e, err
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// View is a store's content at one moment, for reading.
type View struct {
	Index *Index
	sn    snapshot
}

// Read opens a view of the store. Close it.
func (s *Store) Read(ctx context.Context) (*View, error) {
	sn, err := s.b.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	ix, err := readIndex(sn)
	if err != nil {
		sn.close()
		return nil, err
	}
	return &View{Index: ix, sn: sn}, nil
}

// Close releases the view.
func (v *View) Close() error { return v.sn.close() }

// Record reads and checks the record e names: its digest must be the
// index's, and it must be the record of e's commit and target.
func (v *View) Record(e Entry) (*Record, error) {
	b, err := v.sn.read(e.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w: the index lists it but it is missing", e.Path, ErrCorrupt)
	}
	if err != nil {
		return nil, err
	}
	if d := digest(b); d != e.SHA256 {
		return nil, fmt.Errorf("%s: %w: sha256 %s, the index says %s (torn or edited)", e.Path, ErrCorrupt, d[:12], e.SHA256[:min(12, len(e.SHA256))])
	}
	rec, err := ParseRecord(e.Path, b)
	if err != nil {
		return nil, err
	}
	if rec.Commit != e.Commit || rec.Target != e.Target {
		return nil, fmt.Errorf("%s: %w: holds commit %s target %s, the index says %s %s", e.Path, ErrCorrupt, rec.Commit, rec.Target, e.Commit, e.Target)
	}
	return rec, nil
}

// Problem is one thing Check found wrong with a store.
type Problem struct {
	Path string
	Err  error
	// Warning marks what does not lose data: a record the index does not
	// list (a writer stopped between the two).
	Warning bool
}

// Check reads every record the index lists and every file under
// RecordsDir, and returns what is wrong.
func (v *View) Check() []Problem {
	var out []Problem
	seen := map[string]bool{}
	pair := map[[2]string]bool{}
	for _, e := range v.Index.Entries {
		if err := CheckCommit(e.Commit); err != nil {
			out = append(out, Problem{Path: IndexFile, Err: fmt.Errorf("%w: %v", ErrCorrupt, err)})
		}
		k := [2]string{e.Commit, e.Target}
		if pair[k] {
			out = append(out, Problem{Path: IndexFile, Err: fmt.Errorf("%w: commit %s target %s listed twice", ErrCorrupt, e.Commit, e.Target)})
		}
		pair[k] = true
		seen[e.Path] = true
		seen[SummaryPath(e.Path)] = true
		rec, err := v.Record(e)
		if err != nil {
			out = append(out, Problem{Path: e.Path, Err: err})
			continue
		}
		if err := v.checkSummary(e, rec); err != nil {
			out = append(out, Problem{Path: SummaryPath(e.Path), Err: err})
		}
	}
	for _, dir := range []string{RecordsDir, SummariesDir} {
		files, err := v.sn.list(dir)
		if err != nil {
			return append(out, Problem{Path: dir, Err: err})
		}
		for _, f := range files {
			if !seen[f] {
				out = append(out, Problem{Path: f, Err: errors.New("not listed in the index (a writer stopped before its index write, or a file put there by hand); prune removes it"), Warning: true})
			}
		}
	}
	return out
}

// Present checks, without reading them, that every record the index
// lists is there and of the size the index gives: what a reader of the
// summaries alone (history changes, page) would otherwise not see of a
// store whose records were removed or edited. Check reads them all.
func (v *View) Present() []Problem {
	sizes, err := v.sn.sizes(RecordsDir)
	if err != nil {
		return []Problem{{Path: RecordsDir, Err: err}}
	}
	var out []Problem
	for _, e := range v.Index.Entries {
		switch n, ok := sizes[e.Path]; {
		case !ok:
			out = append(out, Problem{Path: e.Path, Err: fmt.Errorf("%w: the index lists it but it is missing", ErrCorrupt)})
		case n != e.Size:
			out = append(out, Problem{Path: e.Path, Err: fmt.Errorf("%w: %d bytes, the index says %d (torn or edited)", ErrCorrupt, n, e.Size)})
		}
	}
	return out
}

// Policy says which records Prune removes: those of commits older than
// OlderThan before Now, and those of all but the Keep newest commits.
// Zero fields do not prune.
type Policy struct {
	Keep      int
	OlderThan time.Duration
	Now       time.Time
}

// Prune removes the records the policy names, and files under RecordsDir
// the index does not list, in one transaction. It returns the entries
// removed.
func (s *Store) Prune(ctx context.Context, p Policy) ([]Entry, error) {
	if p.Keep < 0 || p.OlderThan < 0 {
		return nil, fmt.Errorf("%w: prune: a negative count or age", ErrBadInput)
	}
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	var removed []Entry
	err := s.b.update(ctx, "history: prune", func(sn snapshot) (*change, error) {
		removed = nil
		ix, err := readIndex(sn)
		if err != nil {
			return nil, err
		}
		commits := ix.Commits()
		drop := map[string]bool{}
		if p.Keep > 0 && len(commits) > p.Keep {
			for _, c := range commits[:len(commits)-p.Keep] {
				drop[c] = true
			}
		}
		listed := map[string]bool{}
		var kept []Entry
		for _, e := range ix.Entries {
			if drop[e.Commit] || (p.OlderThan > 0 && e.Time.Before(now.Add(-p.OlderThan))) {
				removed = append(removed, e)
				continue
			}
			kept = append(kept, e)
			listed[e.Path] = true
			listed[SummaryPath(e.Path)] = true
		}
		ch := &change{}
		for _, dir := range []string{RecordsDir, SummariesDir} {
			files, err := sn.list(dir)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				if !listed[f] {
					ch.del = append(ch.del, f)
				}
			}
		}
		if len(ch.del) == 0 {
			return nil, nil // nothing to do
		}
		ix.Entries = kept
		if ix.Entries == nil {
			ix.Entries = []Entry{}
		}
		b, err := marshal(ix)
		if err != nil {
			return nil, err
		}
		ch.put = map[string][]byte{IndexFile: b}
		return ch, nil
	})
	return removed, err
}
