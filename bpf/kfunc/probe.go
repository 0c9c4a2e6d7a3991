package kfunc

import (
	"errors"
	"fmt"
	"os"

	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// probeFunction is what Probe attaches to: a function every kernel has,
// whose name the built-in scenarios use.
const probeFunction = "vfs_read"

// Probe reports the variant New picks on the running kernel, by loading
// the tracer on vfs_read and closing it again. When no variant works, the
// error says why each failed. It needs the privileges New needs.
func Probe() (tracing.Variant, error) {
	var errs []error
	for _, v := range []tracing.Variant{Fentry, Kprobe} {
		err := ProbeVariant(v)
		if err == nil {
			return v, nil
		}
		if errors.Is(err, tracing.ErrPrivileges) {
			return "", err
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("kfunc: neither variant works on this kernel: %w", errors.Join(errs...))
}

// ProbeVariant reports whether variant v loads and attaches on the running
// kernel, and if not, why.
func ProbeVariant(v tracing.Variant) error {
	t, err := New(Options{TGID: uint32(os.Getpid()), Functions: []string{probeFunction}, Variant: v})
	if err != nil {
		return err
	}
	return t.Close()
}
