package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/termwidth"
	"github.com/tailgate-ci/tailgate/report/render"
)

// listWidth is the width tailgate list keeps to.
const listWidth = render.CatalogWidth

// cmdList is tailgate list: the catalog of built-in scenarios, tracers
// and metrics (engine.Catalog), or one tracer key's values.
func cmdList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	lists := engine.ValueLists()
	keys := slices.Sorted(maps.Keys(lists))
	usage := "usage: tailgate list [--format text|json]\n"
	for _, key := range keys {
		usage += "       tailgate list " + key + "\n"
	}
	usage += "\nLists the built-in scenarios (what each runs, traces and gates), the tracers and their metrics;\n"
	for _, key := range keys {
		usage += fmt.Sprintf("'list %s' the values the %s tracer's %s key takes.\n", key, lists[key].Tracer, key)
	}
	usage += "\n" + helpEnd(exits{"0 listed", exitBadInput + " (an unknown list, a bad flag)"},
		"tailgate list", "tailgate list --format json", "tailgate list syscalls")
	fs := cmdline.NewFlagSet("list")
	cmdline.SetUsage(fs, stdout, usage)
	format := fs.String("format", "text", "text, or json (docs/catalog.schema.json) for the catalog")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		l, ok := lists[pos[0]]
		if !ok || len(pos) > 1 {
			return usagef("unknown argument %q; want nothing or one of: %s", strings.Join(pos, " "), strings.Join(keys, ", "))
		}
		for _, n := range l.Values() {
			fmt.Fprintln(stdout, n)
		}
		return nil
	}
	switch *format {
	case "text":
		return render.WriteCatalog(stdout, engine.Catalog(), termwidth.Of(stdout))
	case "json":
		return render.WriteCatalogJSON(stdout, engine.Catalog())
	}
	return usagef("--format %q: want text or json", *format)
}
