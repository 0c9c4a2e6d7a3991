//go:build !(linux && amd64)

package scenarios

func newRunner(Workload) (Runner, error) { return nil, ErrUnsupported }

// Stubs of the kinds' WorkloadKind.New, which are written for linux/amd64.

func newSyscallKind(Workload, int) (kindLoad, error)  { return nil, ErrUnsupported }
func newPingpongKind(Workload, int) (kindLoad, error) { return nil, ErrUnsupported }
func newTimerKind(Workload, int) (kindLoad, error)    { return nil, ErrUnsupported }
func newForkKind(Workload, int) (kindLoad, error)     { return nil, ErrUnsupported }
func newNoiseKind(Workload, int) (kindLoad, error)    { return nil, ErrUnsupported }
func newExecKind(Workload, int) (kindLoad, error)     { return nil, ErrUnsupported }
func newAttachKind(Workload, int) (kindLoad, error)   { return nil, ErrUnsupported }

// CheckAllowedCPUs has nothing to check where no workload runs.
func CheckAllowedCPUs([]int) error { return nil }
