//go:build !(linux && amd64)

package scenarios

func newRunner(Workload) (Runner, error) { return nil, ErrUnsupported }
