package syscalls

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// TestVerifierRejectionShowsTheLog breaks one program of the tracer (it
// returns a register it never set) and checks that the load fails with the
// verifier's own last lines, also when the load keeps the verifier's
// statistics log (VerifierStats), a level below the one that traces paths.
func TestVerifierRejectionShowsTheLog(t *testing.T) {
	for _, stats := range []bool{false, true} {
		t.Run(fmt.Sprintf("stats=%v", stats), func(t *testing.T) {
			spec, err := loadSyscall()
			if err != nil {
				t.Fatal(err)
			}
			spec.Programs["sys_exit_btf"].Instructions = asm.Instructions{
				asm.Mov.Reg(asm.R0, asm.R2),
				asm.Return(),
			}
			_, err = tracing.Load(spec, tracing.Options{
				TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), VerifierStats: stats},
				Name:          "syscall",
				Metrics:       []string{"syscall.read"},
				Variant:       tracing.TPBTF,
			})
			var ve *tracing.VerifierError
			if !errors.As(err, &ve) {
				t.Fatalf("load of a broken program: %v, want a VerifierError", err)
			}
			if ve.Program != "sys_exit_btf" {
				t.Errorf("rejected program %q, want sys_exit_btf", ve.Program)
			}
			if len(ve.Tail) == 0 || !strings.Contains(err.Error(), "R2 !read_ok") {
				t.Errorf("error does not carry the verifier's reason (R2 !read_ok):\n%v", err)
			}
		})
	}
}
