package render

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/changepoint"
	"github.com/tailgate-ci/tailgate/report/historytest"
)

// The trend page in a real browser: a store of 230 commits, made of real
// recorded trials, read and drawn as `tailgate history page` does (its
// series read and detected, then WriteChangesPageDir), served on localhost and loaded in headless
// Chromium through the DevTools protocol. What is asserted is what a
// reader would see go wrong: a plot not drawn, an axis out of order,
// change points unmarked, links that lead nowhere, console errors, marks
// or labels outside the plot or on top of one another.

// browserCommits is past 200: where the commit labels are spaced and the
// points are closest.
const browserCommits = 230

// findChanges reads v's series and detects their change points, as
// engine.DetectChanges does.
func findChanges(t *testing.T, v *history.View, opt changepoint.Options) (*changepoint.Report, error) {
	t.Helper()
	series, err := report.ReadSeries(v, report.Selection{})
	if err != nil {
		return nil, err
	}
	return changepoint.Detect(series, opt), nil
}

// browserStore makes a directory store of browserCommits commits, each a
// Result of 5 trials of syscall-read and of pipe-pingpong drawn from the
// recorded pools: syscall.read 1.5× slower from commit stepAt on, and one
// wild commit (20×) at wildAt, beyond the axis. It returns the store's
// directory and the commits, oldest first.
func browserStore(t *testing.T, stepAt, wildAt int) (string, []string) {
	t.Helper()
	read := historytest.LoadPool(t, "trials-syscall-read.json", "syscall.read", 1.5, 20)
	pipe := historytest.LoadPool(t, "trials-pipe-pingpong.json", "sched.runq")
	dir := t.TempDir()
	s, err := history.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(41, 42))
	draw := func(p *historytest.Pool, shift float64) result.Scenario {
		sc := p.Res.Scenarios[0]
		m := &result.Metric{Unit: "ns"}
		src := p.Trials[shift]
		drawn := map[int]bool{}
		for range 5 {
			i := r.IntN(len(src))
			for drawn[i] { // a trial twice would be a copy, which Results refuse
				i = r.IntN(len(src))
			}
			drawn[i] = true
			m.Trials = append(m.Trials, src[i])
		}
		sc.Metrics = map[string]*result.Metric{p.Metric: m}
		return sc
	}
	var commits []string
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for c := range browserCommits {
		shift := 1.0
		switch {
		case c == wildAt:
			shift = 20
		case c >= stepAt:
			shift = 1.5
		}
		res := *read.Res
		res.Scenarios = []result.Scenario{draw(read, shift), draw(pipe, 1)}
		sum := sha1.Sum([]byte(fmt.Sprint("commit ", c)))
		commit := hex.EncodeToString(sum[:])
		rec, err := history.NewRecord(&res, commit, start.Add(time.Duration(c)*time.Hour), "main", history.Provenance{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(context.Background(), rec, history.AddOptions{}); err != nil {
			t.Fatal(err)
		}
		commits = append(commits, commit)
	}
	return dir, commits
}

// What the page's script-free DOM measures to, as the browser laid it out
// (client pixels).
type box struct{ X, Y, W, H float64 }

func (b box) cx() float64 { return b.X + b.W/2 }
func (b box) cy() float64 { return b.Y + b.H/2 }

// inside reports whether (x, y) is in b, give or take half a pixel.
func (b box) inside(x, y float64) bool {
	const e = 0.5
	return x >= b.X-e && x <= b.X+b.W+e && y >= b.Y-e && y <= b.Y+b.H+e
}

func (b box) holds(c box) bool { return b.inside(c.X, c.Y) && b.inside(c.X+c.W, c.Y+c.H) }

type drawnPoint struct {
	Box     box
	Href    string
	Tip     string
	Outlier bool
}

type drawnText struct {
	Box  box
	Text string
	Href string
}

type drawnPlot struct {
	Title     string
	SVG       box
	Frame     box
	Ticks     []drawnText
	Points    []drawnPoint
	Intervals []box
	Trend     []box       // the vertices of the line that joins the points
	Changes   []drawnText // each change point's line; Text is its label
	Lines     []box       // the change points' labels
	Labels    []drawnText // the commit labels under the axis
	Dates     []drawnText // the dates under them
	Levels    int         // the shaded medians between change points
	Rows      int         // the change table's rows
	Overflow  bool        // the page scrolls sideways
}

// measure is run in the page: each plot's elements and their boxes.
const measure = `(() => {
  const box = e => { const b = e.getBoundingClientRect(); return {X: b.left, Y: b.top, W: b.width, H: b.height}; };
  const text = t => ({Box: box(t), Text: t.textContent, Href: t.closest('a') ? t.closest('a').getAttribute('href') : ''});
  const overflow = document.documentElement.scrollWidth > document.documentElement.clientWidth;
  return [...document.querySelectorAll('section.series')].map(sec => {
    const svg = sec.querySelector('svg');
    const trend = svg.querySelector('polyline.trend');
    return {
      Title: sec.querySelector('h2').textContent,
      SVG: box(svg),
      Frame: box(svg.querySelector('rect.frame')),
      Ticks: [...svg.querySelectorAll('text.tick')].map(text),
      Points: [...svg.querySelectorAll('.point')].map(p => ({
        Box: box(p),
        Href: p.closest('a') ? p.closest('a').getAttribute('href') : '',
        Tip: p.parentElement.querySelector('title') ? p.parentElement.querySelector('title').textContent : '',
        Outlier: p.classList.contains('outlier'),
      })),
      Intervals: [...svg.querySelectorAll('line.interval')].map(box),
      Trend: trend ? [...trend.points].map(v => { const q = v.matrixTransform(trend.getScreenCTM()); return {X: q.x, Y: q.y, W: 0, H: 0}; }) : [],
      Changes: [...svg.querySelectorAll('g.change')].map(g => text(g.querySelector('text'))),
      Lines: [...svg.querySelectorAll('g.change line')].map(box),
      Labels: [...svg.querySelectorAll('text.commit')].map(text),
      Dates: [...svg.querySelectorAll('text.date')].map(text),
      Levels: svg.querySelectorAll('g.level').length,
      Rows: sec.querySelectorAll('table tr').length ? sec.querySelectorAll('table tr').length - 1 : 0,
      Overflow: overflow,
    };
  });
})()`

func TestPageInBrowser(t *testing.T) {
	bin := findChromium(t)
	const stepAt, wildAt = 150, 60
	storeDir, commits := browserStore(t, stepAt, wildAt)

	// The server: the page, each commit's page (as a forge shows one) and
	// the store's files, where --record-url sends the labels.
	known := map[string]bool{}
	for _, c := range commits {
		known[c] = true
	}
	pageDir := t.TempDir()
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(pageDir)))
	mux.Handle("/store/", http.StripPrefix("/store/", http.FileServer(http.Dir(storeDir))))
	mux.HandleFunc("/commit/{sha}", func(w http.ResponseWriter, r *http.Request) {
		sha := r.PathValue("sha")
		if !known[sha] {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>commit %s</title></head><body><h1 id=\"commit\">%s</h1></body></html>", sha, sha)
	})
	// The browser asks for one on its own; a real host answers it, or
	// says 404, which Chromium would log as an error of the page's.
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// As `tailgate history page STORE -o DIR --commit-url ... --record-url ...` does.
	s, err := history.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := findChanges(t, v, changepoint.Options{Level: changepoint.DefaultLevel, Seed: 7})
	v.Close()
	if err != nil {
		t.Fatal(err)
	}
	opt := ChangesPageOptions{CommitURL: srv.URL + "/commit/%s", RecordURL: srv.URL + "/store/%s"}
	if _, err := WriteChangesPageDir(pageDir, rep, opt); err != nil {
		t.Fatal(err)
	}
	var gated []changepoint.Tested
	for _, ts := range rep.Series {
		if ts.Gated {
			gated = append(gated, ts)
		}
	}
	if len(gated) < 2 {
		t.Fatalf("%d gated series, want one at least for each scenario", len(gated))
	}
	found := false
	for _, c := range rep.Changes {
		if c.Key.Metric == "syscall.read" && c.Regression() && c.Index >= stepAt-3 && c.Index <= stepAt+3 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no regression of syscall.read found near commit %d (changes %+v): the page would have none to mark", stepAt, rep.Changes)
	}

	ctx, cancel := browser(t, bin)
	defer cancel()
	var mu sync.Mutex
	var console []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() || m.Type == chromedp.ConsoleWarning {
				mu.Lock()
				console = append(console, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/index.html")); err != nil {
		t.Fatal(err)
	}
	plots, err := chromedp.Run(ctx, chromedp.Evaluate[[]drawnPlot](measure))
	if err != nil {
		t.Fatal(err)
	}
	if len(plots) != len(gated) {
		t.Fatalf("%d plots drawn, want one per gated series (%d)", len(plots), len(gated))
	}
	for i, p := range plots {
		checkPlot(t, p, gated[i], rep.Changes, opt, p.Title == gated[i].Key.String()+" (gated)" && gated[i].Key.Metric == "syscall.read")
	}
	checkRecords(t, plots)

	// A click on the first change point's commit, in the first plot
	// that has one, opens that commit's page.
	pi := slices.IndexFunc(plots, func(p drawnPlot) bool { return len(p.Changes) > 0 })
	if pi < 0 {
		t.Fatal("no plot has a change point mark")
	}
	ci := slices.IndexFunc(rep.Changes, func(c changepoint.Change) bool { return c.Key == gated[pi].Key })
	idx := rep.Changes[ci].Index
	pt := plots[pi].Points[idx]
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf("window.scrollTo(0, %f), true", pt.Box.cy()-300))); err != nil {
		t.Fatal(err)
	}
	again, err := chromedp.Run(ctx, chromedp.Evaluate[[]drawnPlot](measure))
	if err != nil {
		t.Fatal(err)
	}
	pt = again[pi].Points[idx]
	if _, err := chromedp.RunResponse(ctx, chromedp.MouseClickXY(pt.Box.cx(), pt.Box.cy())); err != nil {
		t.Fatalf("click on %s's point: %v", shortCommit(rep.Changes[ci].Commit), err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('commit') ? document.getElementById('commit').textContent : ''`))
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/commit/" + rep.Changes[ci].Commit; loc != want || shown != rep.Changes[ci].Commit {
		t.Errorf("the click on the change point's commit went to %s showing %q, want %s", loc, shown, want)
	}

	// Shorter histories: the labels still fit, none clipped, none on
	// another; a change point near the end keeps its label inside.
	pool := historytest.LoadPool(t, "trials-syscall-read.json", "syscall.read", 2)
	r := rand.New(rand.NewPCG(43, 44))
	for _, c := range []struct{ n, stepAt int }{{1, 0}, {12, 0}, {23, 0}, {40, 35}} {
		n := c.n
		rep := changepoint.Detect(pool.History(r, n, 5, c.stepAt, 2), changepoint.Options{Seed: 1})
		if c.stepAt > 0 && !slices.ContainsFunc(rep.Changes, func(ch changepoint.Change) bool { return ch.Index == c.stepAt }) {
			t.Fatalf("%d commits, ×2 from %d: changes %+v, want one there to mark", n, c.stepAt, rep.Changes)
		}
		dir := filepath.Join(pageDir, fmt.Sprint("commits-", n))
		if _, err := WriteChangesPageDir(dir, rep, ChangesPageOptions{CommitURL: opt.CommitURL}); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/commits-%d/index.html", srv.URL, n))); err != nil {
			t.Fatal(err)
		}
		plots, err := chromedp.Run(ctx, chromedp.Evaluate[[]drawnPlot](measure))
		if err != nil {
			t.Fatal(err)
		}
		if len(plots) != len(rep.Series) {
			t.Fatalf("%d commits: %d plots, want %d", n, len(plots), len(rep.Series))
		}
		for i, p := range plots {
			checkPlot(t, p, rep.Series[i], rep.Changes, ChangesPageOptions{CommitURL: opt.CommitURL}, false)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	if len(console) > 0 {
		t.Errorf("the console has errors or warnings:\n%s", strings.Join(console, "\n"))
	}
}

// browser starts headless Chromium with a new empty profile and what
// keeps it off the network: this machine's closed network refuses its
// background connections otherwise.
func browser(t *testing.T, bin string) (context.Context, context.CancelFunc) {
	t.Helper()
	return browserSized(t, bin, 1280, 900)
}

// browserSized is browser with a window of width × height.
func browserSized(t *testing.T, bin string, width, height int) (context.Context, context.CancelFunc) {
	t.Helper()
	profile := t.TempDir()
	actx, acancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(width, height),
	)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, tcancel := context.WithTimeout(ctx, 2*time.Minute)
	return ctx, func() {
		tcancel()
		cancel()
		acancel()
	}
}

// checkPlot checks one plot against the series it draws.
func checkPlot(t *testing.T, p drawnPlot, s changepoint.Tested, changes []changepoint.Change, opt ChangesPageOptions, wantOutlier bool) {
	t.Helper()
	name := s.Key.String()
	if !strings.HasPrefix(p.Title, name) {
		t.Errorf("plot %q, want series %s in key order", p.Title, name)
		return
	}
	if p.Overflow {
		t.Errorf("%s: the page scrolls sideways", name)
	}
	if p.SVG.W <= 0 || p.SVG.H <= 0 || p.Frame.W <= 0 || p.Frame.H <= 0 {
		t.Errorf("%s: the plot is %gx%g, its frame %gx%g: not drawn", name, p.SVG.W, p.SVG.H, p.Frame.W, p.Frame.H)
		return
	}
	if !p.SVG.holds(p.Frame) {
		t.Errorf("%s: the plot's frame %+v is outside its SVG %+v", name, p.Frame, p.SVG)
	}
	checkPoints(t, p, s, opt, wantOutlier)
	checkTrend(t, p, s)
	checkAxis(t, p, s)
	var cs []changepoint.Change
	for _, c := range changes {
		if c.Key == s.Key {
			cs = append(cs, c)
		}
	}
	checkChanges(t, p, s, cs)
	checkLabels(t, p, s)
}

// checkPoints checks each commit is a point, in order, drawn in the
// frame off its sides, each a link to its commit, with its interval.
func checkPoints(t *testing.T, p drawnPlot, s changepoint.Tested, opt ChangesPageOptions, wantOutlier bool) {
	t.Helper()
	name := s.Key.String()
	if len(p.Points) != len(s.Points) {
		t.Fatalf("%s: %d points drawn, want %d (one per commit)", name, len(p.Points), len(s.Points))
	}
	outliers := 0
	for i, dp := range p.Points {
		sp := s.Points[i]
		if dp.Box.W <= 0 || dp.Box.H <= 0 {
			t.Errorf("%s: commit %d's point is %gx%g", name, i, dp.Box.W, dp.Box.H)
		}
		if want := link(opt.CommitURL, sp.Commit); dp.Href != want {
			t.Errorf("%s: commit %d's point links to %q, want %q", name, i, dp.Href, want)
		}
		if !strings.HasPrefix(dp.Tip, shortCommit(sp.Commit)+" ") {
			t.Errorf("%s: commit %d's tooltip %q does not name it", name, i, dp.Tip)
		}
		if i > 0 && dp.Box.cx() <= p.Points[i-1].Box.cx() {
			t.Errorf("%s: commit %d is drawn at x=%.1f, not right of the one before (%.1f)", name, i, dp.Box.cx(), p.Points[i-1].Box.cx())
		}
		// No commit on the frame's sides: the first and last are inset.
		if left, right := dp.Box.X-p.Frame.X, p.Frame.X+p.Frame.W-(dp.Box.X+dp.Box.W); left < 2 || right < 2 {
			t.Errorf("%s: commit %d's point %+v is %.1f and %.1f px from the frame's sides %+v, want 2 at least", name, i, dp.Box, left, right, p.Frame)
		}
		switch {
		case dp.Outlier:
			outliers++
			// A triangle at the frame's edge, pointing out, all inside.
			if !p.Frame.holds(dp.Box) {
				t.Errorf("%s: commit %d's outlier mark %+v is outside the frame %+v", name, i, dp.Box, p.Frame)
			}
		case !p.Frame.holds(dp.Box):
			t.Errorf("%s: commit %d's point %+v is not inside the frame %+v", name, i, dp.Box, p.Frame)
		}
	}
	if wantOutlier && outliers == 0 {
		t.Errorf("%s: the wild commit is not drawn as an outlier", name)
	}
	if len(p.Intervals) != len(s.Points) {
		t.Errorf("%s: %d intervals drawn, want %d", name, len(p.Intervals), len(s.Points))
	}
	for i, iv := range p.Intervals {
		if !p.Frame.holds(iv) {
			t.Errorf("%s: commit %d's interval %+v is outside the frame %+v", name, i, iv, p.Frame)
		}
		if math.Abs(iv.cx()-p.Points[i].Box.cx()) > 0.5 || iv.Y > p.Points[i].Box.cy()+0.5 && !p.Points[i].Outlier {
			t.Errorf("%s: commit %d's interval %+v is not through its point %+v", name, i, iv, p.Points[i].Box)
		}
	}
}

// checkTrend checks the points are joined, oldest to newest, through
// each one's center.
func checkTrend(t *testing.T, p drawnPlot, s changepoint.Tested) {
	t.Helper()
	name := s.Key.String()
	if len(s.Points) < 2 {
		return
	}
	if len(p.Trend) != len(p.Points) {
		t.Errorf("%s: the line joins %d points, want %d", name, len(p.Trend), len(p.Points))
		return
	}
	for i, v := range p.Trend {
		dp := p.Points[i].Box
		// An outlier's triangle has its tip where the line ends.
		slack := 0.6
		if p.Points[i].Outlier {
			slack = dp.H
		}
		if math.Abs(v.X-dp.cx()) > 0.6 || math.Abs(v.Y-dp.cy()) > slack {
			t.Errorf("%s: the line's vertex %d at (%.1f, %.1f) is not at commit %d's point (%.1f, %.1f)", name, i, v.X, v.Y, i, dp.cx(), dp.cy())
		}
	}
}

// checkAxis checks the log axis: labels top to bottom in decreasing
// order, evenly in log, inside the SVG; and each point where its
// tooltip's value is on that axis.
func checkAxis(t *testing.T, p drawnPlot, s changepoint.Tested) {
	t.Helper()
	name := s.Key.String()
	if len(p.Ticks) < 2 {
		t.Fatalf("%s: %d axis labels, want two at least", name, len(p.Ticks))
	}
	var ys, logs []float64
	for i, tk := range p.Ticks {
		d, err := time.ParseDuration(tk.Text)
		if err != nil || d <= 0 {
			t.Fatalf("%s: axis label %q is not a latency", name, tk.Text)
		}
		if !p.SVG.holds(tk.Box) {
			t.Errorf("%s: axis label %q at %+v is outside the SVG %+v", name, tk.Text, tk.Box, p.SVG)
		}
		if i > 0 && !(tk.Box.cy() < p.Ticks[i-1].Box.cy()) {
			t.Errorf("%s: axis labels %q and %q are not in order from the bottom up (y %.1f, %.1f)", name, p.Ticks[i-1].Text, tk.Text, p.Ticks[i-1].Box.cy(), tk.Box.cy())
		}
		if i > 0 && !(float64(d) > math.Exp(logs[len(logs)-1])) {
			t.Errorf("%s: axis labels %q then %q going up: not increasing", name, p.Ticks[i-1].Text, tk.Text)
		}
		ys, logs = append(ys, tk.Box.cy()), append(logs, math.Log(float64(d)))
	}
	n := len(ys)
	slope := (ys[n-1] - ys[0]) / (logs[n-1] - logs[0])
	yAt := func(v float64) float64 { return ys[0] + slope*(math.Log(v)-logs[0]) }
	for i := range ys {
		if math.Abs(yAt(math.Exp(logs[i]))-ys[i]) > 1.5 {
			t.Errorf("%s: axis label %q is at y=%.1f, a log axis through the first and last puts it at %.1f", name, p.Ticks[i].Text, ys[i], yAt(math.Exp(logs[i])))
		}
	}
	for i, dp := range p.Points {
		if dp.Outlier {
			continue
		}
		// The label's text is three digits: within 1% of the value.
		if want := yAt(s.Points[i].Center); math.Abs(dp.Box.cy()-want) > 2+math.Abs(slope)*0.01 {
			t.Errorf("%s: commit %d (%s) is drawn at y=%.1f, the axis puts %s at %.1f", name, i, shortCommit(s.Points[i].Commit), dp.Box.cy(), changesNS(s.Points[i].Center), want)
		}
	}
}

// checkChanges checks a mark per change point of the series, between
// its two commits, naming its commit and p-value, a table row each, and
// the shaded medians between them.
func checkChanges(t *testing.T, p drawnPlot, s changepoint.Tested, cs []changepoint.Change) {
	t.Helper()
	name := s.Key.String()
	if len(p.Changes) != len(cs) || len(p.Lines) != len(cs) || p.Rows != len(cs) {
		t.Errorf("%s: %d change marks, %d lines and %d table rows; want %d each", name, len(p.Changes), len(p.Lines), p.Rows, len(cs))
		return
	}
	if want := len(cs) + min(len(cs), 1); p.Levels != want {
		t.Errorf("%s: %d shaded medians for %d change points, want %d", name, p.Levels, len(cs), want)
	}
	for j, c := range cs {
		line := p.Lines[j]
		if x := line.cx(); x <= p.Points[c.Index-1].Box.cx() || x >= p.Points[c.Index].Box.cx() {
			t.Errorf("%s: change %s is marked at x=%.1f, not between its commits (%.1f, %.1f)", name, shortCommit(c.Commit), x, p.Points[c.Index-1].Box.cx(), p.Points[c.Index].Box.cx())
		}
		if !p.Frame.holds(line) {
			t.Errorf("%s: change %s's line %+v is outside the frame %+v", name, shortCommit(c.Commit), line, p.Frame)
		}
		if !strings.HasPrefix(p.Changes[j].Text, shortCommit(c.Commit)) || !strings.HasSuffix(p.Changes[j].Text, fmt.Sprintf(" p=%.2g", c.P)) {
			t.Errorf("%s: change mark %q, want it to name %s and its p-value %.2g", name, p.Changes[j].Text, shortCommit(c.Commit), c.P)
		}
		if !p.Frame.holds(p.Changes[j].Box) {
			t.Errorf("%s: change %s's label %+v is outside the frame %+v", name, shortCommit(c.Commit), p.Changes[j].Box, p.Frame)
		}
	}
}

// checkLabels checks the commit labels and their dates: inside the SVG,
// below the frame, none on top of another, each naming a commit (and
// linking to its record, checkRecords), each date its commit's, in
// order, under it.
func checkLabels(t *testing.T, p drawnPlot, s changepoint.Tested) {
	t.Helper()
	name := s.Key.String()
	if len(p.Labels) < min(2, len(s.Points)) {
		t.Errorf("%s: %d commit labels for %d commits", name, len(p.Labels), len(s.Points))
	}
	if len(p.Dates) != len(p.Labels) {
		t.Fatalf("%s: %d dates for %d commit labels", name, len(p.Dates), len(p.Labels))
	}
	layout, _ := dateAxis(s.Points)
	var last time.Time
	for j, l := range p.Labels {
		d := p.Dates[j]
		for _, x := range []drawnText{l, d} {
			if !p.SVG.holds(x.Box) {
				t.Errorf("%s: label %q at %+v is outside the SVG %+v (clipped)", name, x.Text, x.Box, p.SVG)
			}
			if x.Box.Y < p.Frame.Y+p.Frame.H {
				t.Errorf("%s: label %q is inside the frame", name, x.Text)
			}
		}
		if d.Box.Y < l.Box.Y+l.Box.H-0.5 || math.Abs(d.Box.X+d.Box.W-(l.Box.X+l.Box.W)) > d.Box.W {
			t.Errorf("%s: date %q at %+v is not under commit label %q at %+v", name, d.Text, d.Box, l.Text, l.Box)
		}
		i := labelledPoint(p, j)
		at, err := time.Parse(layout, d.Text)
		switch {
		case !strings.HasPrefix(s.Points[i].Commit, l.Text):
			t.Errorf("%s: commit label %q is under commit %d, %s", name, l.Text, i, s.Points[i].Commit)
		case err != nil || d.Text != s.Points[i].Time.UTC().Format(layout):
			t.Errorf("%s: date %q under commit %q, want %q", name, d.Text, l.Text, s.Points[i].Time.UTC().Format(layout))
		case j > 0 && at.Before(last):
			t.Errorf("%s: dates out of order: %q after %s", name, d.Text, last.Format(layout))
		}
		last = at
		if j > 0 {
			for _, pair := range [][2]drawnText{{p.Labels[j-1], l}, {p.Dates[j-1], d}} {
				if prev := pair[0].Box; pair[1].Box.X < prev.X+prev.W {
					t.Errorf("%s: labels %q and %q overlap (x %.1f to %.1f, then from %.1f)", name, pair[0].Text, pair[1].Text, prev.X, prev.X+prev.W, pair[1].Box.X)
				}
			}
		}
	}
}

// labelledPoint is the point commit label j is under: centred on it, or
// the last label, ending at it.
func labelledPoint(p drawnPlot, j int) int {
	l := p.Labels[j].Box
	at := l.cx()
	if j == len(p.Labels)-1 && len(p.Points) > 1 {
		at = l.X + l.W
	}
	best := 0
	for i, pt := range p.Points {
		if math.Abs(pt.Box.cx()-at) < math.Abs(p.Points[best].Box.cx()-at) {
			best = i
		}
	}
	return best
}

// checkRecords fetches each commit label's link, as a reader following it
// would, and checks that it is the record of that commit: a record of the
// store, holding its Result.
func checkRecords(t *testing.T, plots []drawnPlot) {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range plots {
		for _, l := range p.Labels {
			if l.Href == "" {
				t.Errorf("%s: commit label %q links nowhere", p.Title, l.Text)
				continue
			}
			if seen[l.Href] {
				continue
			}
			seen[l.Href] = true
			resp, err := http.Get(l.Href)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("%s: commit label %q links to %s: %s %v", p.Title, l.Text, l.Href, resp.Status, err)
				continue
			}
			rec, err := history.ParseRecord(l.Href, b)
			if err != nil {
				t.Errorf("%s: commit label %q links to %s, not a record: %v", p.Title, l.Text, l.Href, err)
				continue
			}
			if !strings.HasPrefix(rec.Commit, l.Text) || rec.Result == nil || len(rec.Result.Scenarios) == 0 {
				t.Errorf("%s: commit label %q links to the record of %s (a Result of %d scenarios)", p.Title, l.Text, rec.Commit, len(rec.Result.Scenarios))
			}
		}
	}
	if len(seen) == 0 {
		t.Error("no commit label links to a record")
	}
}
