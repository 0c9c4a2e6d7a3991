package render

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/report/changepoint"
	"github.com/tailgate-ci/tailgate/report/historytest"
)

// TestReportCounts checks the reports count the series they tested, not
// those too short to test, and word every count in correct English.
func TestReportCounts(t *testing.T) {
	p := historytest.LoadPool(t, "trials-syscall-read.json", "syscall.read", 2)
	r := rand.New(rand.NewPCG(5, 6))
	long := p.History(r, 30, 6, 15, 2)
	short := p.History(r, 1, 3, 0, 1)
	short[0].Key.Scenario = "syscall-read-2"
	for _, c := range []struct {
		name   string
		series []changepoint.Series
		want   string // the first line
		lines  []string
	}{
		{"one short series", short, "1 series, not tested: it has fewer than the 6 commits a change point needs",
			[]string{"1 commit, a change point needs 6; not tested", "1 commit has fewer than 6 trials; its interval is the range of its trials"}},
		{"two short series", append(short, short[0]), "2 series, none tested: each has fewer than the 6 commits a change point needs", nil},
		{"one long, one short", append(long, short...), "1 of 2 series tested, family-wise level 0.01 (Holm): 1 change point; 1 too short to test",
			[]string{"(15 commits)"}},
		{"one long", long, "1 series tested, family-wise level 0.01 (Holm): 1 change point", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := changepoint.Detect(c.series, changepoint.Options{Seed: 1})
			var text, md strings.Builder
			if err := writeChangesText(&text, rep); err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(text.String(), "\n"); first != c.want {
				t.Errorf("text's first line %q, want %q", first, c.want)
			}
			if err := writeChangesMarkdown(&md, rep); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(md.String(), "\n"+c.want+".\n") {
				t.Errorf("markdown lacks %q:\n%s", c.want, md.String())
			}
			for _, l := range c.lines {
				if !strings.Contains(text.String(), l) {
					t.Errorf("text lacks %q:\n%s", l, text.String())
				}
			}
			if strings.Contains(text.String(), " 1 commits") || strings.Contains(text.String(), "1 change points") {
				t.Errorf("text has a plural of one:\n%s", text.String())
			}
		})
	}
}
