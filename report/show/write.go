package show

import (
	"fmt"
	"io"

	"github.com/tailgate-ci/tailgate/internal/plaintext"
)

// Write writes d in format f.
func (d *Document) Write(w io.Writer, f Format, o Options) error {
	switch f {
	case FormatText:
		// Names and the kernel release come from the Result file; the
		// text is for a terminal or a CI log (plaintext.Guard).
		g := plaintext.Guard(w)
		if err := d.Text(g, o); err != nil {
			return err
		}
		return g.Flush()
	case FormatJSON:
		return d.JSON(w)
	case FormatCSV:
		return d.CSV(w)
	case FormatOpenMetrics:
		return d.OpenMetrics(w)
	case FormatBenchstat:
		return d.Benchstat(w)
	case FormatGitHubActionBenchmark:
		return d.Trackers().GitHubActionBenchmark(w)
	case FormatBencher:
		return d.Trackers().Bencher(w)
	}
	return fmt.Errorf("format %q: unknown", f)
}
