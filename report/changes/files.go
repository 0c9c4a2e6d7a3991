package changes

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// The I/O around the pure statistics and the renderers: a store's records
// in, a report's page out.

// ReadSeries reads every record of v into the series sel picks: from the
// records' summaries, and the records themselves where a summary is
// missing, stale or lacks a percentile sel names.
func ReadSeries(v *history.View, sel Selection) ([]Series, error) {
	return readSeries(v, v.Index.Entries, sel)
}

// Formats are the names WriteFormat takes.
var Formats = []string{"text", "json", "markdown"}

// WriteFormat renders r as format, one of Formats.
func (r *Report) WriteFormat(w io.Writer, format string) error {
	switch format {
	case "text":
		return r.WriteText(w)
	case "json":
		return r.WriteJSON(w)
	case "markdown":
		return r.WriteMarkdown(w)
	}
	return fmt.Errorf("unknown format %q", format)
}

// WritePageDir writes the page (WritePage) to dir/index.html, atomically,
// making dir if it is missing, and returns the file's path.
func (r *Report) WritePageDir(dir string, opt PageOptions) (string, error) {
	var b bytes.Buffer
	if err := r.WritePage(&b, opt); err != nil {
		return "", err
	}
	if err := safefile.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "index.html")
	if err := result.WriteFileAtomic(path, b.Bytes()); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}
