package report

import (
	"fmt"
	"io"
)

// Format names a rendering of a Report.
type Format string

// Formats.
const (
	Text     Format = "text"
	Markdown Format = "markdown"
	JSON     Format = "json"
	JUnit    Format = "junit"
	GitHub   Format = "github" // GitHub Actions workflow commands (annotations)
	HTML     Format = "html"   // one self-contained page with tail plots
)

// Formats lists the formats Write knows.
var Formats = []Format{Text, Markdown, JSON, JUnit, GitHub, HTML}

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (want text, markdown, json, junit, github or html)", s)
}

// Write renders r in format f.
func Write(w io.Writer, r *Report, f Format) error {
	switch f {
	case Text:
		return WriteText(w, r)
	case Markdown:
		return WriteMarkdown(w, r)
	case JSON:
		return WriteJSON(w, r)
	case JUnit:
		return WriteJUnit(w, r)
	case GitHub:
		return WriteGitHub(w, r)
	case HTML:
		return WriteHTML(w, r)
	}
	return fmt.Errorf("unknown format %q", f)
}
