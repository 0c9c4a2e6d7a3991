package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The binary is also every guest's /init, copied into each initramfs: it
// links no font, image or PDF package (a plotting library's Liberation
// fonts alone were 4.4 MB of it). The HTML report's SVG is drawn by
// report/plot.go.
func TestBinaryLinksNoFonts(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, bad := range []string{"go-fonts", "gonum.org", "golang.org/x/image", "freetype", "fpdf", "go-latex"} {
			if strings.Contains(p, bad) {
				t.Errorf("the binary links %s", p)
			}
		}
	}
}
