// Command slowdown runs a command while every syscall's exit, every wakeup
// and every context switch on the machine does N more BPF instructions of
// work: a real kernel-side slowdown, made outside tailgate, to prove a
// gate or a history catches one.
//
//	go run ./tools/slowdown -insns 520 -- tailgate run syscall-read -o r.json
//
// Without a command it holds the slowdown until interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/cilium/ebpf/rlimit"

	"github.com/tailgate-ci/tailgate/internal/slowdown"
)

func main() {
	insns := flag.Int("insns", 520, "work instructions per event")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: slowdown [-insns N] [-- COMMAND [ARG...]]")
		flag.PrintDefaults()
	}
	flag.Parse()
	os.Exit(run(*insns, flag.Args()))
}

func run(insns int, argv []string) int {
	if err := rlimit.RemoveMemlock(); err != nil {
		fmt.Fprintln(os.Stderr, "slowdown:", err)
		return 3
	}
	s, err := slowdown.Attach(insns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowdown:", err)
		return 3
	}
	defer s.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(argv) == 0 {
		fmt.Fprintf(os.Stderr, "slowdown: %d instructions attached to %v; interrupt to stop\n", insns, slowdown.Hooks)
		<-ctx.Done()
		return 0
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "slowdown:", err)
		return 3
	}
	go func() {
		<-ctx.Done()
		cmd.Process.Signal(os.Interrupt)
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowdown:", err)
		return 3
	}
	return 0
}
