package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/termwidth"
	"github.com/tailgate-ci/tailgate/kernels"
	"github.com/tailgate-ci/tailgate/report/render"
)

// kernelSpecs says what a kernel SPEC is.
const kernelSpecs = `SPEC is a bzImage path, debian:ABI (debian:6.1.0-57-cloud-amd64), or the
newest of a line and flavour: debian:6.1-cloud, debian:6.12-cloud,
debian:6.1-rt, debian:latest-cloud (the default), debian:latest-generic.`

func kernelsSubs() []cmdline.Sub {
	return []cmdline.Sub{
		{Name: "list", Synopsis: "[--kernel-cache DIR] [--format text|json]", Run: kernelsList,
			About: subAbout("Shows the kernels in the cache and the Debian kernels apt offers; json is docs/kernels.schema.json.",
				exits{"0 listed", exitBadInput, "3 the cache not read"},
				"tailgate kernels list", "tailgate kernels list --format json")},
		{Name: "fetch", Synopsis: "SPEC [--kernel-cache DIR]", Run: kernelsFetch,
			About: subAbout("Downloads and unpacks a kernel into the cache (a no-op if it is there) and prints its spec, release and boot image.\n\n"+kernelSpecs,
				kernelsExits, "tailgate kernels fetch debian:6.1-cloud", "tailgate kernels fetch debian:6.1-rt --kernel-cache /var/cache/k")},
	}
}

// kernelsExits are the exit codes of kernels and of kernels fetch.
var kernelsExits = exits{"0 done", exitBadInput + " (an unknown SPEC)", "3 the download or unpacking failed"}

func cmdKernels(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	about := "\nlist shows the kernels in the cache and the Debian kernels apt offers;\nfetch downloads and unpacks one into the cache.\n\n" + kernelSpecs + "\n\n" +
		helpEnd(kernelsExits, "tailgate kernels list", "tailgate kernels fetch debian:6.1-cloud")
	return cmdline.Subcommands{Command: "kernels", Subs: kernelsSubs(), About: about}.Dispatch(ctx, args, stdout, stderr)
}

// cacheFlag is the --kernel-cache flag both subcommands take, as run
// and gate do; --cache, its name before, still works.
type cacheFlag struct{ dir string }

func (f *cacheFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "kernel-cache", "", "kernel cache `DIR` (default: the user cache dir's tailgate/kernels)")
	fs.StringVar(&f.dir, "cache", "", "the former name of --kernel-cache")
}

// cache is the kernel cache the flag names, else the default one.
func (f *cacheFlag) cache() (*kernels.Cache, error) { return engine.OpenKernelCache(f.dir) }

func kernelsList(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var cf cacheFlag
	cf.register(fs)
	format := fs.String("format", "text", "text or json")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return usagef("--format %q: want text or json", *format)
	}
	if len(pos) != 0 {
		return usagef("takes no arguments, got %q", pos)
	}
	cache, err := cf.cache()
	if err != nil {
		return err
	}
	l, err := engine.ListKernels(ctx, cache)
	if err != nil {
		return err
	}
	if l.AvailErr != nil {
		fmt.Fprintf(stderr, "tailgate kernels: cannot list Debian kernels: %v\n", l.AvailErr)
	}
	return l.Write(stdout, *format == "json", render.TextOptions{Width: termwidth.Of(stdout)})
}

func kernelsFetch(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var cf cacheFlag
	cf.register(fs)
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one SPEC, got %d arguments; see tailgate kernels fetch -h", len(pos))
	}
	cache, err := cf.cache()
	if err != nil {
		return err
	}
	return engine.FetchKernel(ctx, cache, pos[0], stdout, stderr)
}
