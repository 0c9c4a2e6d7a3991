package render

import "io"

// KernelsSchemaVersion is the schema of WriteKernelsJSON's document
// (docs/kernels.schema.json).
const KernelsSchemaVersion = 1

// KernelsJSON is what tailgate kernels list --format json writes: the
// kernels of the cache and the Debian kernels apt offers.
type KernelsJSON struct {
	Schema int                `json:"schema"`
	Cache  string             `json:"cache"`
	Cached []CachedKernelJSON `json:"cached"`
	// Available are the specs apt offers (debian:ABI); AvailableError,
	// when apt could not be asked, says why and leaves them empty.
	Available      []AvailableKernelJSON `json:"available"`
	AvailableError string                `json:"available_error,omitempty"`
}

// CachedKernelJSON is a kernel of the cache.
type CachedKernelJSON struct {
	Spec    string `json:"spec"`
	Version string `json:"version"`
	// Boots is the image a VM boots: vmlinux (the uncompressed ELF) or
	// bzImage.
	Boots   string `json:"boots"`
	Modules int    `json:"modules"`
}

// AvailableKernelJSON is a kernel apt offers.
type AvailableKernelJSON struct {
	Spec   string `json:"spec"`
	Cached bool   `json:"cached"`
}

// Kernels is the document of the kernels cached in dir and of the Debian
// ABIs apt offers; availErr is why those could not be listed, or nil.
func Kernels(dir string, cached []CachedKernel, abis []string, availErr error) KernelsJSON {
	out := KernelsJSON{Schema: KernelsSchemaVersion, Cache: dir, Cached: []CachedKernelJSON{}, Available: []AvailableKernelJSON{}}
	have := map[string]bool{}
	for _, k := range cached {
		out.Cached = append(out.Cached, CachedKernelJSON{Spec: k.Spec, Version: k.Version, Boots: k.boots(), Modules: k.Modules})
		have[k.Spec] = true
	}
	for _, abi := range abis {
		out.Available = append(out.Available, AvailableKernelJSON{Spec: "debian:" + abi, Cached: have["debian:"+abi]})
	}
	if availErr != nil {
		out.AvailableError = availErr.Error()
	}
	return out
}

// WriteKernelsJSON writes the Kernels document as indented JSON.
func WriteKernelsJSON(w io.Writer, dir string, cached []CachedKernel, abis []string, availErr error) error {
	return writeIndentedJSON(w, Kernels(dir, cached, abis, availErr))
}
