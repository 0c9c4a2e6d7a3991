// Package vmtest runs tailgate inside QEMU virtual machines: it fetches and
// caches kernels (KernelCache), builds the initramfs in Go (CPIOWriter), boots
// the VM and collects the Result (Run), and is the guest's /init
// (IsGuest, GuestMain).
//
// The guest userland is one static binary, normally tailgate itself: Run puts
// the running executable in the initramfs as /init with the request as JSON.
// A program that can be a guest checks for it first thing:
//
//	func main() {
//		if vmtest.IsGuest() {
//			os.Exit(vmtest.GuestMain(runInGuest))
//		}
//		...
//	}
//
// where runInGuest decodes req.Scenarios and runs them on the guest's kernel.
// On the host:
//
//	cache, err := vmtest.DefaultKernelCache()
//	k, err := cache.Resolve(ctx, spec) // errors.Is(err, vmtest.ErrUnknownKernel): bad input
//	res, err := vmtest.Run(ctx, vmtest.VM{Kernel: k, VCPUs: 2, MemMiB: 1024}, req, progress)
//
// Errors from Run are infrastructure failures: a *VMError wrapping
// ErrGuestPanic, ErrDeadline, ErrNoResult, ErrBadFrame or a *GuestError (the
// guest's run failed; a partial Result may come with it).
package vmtest
