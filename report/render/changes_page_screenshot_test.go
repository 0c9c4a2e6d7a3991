package render

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/report/changepoint"
)

// The window the page is read in: a laptop's browser, not maximized.
const screenW, screenH = 1200, 900

// TestPageScreenshot loads the page of browserStore's history in headless
// Chromium at 1200×900 and looks at it as a reader would: it asks for
// nothing but itself, it is drawn (screenshots that are not blank, each
// plot inside the window with its points' colour in it, and the colour
// of a regression where one is marked), and what is drawn is what findChanges
// returned: a plot per gated series, a mark per change point, the dates
// under the commits in order (checkPlot).
func TestPageScreenshot(t *testing.T) {
	bin := findChromium(t)
	rep := findStore(t, 150, 60)
	pageDir := t.TempDir()
	if _, err := WriteChangesPageDir(pageDir, rep, ChangesPageOptions{}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(pageDir)))
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ctx, cancel := browserSized(t, bin, screenW, screenH)
	defer cancel()
	var mu sync.Mutex
	var asked []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			asked = append(asked, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(screenW, screenH), chromedp.Navigate(srv.URL+"/index.html")); err != nil {
		t.Fatal(err)
	}
	plots, err := chromedp.Run(ctx, chromedp.Evaluate[[]drawnPlot](measure))
	if err != nil {
		t.Fatal(err)
	}
	var gated []changepoint.Tested
	for _, s := range rep.Series {
		if s.Gated {
			gated = append(gated, s)
		}
	}
	if len(plots) != len(gated) || len(gated) < 2 {
		t.Fatalf("%d plots, want one per gated series findChanges returned (%d, two at least)", len(plots), len(gated))
	}
	marked := 0
	for i, p := range plots {
		checkPlot(t, p, gated[i], rep.Changes, ChangesPageOptions{}, false)
		marked += len(p.Changes)
	}
	if marked != len(rep.Changes) || marked == 0 {
		t.Errorf("%d change points marked, findChanges returned %d (one at least)", marked, len(rep.Changes))
	}

	shot := screenshot(t, ctx, "top")
	if inked, colours := ink(shot, shot.Bounds()); inked < 0.02 || colours < 16 {
		t.Errorf("the window's screenshot is %.1f%% ink of %d colours: blank", 100*inked, colours)
	}
	for i := range plots {
		checkPlotShot(t, ctx, i, len(plots[i].Points), len(plots[i].Changes))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range asked {
		if !strings.HasPrefix(u, srv.URL+"/") {
			t.Errorf("the page asked for %s: not self-contained", u)
		}
	}
}

// findStore is findChanges over browserStore's history.
func findStore(t *testing.T, stepAt, wildAt int) *changepoint.Report {
	t.Helper()
	storeDir, _ := browserStore(t, stepAt, wildAt)
	s, err := history.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	rep, err := findChanges(t, v, changepoint.Options{Level: changepoint.DefaultLevel, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The colours a plot draws with (page.go).
var (
	pointBlue      = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	regressionRed  = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	improvementGrn = color.RGBA{0x2c, 0x7a, 0x2c, 0xff}
)

// checkPlotShot scrolls plot i to the window's top, checks it is then
// inside the window whole, and counts its colours in a screenshot: a
// point's blue for each of its points, a change point's red or green
// only where it marks one.
func checkPlotShot(t *testing.T, ctx context.Context, i, points, changes int) {
	t.Helper()
	scroll := fmt.Sprintf(`(() => { const s = document.querySelectorAll('section.series svg')[%d]; window.scrollBy(0, s.getBoundingClientRect().top - 8); return true; })()`, i)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](scroll)); err != nil {
		t.Fatal(err)
	}
	plots, err := chromedp.Run(ctx, chromedp.Evaluate[[]drawnPlot](measure))
	if err != nil {
		t.Fatal(err)
	}
	p := plots[i]
	window := box{0, 0, screenW, screenH}
	if !window.holds(p.SVG) {
		t.Errorf("%s: the plot %+v is not inside the %dx%d window", p.Title, p.SVG, screenW, screenH)
		return
	}
	shot := screenshot(t, ctx, fmt.Sprint("plot-", i))
	r := image.Rect(int(p.Frame.X), int(p.Frame.Y), int(p.Frame.X+p.Frame.W), int(p.Frame.Y+p.Frame.H))
	// A point is a disc of radius 2.6 units, about 20 pixels at this width.
	if n := near(shot, r, pointBlue); n < 5*points {
		t.Errorf("%s: %d pixels of the points' blue for %d points", p.Title, n, points)
	}
	marks := near(shot, r, regressionRed) + near(shot, r, improvementGrn)
	switch {
	case changes > 0 && marks < 50*changes:
		t.Errorf("%s: %d pixels of a change point's colour for %d change points", p.Title, marks, changes)
	case changes == 0 && marks > 0:
		t.Errorf("%s: %d pixels of a change point's colour, and no change point", p.Title, marks)
	}
}

// screenshot captures the window as it is, and keeps it as NAME.png in
// the test's artifacts (go test -artifacts).
func screenshot(t *testing.T, ctx context.Context, name string) image.Image {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if sz := img.Bounds().Size(); sz.X != screenW || sz.Y != screenH {
		t.Errorf("screenshot %s is %v, want %dx%d", name, sz, screenW, screenH)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return img
}

// ink is the fraction of r's pixels that are not white, and how many
// colours r has.
func ink(img image.Image, r image.Rectangle) (float64, int) {
	colours := map[color.RGBA]bool{}
	inked := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			colours[c] = true
			if c.R < 0xf0 || c.G < 0xf0 || c.B < 0xf0 {
				inked++
			}
		}
	}
	return float64(inked) / float64(r.Dx()*r.Dy()), len(colours)
}

// near counts r's pixels within a small distance of colour c.
func near(img image.Image, r image.Rectangle, c color.RGBA) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			dr, dg, db := int(p.R)-int(c.R), int(p.G)-int(c.G), int(p.B)-int(c.B)
			if dr*dr+dg*dg+db*db < 30*30 {
				n++
			}
		}
	}
	return n
}
