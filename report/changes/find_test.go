package changes

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// Find reads a store's records into series and detects their change
// points; a store with no series to test is ErrNoSeries, naming what was
// selected.
func TestFind(t *testing.T) {
	ctx := context.Background()
	s, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	read := func() *history.View {
		v, err := s.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	_, err = Find(read(), Selection{Metrics: []string{"syscall.read"}}, Options{})
	if !errors.Is(err, ErrNoSeries) || !strings.Contains(err.Error(), "no record has metric syscall.read at (gated)") {
		t.Errorf("an empty store: %v, want ErrNoSeries naming the selection", err)
	}

	r, err := result.Load(filepath.Join("..", "testdata", "trials-syscall-read.json"))
	if err != nil {
		t.Fatal(err)
	}
	for c := range 6 {
		rec, err := history.NewRecord(r, fmt.Sprintf("%040x", c+1), time.Unix(int64(c)*3600, 0), "main", history.Provenance{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(ctx, rec, history.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Find(read(), Selection{}, Options{Level: DefaultLevel})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Series) == 0 || len(rep.Changes) != 0 {
		t.Errorf("six commits of the same trials: %d series, %d change points; want some series, no change", len(rep.Series), len(rep.Changes))
	}
	for _, ts := range rep.Series {
		if len(ts.Points) != 6 {
			t.Errorf("series %v has %d points, want one per commit", ts.Key, len(ts.Points))
		}
	}
	if _, err := Find(read(), Selection{Metrics: []string{"no.such"}}, Options{}); !errors.Is(err, ErrNoSeries) {
		t.Errorf("a metric no record has: %v, want ErrNoSeries", err)
	}
}
