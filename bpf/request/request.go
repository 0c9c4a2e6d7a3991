// Package request is the request tracer: for the workload's server
// sockets, each request's time from the read that brings it in to the
// write of its answer on the same socket, as metric request.server. It
// measures a program in any language, Go included, without naming a
// function of it: at the socket layer (the sock_recv_length and
// sock_send_length tracepoints, Linux 6.3 and later, tp_btf), where only
// a socket's receive and send run its program, or else at the syscall
// tracepoint (raw_syscalls sys_exit, where a syscall's registers still
// hold its number and arguments), which every syscall of the machine
// passes. At the socket layer it can also measure each request's wait
// before the server read it (request.queue, Options.Queue).
package request

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/sysnum"
)

// The tracer's metrics: a request's time in the server, and, when asked
// (Options.Queue), its data's wait before the read that opens it.
const (
	MetricServer = "request.server"
	MetricQueue  = "request.queue"
)

// Metrics are the tracer's metrics, in the order of the METRIC_ indexes of
// request.h; TestMetricIndexes (bpf/tracers) fails when the two differ.
var Metrics = []string{MetricServer, MetricQueue}

// QueueTracepoint is where data reaching a socket is seen, for
// request.queue (Linux 6.4 and later).
const QueueTracepoint = "sk_data_ready"

// ErrNoQueue is a request for request.queue where the tracer cannot
// measure it.
var ErrNoQueue = errors.New("request.queue needs the socket layer's tracepoints and sock:sk_data_ready (Linux 6.4 and later, on the host)")

// nrMax must match REQUEST_NR_MAX in request.h.
const nrMax = 512

// ops are the syscalls the tracer follows, by what they do to a socket's
// requests (the OP_ values of request.h).
var ops = map[string]uint8{
	"read": 1, "readv": 1, "recvfrom": 1, "recvmsg": 1,
	"write": 2, "writev": 2, "sendto": 2, "sendmsg": 2,
	"accept": 3, "accept4": 3,
	"connect": 4,
	"close":   5,
	"dup2":    6, "dup3": 6,
}

// SocketTracepoints are the socket layer's tracepoints the tracer
// attaches to where the kernel has them (Kind.OptionalTracepoints).
var SocketTracepoints = []string{"sock_recv_length", "sock_send_length"}

// Options configure the tracer. TGID, Threads and CgroupID choose the
// tasks whose sockets are counted.
type Options struct {
	tracing.TracerOptions
	Variant tracing.Variant
	// Queue adds request.queue.
	Queue bool
}

// New loads and attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	var table [nrMax]uint8
	for name, op := range ops {
		nr, ok := sysnum.Numbers[name]
		if !ok || nr < 0 || nr >= nrMax {
			return nil, fmt.Errorf("request tracer: no syscall number for %s", name)
		}
		table[nr] = op
	}
	spec, err := loadRequest()
	if err != nil {
		return nil, fmt.Errorf("request tracer: %w", err)
	}
	sockets := atSockets(opts)
	metrics := Metrics[:1]
	if opts.Queue {
		if !sockets || !tracing.HasTracepoint(opts.BTF, opts.KernelTypes, QueueTracepoint) {
			return nil, fmt.Errorf("request tracer: %w", ErrNoQueue)
		}
		metrics = Metrics
	}
	// hooks is what the last Configure chose: that of the variant that
	// loaded, as Load stops at the first.
	var hooks []string
	t, err := tracing.Load(spec, tracing.Options{
		Name:          "request",
		Metrics:       metrics,
		TracerOptions: opts.TracerOptions,
		Variant:       opts.Variant,
		// A server's connections outlive a tracer: conn_gen dates what
		// the table holds, and the next tracer checks each fd's socket.
		Keep: []string{"conns"},
		Configure: func(s *ebpf.CollectionSpec) error {
			// The variant's programs only are left: raw_tp has no
			// socket layer's (its sk would be no BTF pointer, which
			// its storage takes).
			_, btf := s.Programs["sock_recv_btf"]
			on := sockets && btf
			for name := range s.Programs {
				if (on && strings.HasPrefix(name, "sys_exit_")) || (!on && strings.HasPrefix(name, "sock_")) ||
					(name == "sock_ready_btf" && !opts.Queue) {
					delete(s.Programs, name)
				}
			}
			if opts.Queue && !on {
				return ErrNoQueue
			}
			// A socket's storage holds nothing until used; the
			// syscall tracepoint's table is sized down when unused.
			hooks = []string{"sys_exit"}
			if on {
				hooks = SocketTracepoints
				if opts.Queue {
					hooks = append(slices.Clone(hooks), QueueTracepoint)
				}
				s.Maps["conns"].MaxEntries = 1
			}
			if err := s.Variables["at_sockets"].Set(on); err != nil {
				return err
			}
			if err := s.Variables["queue_on"].Set(opts.Queue); err != nil {
				return err
			}
			// Another process may have loaded the maps (Loaded): the
			// clock tells loads apart where a counter would not.
			if err := s.Variables["conn_gen"].Set(uint64(time.Now().UnixNano())); err != nil {
				return err
			}
			return s.Variables["targ_op"].Set(table)
		},
	})
	if err != nil {
		return nil, err
	}
	t.SetHooks(hooks)
	return t, nil
}

// atSockets reports whether the tracer is to work at the socket layer:
// where its programs are kept loaded, whether they are the socket
// layer's; else whether the kernel has its tracepoints and a tp_btf
// program can be attached to them.
func atSockets(opts Options) bool {
	if progs, ok := opts.Loaded.Programs("request"); ok {
		return slices.Contains(progs, "sock_recv_btf")
	}
	if opts.Variant == tracing.RawTP || (opts.Variant == "" && opts.KernelTypes != nil) {
		return false
	}
	for _, tp := range SocketTracepoints {
		if !tracing.HasTracepoint(opts.BTF, opts.KernelTypes, tp) {
			return false
		}
	}
	return true
}
