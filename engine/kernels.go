package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/kernels"
	"github.com/tailgate-ci/tailgate/report/render"
)

// Kernels is what tailgate kernels list shows: the kernels in a cache, and
// the Debian kernels apt offers (AvailErr says why there are none when apt
// could not be asked; the cache is worth showing without them).
type Kernels struct {
	Dir      string
	Cached   []render.CachedKernel
	Avail    []string
	AvailErr error
}

// ListKernels reads cache and asks apt what it offers.
func ListKernels(ctx context.Context, cache *kernels.Cache) (*Kernels, error) {
	cached, err := cache.Cached()
	if err != nil {
		return nil, Infra(err)
	}
	l := &Kernels{Dir: cache.Dir}
	for _, k := range cached {
		l.Cached = append(l.Cached, render.CachedKernel{Spec: k.Spec, Version: k.Version, Vmlinux: k.Vmlinux != "", Modules: len(k.Modules)})
	}
	l.Avail, l.AvailErr = kernels.AvailableDebian(ctx)
	return l, nil
}

// Write writes the list as text (within o's width), or as JSON
// (docs/kernels.schema.json) when json is set.
func (l *Kernels) Write(w io.Writer, json bool, o render.TextOptions) error {
	if json {
		return render.WriteKernelsJSON(w, l.Dir, l.Cached, l.Avail, l.AvailErr)
	}
	if err := render.WriteCachedKernels(w, l.Dir, l.Cached, o); err != nil || l.AvailErr != nil {
		return err
	}
	return render.WriteAvailableKernels(w, l.Avail, l.Cached, o)
}

// OpenKernelCache is the kernel cache in dir, or the user's default
// cache for "".
func OpenKernelCache(dir string) (*kernels.Cache, error) {
	if dir != "" {
		return &kernels.Cache{Dir: dir}, nil
	}
	cache, err := kernels.DefaultCache()
	if err != nil {
		return nil, Infra(err)
	}
	return cache, nil
}

// FetchKernel downloads and unpacks the kernel spec names into cache (a
// no-op when it is there), progress on log, and prints its spec, release
// and boot image on w, and the modules a guest loads on log. An unknown
// spec is an InputError.
func FetchKernel(ctx context.Context, cache *kernels.Cache, spec string, w, log io.Writer) error {
	cache.Progress = func(s string) { fmt.Fprintln(log, s) }
	k, err := cache.Resolve(ctx, spec)
	if errors.Is(err, kernels.ErrUnknown) {
		return &InputError{err}
	}
	if err != nil {
		return Infra(err)
	}
	release := k.Release
	if release == "" {
		release = "unknown-release"
	}
	fmt.Fprintf(w, "%s %s %s\n", k.Spec, release, k.BootImage())
	if len(k.Modules) > 0 {
		names := make([]string, len(k.Modules))
		for i, m := range k.Modules {
			names[i] = m[strings.LastIndexByte(m, '/')+1:]
		}
		fmt.Fprintf(log, "guest modules: %s\n", strings.Join(names, " "))
	}
	return nil
}
