package render

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/report/changepoint"
)

// ChangesFormats are the names WriteChanges takes.
var ChangesFormats = []string{"text", "json", "markdown"}

// WriteChanges renders the change points r as format, one of
// ChangesFormats.
func WriteChanges(w io.Writer, r *changepoint.Report, format string) error {
	switch format {
	case "text":
		return writeChangesText(w, r)
	case "json":
		return writeChangesJSON(w, r)
	case "markdown":
		return writeChangesMarkdown(w, r)
	}
	return fmt.Errorf("unknown format %q", format)
}

// WriteChangesPageDir writes the page (WriteChangesPage) to
// dir/index.html, atomically, making dir if it is missing, and returns
// the file's path.
func WriteChangesPageDir(dir string, r *changepoint.Report, opt ChangesPageOptions) (string, error) {
	var b bytes.Buffer
	if err := WriteChangesPage(&b, r, opt); err != nil {
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
