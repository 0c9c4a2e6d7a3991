package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/report/render"
)

// compare --history STORE --format json puts each gated verdict's
// history in the compare document (its commits, their times and values,
// the ref), and the document still validates against
// docs/compare.schema.json.
func TestCompareJSONHistory(t *testing.T) {
	store, commits := historyOfTrials(t, false, 1)
	dir := filepath.Dir(store)
	out := filepath.Join(dir, "compare.json")
	code, _, stderr := runInProcess(t, "compare", filepath.Join(dir, "r1.json"), filepath.Join(dir, "r12.json"),
		"--history", store, "--history-n", "5", "--resamples", "200", "--format", "json="+out)
	if code != exitPass && code != exitRegression {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := validateBytes(t, docsSchema(t, "compare"), b); err != nil {
		t.Errorf("the document with its history does not validate against docs/compare.schema.json: %v\n%s", err, b)
	}
	var doc render.JSONReport
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	gated := 0
	for _, s := range doc.Scenarios {
		for _, v := range s.Verdicts {
			if !v.Gated {
				if v.History != nil {
					t.Errorf("%s %s: not gated, yet a history", v.Metric, v.Percentile)
				}
				continue
			}
			gated++
			h := v.History
			if h == nil {
				t.Fatalf("%s %s: gated, no history in\n%s", v.Metric, v.Percentile, b)
			}
			var got []string
			for i, c := range h.Commits {
				got = append(got, c.Commit)
				// history add --time 1700000000+3600*c, c from 1.
				if want := time.Unix(int64(1700000000+3600*(8+i)), 0).UTC(); !c.Time.Equal(want) || c.ValueNs == nil {
					t.Errorf("commit %s: time %v value %v, want %v and a value", c.Commit, c.Time, c.ValueNs, want)
				}
			}
			if h.Ref != "main" || !slices.Equal(got, commits[7:]) || h.CandNs == nil {
				t.Errorf("%s %s: history of %q, commits %v, candidate %v; want main's last 5 %v and a value", v.Metric, v.Percentile, h.Ref, got, h.CandNs, commits[7:])
			}
		}
	}
	if gated == 0 {
		t.Fatalf("no gated verdict in\n%s", b)
	}
}
