package engine

import (
	"context"
	"io"

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
