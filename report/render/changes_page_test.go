package render

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/report/changepoint"
	"github.com/tailgate-ci/tailgate/report/historytest"
)

// The axis always has two labels at least, three where its three-digit
// labels can spell them exactly, inside its range.
func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		name   string
		lo, hi float64 // ns
		want   []float64
	}{
		{"decades: 1, 2 and 5 of each", 800, 60000, []float64{1000, 2000, 5000, 10000, 20000, 50000}},
		{"within a decade", 512, 563, []float64{520, 530, 540, 550, 560}},
		{"one commit's ±5%", 18900, 21100, []float64{19000, 20000, 21000}},
		{"a half step", 1009.5, 1019.5, []float64{1010, 1015}},
		{"thinned to six at most", 1000.5, 1095.5, []float64{1010, 1030, 1050, 1070, 1090}},
		{"two of a decade: round steps instead", 450, 1300, []float64{500, 700, 900, 1100, 1300}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := logTicks(math.Log(c.lo), math.Log(c.hi))
			if len(got) != len(c.want) {
				t.Fatalf("ticks %v, want %v", got, c.want)
			}
			for i := range got {
				if math.Abs(got[i]-c.want[i]) > 1e-9*c.want[i] {
					t.Errorf("ticks %v, want %v", got, c.want)
					break
				}
			}
		})
	}
}

// TestPageSelfContained checks the page asks for nothing: no script, no
// style sheet, image or font from elsewhere; its only addresses are the
// links ChangesPageOptions make.
func TestPageSelfContained(t *testing.T) {
	p := historytest.LoadPool(t, "trials-syscall-read.json", "syscall.read", 2)
	rep := changepoint.Detect(p.History(rand.New(rand.NewPCG(1, 2)), 20, 6, 10, 2), changepoint.Options{Seed: 1})
	if len(rep.Changes) == 0 {
		t.Fatalf("no change point to draw: %+v", rep)
	}
	for _, opt := range []ChangesPageOptions{{}, {CommitURL: "https://example.com/c/%s"}} {
		var b strings.Builder
		if err := WriteChangesPage(&b, rep, opt); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		for _, bad := range []string{"<script", "<link", "<img", "<iframe", " src=", "@import", "url(", "//cdn"} {
			if strings.Contains(page, bad) {
				t.Errorf("the page has %q", bad)
			}
		}
		hrefs := strings.Count(page, `href="`)
		if want := strings.Count(page, `href="https://example.com/c/`); hrefs != want || (opt.CommitURL == "") != (hrefs == 0) {
			t.Errorf("the page has %d links, %d of them --commit-url's (%q)", hrefs, want, opt.CommitURL)
		}
	}
}
