// Package vm boots a kernel in a QEMU virtual machine with tailgate as its
// init, and is that init: it chooses the accelerator and the clock (KVM or
// TCG, real or virtual time), builds the initramfs in Go (CPIOWriter),
// runs QEMU and reads the guest's Result back over a virtio-serial port
// (Run), and inside the guest mounts what a run needs, runs the host's
// request and powers off (IsGuest, GuestMain). The kernels it boots come
// from package kernels; the VM targets a user names are a targets file
// (TargetFile).
//
// The guest userland is one static binary, normally tailgate itself: Run puts
// the running executable in the initramfs as /init with the request as JSON.
// A program that can be a guest checks for it first thing:
//
//	func main() {
//		if vm.IsGuest() {
//			os.Exit(vm.GuestMain(runInGuest))
//		}
//		...
//	}
//
// where runInGuest decodes req.Scenarios and runs them on the guest's kernel.
// On the host:
//
//	cache, err := kernels.DefaultCache()
//	k, err := cache.Resolve(ctx, spec) // errors.Is(err, kernels.ErrUnknown): bad input
//	setup, err := vm.Settings{Clock: vm.ClockVirtual}.Resolve() // a *SettingError: bad input
//	res, err := vm.Run(ctx, vm.Machine{Kernel: k, Setup: setup}, req, progress)
//
// Errors from Run are infrastructure failures: a *VMError wrapping
// ErrGuestPanic, ErrDeadline, ErrNoResult, ErrBadFrame or a *GuestError (the
// guest's run failed; a partial Result may come with it).
package vm
