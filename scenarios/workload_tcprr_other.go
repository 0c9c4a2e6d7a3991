//go:build !(linux && amd64)

package scenarios

func newTCPRRKind(Workload, int) (kindLoad, error) { return nil, ErrUnsupported }
