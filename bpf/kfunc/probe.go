package kfunc

import (
	"os"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// probeFunction is what Probe attaches to: a function every kernel has,
// whose name the built-in scenarios use.
const probeFunction = "vfs_read"

// Probe reports the variant New picks on the running kernel, by loading
// the tracer on vfs_read and closing it again. A kernel that allows
// neither variant is an *UnsupportedError (ebpf.ErrNotSupported) that says
// why for each. It needs the privileges New needs.
func Probe() (tracing.Variant, error) {
	t, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Functions: []string{probeFunction}})
	if err != nil {
		return "", err
	}
	v := t.Variant()
	return v, t.Close()
}

// ProbeVariant reports whether variant v loads and attaches on the running
// kernel, and if not, why.
func ProbeVariant(v tracing.Variant) error {
	t, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Functions: []string{probeFunction}, Variant: v})
	if err != nil {
		return err
	}
	return t.Close()
}
