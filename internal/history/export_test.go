package history

import "context"

// AddAll writes recs and an index listing them in one transaction, as
// len(recs) Adds would, for tests that need a long history fast.
func AddAll(ctx context.Context, s *Store, recs []*Record) error {
	put := map[string][]byte{}
	ix := &Index{Format: Format}
	for _, rec := range recs {
		rec.Format = Format
		b, err := marshal(rec)
		if err != nil {
			return err
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
			return err
		}
		put[e.Path] = b
		put[SummaryPath(e.Path)] = sb
		ix.Entries = append(ix.Entries, e)
	}
	sortEntries(ix.Entries)
	b, err := marshal(ix)
	if err != nil {
		return err
	}
	put[IndexFile] = b
	return s.b.update(ctx, "history: add all", func(snapshot) (*change, error) {
		return &change{put: put}, nil
	})
}
