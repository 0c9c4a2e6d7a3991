package render

import (
	"bytes"
	"context"
	"github.com/tailgate-ci/tailgate/internal/testenv"
	"github.com/tailgate-ci/tailgate/report"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var svgElement = regexp.MustCompile(`(?s)<svg.*?</svg>`)

// htmlStructure is the page with every plot elided: headings, ids, tables
// and text, not the SVG bytes, which move with gonum/plot.
func htmlStructure(page string) string {
	return svgElement.ReplaceAllString(page, "<svg>…</svg>")
}

func sampleCompare(t *testing.T) *report.Report {
	t.Helper()
	m := sampleMatrix(t)
	r, err := report.Compare(m.Targets[0].Result, m.Targets[2].Result, report.Options{Resamples: 400})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestHTMLGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
		svgs  int
	}{
		{"compare.html", func(b *bytes.Buffer) error { return WriteReport(b, sampleCompare(t), FormatHTML) }, 4},
		{"matrix.html", func(b *bytes.Buffer) error { return WriteMatrix(b, sampleMatrix(t), FormatHTML) }, 4},
		// A Report built by hand, with no Results behind it, renders its
		// tables alone: TestRenderGolden's html.golden.
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if n := strings.Count(page, "<svg"); n != tc.svgs {
				t.Errorf("%d <svg> elements, want %d (a tail and a trial plot per metric)", n, tc.svgs)
			}
			for _, bad := range []string{"<script", "<link", "@import", "src=", "url("} {
				if strings.Contains(page, bad) {
					t.Errorf("page is not self-contained: it holds %q", bad)
				}
			}
			checkGolden(t, tc.name, []byte(htmlStructure(page)))
		})
	}
}

// findChromium returns a headless-capable browser, or skips; on CI a
// missing browser fails (scripts/install-deps.sh installs it).
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Need(t, testenv.Tool("chromium", "scripts/install-deps.sh installs it"))
	return ""
}

func chromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--window-size=1200,2000"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}

// The page renders in a real browser: every metric has its two plots in
// the DOM, and the screenshot is a picture, not a blank page.
func TestHTMLInBrowser(t *testing.T) {
	bin := findChromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "matrix.html")
	var b bytes.Buffer
	m := sampleMatrix(t)
	if err := WriteMatrix(&b, m, FormatHTML); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(chromium(t, bin, "--dump-dom", "file://"+page))
	if n := strings.Count(dom, "<svg"); n != 4 {
		t.Errorf("DOM has %d <svg> elements, want 4", n)
	}
	for _, s := range m.Scenarios {
		for _, mm := range s.Metrics {
			id := htmlID(s.Name, mm.Name)
			for _, want := range []string{`id="tail--` + id + `"`, `id="trials--` + id + `"`, `id="verdicts--` + id + `"`} {
				if !strings.Contains(dom, want) {
					t.Errorf("DOM lacks %s", want)
				}
			}
		}
	}

	shot := filepath.Join(dir, "shot.png")
	chromium(t, bin, "--screenshot="+shot, "file://"+page)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	nonWhite, colours := inkOf(img)
	total := img.Bounds().Dx() * img.Bounds().Dy()
	t.Logf("screenshot %v: %d of %d pixels not white, %d colours", img.Bounds().Size(), nonWhite, total, colours)
	if nonWhite < total/50 {
		t.Errorf("screenshot nearly blank: %d of %d pixels not white", nonWhite, total)
	}
	// Text is grey; the plots add each target's colour and the verdict
	// rows their backgrounds.
	if colours < 6 {
		t.Errorf("screenshot has %d distinct colours, want the plots' several", colours)
	}
}

// inkOf counts the pixels that are not white and the distinct colours,
// quantised to 4 bits a channel so anti-aliasing does not count.
func inkOf(img image.Image) (nonWhite, colours int) {
	seen := map[uint32]int{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr>>8 < 0xf8 || cg>>8 < 0xf8 || cb>>8 < 0xf8 {
				nonWhite++
			}
			seen[(cr>>12)<<8|(cg>>12)<<4|cb>>12]++
		}
	}
	// A colour counts when it covers more than a speck.
	for _, n := range seen {
		if n >= 50 {
			colours++
		}
	}
	return nonWhite, colours
}
