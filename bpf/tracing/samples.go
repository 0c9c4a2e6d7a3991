package tracing

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

// SamplePeriod is how often, in ns of CPU time, each CPU's perf event
// runs a tracer's sample program (bpf/include/sample.bpf.h): 4 kHz, as
// often as perf record samples by default (BENCHMARKS.md, "What grew",
// has what it caught).
const SamplePeriod = 250_000

// SampledRequest is one request of the workload that got stack samples
// while it was open, with its latency once it ended.
type SampledRequest struct {
	Latency uint64 // ns
	PID     uint32
	Stacks  []Stack
}

// Stack is one sample's stacks, raw addresses, innermost first; TID is the
// thread it was taken on.
type Stack struct {
	TID    uint32
	Kernel []uint64
	User   []uint64
}

// Records of sample.bpf.h.
const (
	sampleKindStack = 1
	sampleKindEnd   = 2
	sampleHeadSize  = 40
	sampleSize      = sampleHeadSize + 8 + 2*evidenceStack*8
)

type sampleKey struct {
	pid   uint32
	tag   int32
	start uint64
}

// sampler reads a tracer's sample ring and joins each request's stacks
// with its end.
type sampler struct {
	rd    *ringbuf.Reader
	dropV *variable
	done  chan struct{}

	closing sync.RWMutex
	closed  bool

	mu      sync.Mutex
	flushes []chan struct{}
	epoch   uint64
	open    map[sampleKey][]Stack
	ended   []SampledRequest
	err     error
}

// configureSamples turns sampling on in objects that have it when evidence
// is on, or shrinks the ring to one page when it is off.
func configureSamples(spec *ebpf.CollectionSpec, evidence int) error {
	on, ok := spec.Variables["sample_on"]
	if !ok {
		return nil
	}
	if err := on.Set(evidence > 0); err != nil {
		return fmt.Errorf("set sample_on: %w", err)
	}
	if m, ok := spec.Maps["sample_events"]; ok && evidence == 0 {
		m.MaxEntries = uint32(unix.Getpagesize())
	}
	return nil
}

func startSampler(coll *ebpf.Collection, vars map[string]*variable, epoch uint64) (*sampler, error) {
	events, dropV := coll.Maps["sample_events"], vars["sample_dropped"]
	if events == nil || dropV == nil {
		return nil, errors.New("object has no sample maps (include sample.bpf.h)")
	}
	rd, err := ringbuf.NewReader(events)
	if err != nil {
		return nil, fmt.Errorf("sample ring: %w", err)
	}
	if err := drain(rd); err != nil {
		rd.Close()
		return nil, fmt.Errorf("sample ring: %w", err)
	}
	s := &sampler{rd: rd, dropV: dropV, done: make(chan struct{}), epoch: epoch, open: map[sampleKey][]Stack{}}
	go s.read()
	return s, nil
}

func (s *sampler) read() {
	defer close(s.done)
	var rec ringbuf.Record
	for {
		err := s.rd.ReadInto(&rec)
		switch {
		case errors.Is(err, ringbuf.ErrFlushed):
			s.mu.Lock()
			for _, f := range s.flushes {
				close(f)
			}
			s.flushes = nil
			s.mu.Unlock()
			continue
		case errors.Is(err, ringbuf.ErrClosed):
			return
		case err != nil:
			s.fail(err)
			return
		}
		if err := s.take(rec.RawSample); err != nil {
			s.fail(err)
			return
		}
	}
}

func (s *sampler) take(raw []byte) error {
	if len(raw) < sampleHeadSize {
		return fmt.Errorf("sample record of %d bytes", len(raw))
	}
	le := binary.LittleEndian
	key := sampleKey{start: le.Uint64(raw[0:]), pid: le.Uint32(raw[28:]), tag: int32(le.Uint32(raw[36:]))}
	epoch, latency, kind, tid := le.Uint64(raw[8:]), le.Uint64(raw[16:]), le.Uint32(raw[24:]), le.Uint32(raw[32:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != s.epoch {
		return nil // an earlier trial's, still in the ring
	}
	switch kind {
	case sampleKindStack:
		if len(raw) < sampleSize {
			return fmt.Errorf("sample record of %d bytes", len(raw))
		}
		ks, us := int32(le.Uint32(raw[40:])), int32(le.Uint32(raw[44:]))
		words := func(off int) []uint64 {
			w := make([]uint64, evidenceStack)
			for i := range w {
				w[i] = le.Uint64(raw[off+8*i:])
			}
			return w
		}
		st := Stack{TID: tid, Kernel: stack(words(48), ks), User: stack(words(48+evidenceStack*8), us)}
		s.open[key] = append(s.open[key], st)
	case sampleKindEnd:
		if st, ok := s.open[key]; ok {
			delete(s.open, key)
			s.ended = append(s.ended, SampledRequest{Latency: latency, PID: key.pid, Stacks: st})
		}
	default:
		return fmt.Errorf("sample record of kind %d", kind)
	}
	return nil
}

func (s *sampler) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// reset starts trial epoch: what the ring holds of the last is discarded.
func (s *sampler) reset(epoch uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch = epoch
	s.open = map[sampleKey][]Stack{}
	s.ended = nil
	return s.dropV.Set(uint64(0))
}

// requests waits until the reader has taken in the ring, then returns the
// sampled requests that ended since the last reset.
func (s *sampler) requests() ([]SampledRequest, uint64, error) {
	f := make(chan struct{})
	s.mu.Lock()
	s.flushes = append(s.flushes, f)
	s.mu.Unlock()
	if err := s.rd.Flush(); err != nil {
		return nil, 0, fmt.Errorf("flush sample ring: %w", err)
	}
	select {
	case <-f:
	case <-s.done:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, 0, s.err
	}
	var dropped uint64
	if err := s.dropV.Get(&dropped); err != nil {
		return nil, 0, err
	}
	return append([]SampledRequest{}, s.ended...), dropped, nil
}

func (s *sampler) close() {
	s.closing.Lock()
	s.closed = true
	s.rd.Close()
	s.closing.Unlock()
	<-s.done
}

// Samples returns the requests that got stack samples and ended since the
// last Reset, for the tracer's first metric, and how many records the
// ring had no room for. Nil for a tracer that samples nothing, empty for
// one that does.
func (t *Tracer) Samples() ([]SampledRequest, uint64, error) {
	if t.smp == nil {
		return nil, 0, nil
	}
	reqs, dropped, err := t.smp.requests()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: samples: %w", t.name, err)
	}
	return reqs, dropped, nil
}

// attachPerf attaches a perf_event program to a CPU clock on each online
// CPU, sampling every SamplePeriod ns of it. A link holds its perf event,
// whose own descriptor is closed here.
func attachPerf(p *ebpf.Program) ([]link.Link, error) {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: SamplePeriod,
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, err
	}
	var links []link.Link
	for cpu := range ncpu {
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if errors.Is(err, unix.ENODEV) || errors.Is(err, unix.EINVAL) && cpu > 0 {
			continue // possible, not online
		}
		if cpu == 0 && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP)) {
			// A kernel without the CPU clock event: no samples, the
			// rest of the tracer as it was.
			return nil, nil
		}
		if err != nil {
			return links, fmt.Errorf("perf event of CPU %d: %w", cpu, err)
		}
		l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: p, Attach: ebpf.AttachPerfEvent})
		unix.Close(fd)
		if err != nil {
			return links, fmt.Errorf("perf event of CPU %d: %w", cpu, err)
		}
		links = append(links, l)
	}
	return links, nil
}
