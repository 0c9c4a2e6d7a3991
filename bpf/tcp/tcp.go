// Package tcp is the net tracer: for the workload's TCP sockets, where a
// message spends its time between the sender's TCP and the receiving
// application. net.tcp.deliver is a data segment's time from the device
// queue (net_dev_queue) to the receiving socket's TCP input (tcp_probe):
// on loopback the backlog queue, the NET_RX softirq and IP and TCP input.
// net.tcp.rcvq is data's wait from reaching an empty receive queue to the
// reader copying it out (tcp_rcv_space_adjust in recvmsg): the reader's
// wakeup, run-queue wait and return into recvmsg.
//
// A socket is the workload's once a task of the workload connects it,
// listens on it (and the connections it accepts), or reads from it, until
// it closes. Segments are matched between the two ends by ports and
// sequence number.
package tcp

import (
	"fmt"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// Metric names.
const (
	MetricDeliver = "net.tcp.deliver"
	MetricRcvq    = "net.tcp.rcvq"
)

// Metrics are the tracer's metrics, in the order of the METRIC_ indexes of
// tcp.h; TestMetricIndexes (bpf/tracers) fails when the two differ.
var Metrics = []string{MetricDeliver, MetricRcvq}

// Options configure the tracer. TGID, Threads and CgroupID choose the
// tasks whose sockets are counted.
type Options struct {
	tracing.TracerOptions
	Variant tracing.Variant
}

// New loads and attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	spec, err := loadTcp()
	if err != nil {
		return nil, fmt.Errorf("net tracer: %w", err)
	}
	return tracing.Load(spec, tracing.Options{
		Name:          "net",
		Metrics:       Metrics,
		TracerOptions: opts.TracerOptions,
		Variant:       opts.Variant,
	})
}
