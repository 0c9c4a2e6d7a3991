package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/changes"
)

// historyLine is gate's and compare's --history: under the verdicts, a
// line per gated percentile with the candidate against the branch's last
// commits in a history store (changes.AddTrends).
type historyLine struct {
	store string
	opt   changes.TrendOptions
}

func (h *historyLine) register(fs *flag.FlagSet) {
	fs.StringVar(&h.store, "history", "", "history `STORE` (git:REPO[#BRANCH] or a directory): show each gated percentile against --history-ref's last commits in it")
	fs.StringVar(&h.opt.Ref, "history-ref", changes.DefaultTrendRef, "with --history: the `BRANCH` whose commits to show")
	h.opt.N = changes.DefaultTrendCommits
	fs.Func("history-n", fmt.Sprintf("with --history: how many of its last commits (`N`, default %d)", changes.DefaultTrendCommits), func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("want a number of commits, 1 or more, such as 20")
		}
		h.opt.N = n
		return nil
	})
}

// attach adds the history lines to m. A store that does not read is said
// on stderr and the report goes without them: the verdict, and the exit
// code, are the gate's.
func (h *historyLine) attach(ctx context.Context, m *report.Matrix, stderr io.Writer) {
	if h.store == "" || m == nil {
		return
	}
	if err := changes.AddTrends(ctx, m, h.store, h.opt); err != nil {
		fmt.Fprintf(stderr, "tailgate: --history %s: %v; the report has no history lines (tailgate history check %s)\n", h.store, err, h.store)
	}
}
