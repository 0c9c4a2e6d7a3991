//go:build !(linux && amd64)

package scenarios

func newFsyncKind(Workload, int) (kindLoad, error) { return nil, ErrUnsupported }
