package render

import (
	"fmt"
	"io"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/report"
)

// Format names a rendering of a comparison.
type Format string

// Formats.
const (
	FormatText     Format = "text"
	FormatMarkdown Format = "markdown"
	FormatJSON     Format = "json"
	FormatJUnit    Format = "junit"
	FormatGitHub   Format = "github" // GitHub Actions workflow commands (annotations)
	FormatHTML     Format = "html"   // one self-contained page with tail plots
)

// Formats lists the formats WriteMatrix knows.
var Formats = []Format{FormatText, FormatMarkdown, FormatJSON, FormatJUnit, FormatGitHub, FormatHTML}

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, FormatNames())
}

// FormatNames is Formats as a choice, for usage and errors: "text,
// markdown, json, junit, github or html".
func FormatNames() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return english.Or(names)
}

// WriteReport renders r in format f, as the matrix of its two sides.
func WriteReport(w io.Writer, r *report.Report, f Format) error { return WriteMatrix(w, r.Matrix(), f) }

// WriteMatrix renders m in format f: one renderer per format lays out a
// comparison of two targets and of N. The JSON of a Report's matrix is the
// compare document (docs/compare.schema.json), which a matrix's holds per
// pair.
func WriteMatrix(w io.Writer, m *report.Matrix, f Format) error {
	switch f {
	case FormatText:
		return writeText(w, m)
	case FormatMarkdown:
		return writeMarkdown(w, m)
	case FormatJSON:
		if m.TwoSided {
			return writeJSON(w, pairJSON(m, 0))
		}
		return writeJSON(w, matrixJSON(m))
	case FormatJUnit:
		return writeJUnit(w, pairings(m))
	case FormatGitHub:
		return writeGitHub(w, pairings(m))
	case FormatHTML:
		return writeHTML(w, m)
	}
	return fmt.Errorf("unknown format %q", f)
}
