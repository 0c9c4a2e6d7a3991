package tracing

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
)

// Event is one slow event caught in the kernel (bpf/include/evidence.bpf.h):
// who it happened to, where, and for the scheduler what ran instead.
type Event struct {
	Metric  string
	Latency uint64 // ns
	End     uint64 // CLOCK_MONOTONIC ns at the event's end
	CPU     uint32
	PID     uint32 // process (tgid)
	TID     uint32
	Comm    string
	// The task switched out for this one (scheduler metrics only).
	OtherTID  uint32
	OtherPrio int32
	OtherComm string
	// Raw instruction addresses, innermost first; Symbolize names them.
	KernelStack []uint64
	UserStack   []uint64
	// Interference on CPU in the event's window (Options.Interference);
	// nil when not measured.
	Interference *Interference
}

const (
	evidenceStack = 24
	evidenceComm  = 16
)

// evidenceRecord mirrors struct evidence_event.
type evidenceRecord struct {
	Latency, End, Epoch  uint64
	Metric, CPU          uint32
	PID, TID             uint32
	OtherTID             uint32
	OtherPrio            int32
	KStackLen, UStackLen int32
	Comm, OtherComm      [evidenceComm]byte
	KStack, UStack       [evidenceStack]uint64
}

// evidence keeps the K slowest events per metric of the current trial. One
// goroutine reads the ring; it raises a metric's floor in the kernel to the
// K-th slowest as soon as the top K are full.
type evidence struct {
	k       int
	metrics []string
	rd      *ringbuf.Reader
	floor   *ebpf.Map
	epochV  *variable
	dropV   *variable
	done    chan struct{}

	// closing keeps the ring mapped while the reader asks what it holds.
	closing sync.RWMutex
	closed  bool

	mu      sync.Mutex
	flushes []chan struct{} // closed when the reader has emptied the ring
	epoch   uint64
	top     [][]Event // per metric, slowest first, at most k
	floors  []uint64  // per metric, as last set in the kernel
	err     error     // first error of the reader
}

// startEvidence opens the ring of a collection loaded with evidence_on.
func startEvidence(coll *ebpf.Collection, vars map[string]*variable, metrics []string, k int) (*evidence, error) {
	events, floor := coll.Maps["evidence_events"], coll.Maps["evidence_floor"]
	epochV, dropV := vars["evidence_epoch"], vars["evidence_dropped"]
	if events == nil || floor == nil || epochV == nil || dropV == nil {
		return nil, errors.New("object has no evidence maps (include evidence.bpf.h)")
	}
	rd, err := ringbuf.NewReader(events)
	if err != nil {
		return nil, fmt.Errorf("evidence ring: %w", err)
	}
	// A kept ring (Loaded) may hold what an earlier trial's worker left.
	if err := drain(rd); err != nil {
		rd.Close()
		return nil, fmt.Errorf("evidence ring: %w", err)
	}
	e := &evidence{
		k: k, metrics: metrics, rd: rd, floor: floor, epochV: epochV, dropV: dropV,
		done:   make(chan struct{}),
		top:    make([][]Event, len(metrics)),
		floors: make([]uint64, len(metrics)),
	}
	// Kept objects (Loaded) go on from the epoch they are at.
	if err := epochV.Get(&e.epoch); err != nil {
		rd.Close()
		return nil, err
	}
	go e.read()
	return e, nil
}

// drain discards what the ring holds.
func drain(rd *ringbuf.Reader) error {
	rd.SetDeadline(time.Now())
	defer rd.SetDeadline(time.Time{})
	var rec ringbuf.Record
	for {
		err := rd.ReadInto(&rec)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil
		case err != nil:
			return err
		}
	}
}

func (e *evidence) read() {
	defer close(e.done)
	var rec ringbuf.Record
	for {
		err := e.rd.ReadInto(&rec)
		switch {
		case errors.Is(err, ringbuf.ErrFlushed):
			// Everything sent before the flush is in top.
			e.mu.Lock()
			e.raiseFloors()
			for _, f := range e.flushes {
				close(f)
			}
			e.flushes = nil
			e.mu.Unlock()
			continue
		case errors.Is(err, ringbuf.ErrClosed):
			return
		case err != nil:
			e.fail(err)
			return
		}
		if err := e.take(rec.RawSample); err != nil {
			e.fail(err)
			return
		}
		if e.ringEmpty() {
			e.mu.Lock()
			e.raiseFloors()
			e.mu.Unlock()
		}
	}
}

// take keeps one record if it is among its metric's slowest. Most are
// not once the top is full: they are told apart by their first fields,
// before the whole record is decoded.
func (e *evidence) take(raw []byte) error {
	if len(raw) < 28 {
		return fmt.Errorf("evidence record of %d bytes", len(raw))
	}
	latency, epoch := binary.LittleEndian.Uint64(raw[0:]), binary.LittleEndian.Uint64(raw[16:])
	metric := binary.LittleEndian.Uint32(raw[24:])
	if !e.wanted(epoch, metric, latency) {
		return nil
	}
	var r evidenceRecord
	if err := binary.Read(bytes.NewReader(raw), binary.LittleEndian, &r); err != nil {
		return fmt.Errorf("evidence record of %d bytes: %w", len(raw), err)
	}
	in, err := decodeInterference(raw)
	if err != nil {
		return err
	}
	e.add(&r, in)
	return nil
}

// wanted says whether a record of this trial's epoch would enter its
// metric's top.
func (e *evidence) wanted(epoch uint64, metric uint32, latency uint64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if epoch != e.epoch || int(metric) >= len(e.metrics) {
		return false // an earlier trial's, still in the ring
	}
	top := e.top[metric]
	return len(top) < e.k || latency > top[e.k-1].Latency
}

// raiseFloors sets each full metric's floor in the kernel to its K-th
// slowest, once the ring is empty rather than per record: a map update
// is a system call. Called with e.mu held.
func (e *evidence) raiseFloors() {
	for m, top := range e.top {
		if len(top) < e.k || top[e.k-1].Latency == e.floors[m] {
			continue
		}
		floor := top[e.k-1].Latency
		if err := e.floor.Put(uint32(m), floor); err != nil {
			if e.err == nil {
				e.err = fmt.Errorf("raise evidence floor: %w", err)
			}
			return
		}
		e.floors[m] = floor
	}
}

func (e *evidence) fail(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
	}
}

func (e *evidence) add(r *evidenceRecord, in *Interference) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r.Epoch != e.epoch || int(r.Metric) >= len(e.metrics) {
		return // an earlier trial's, still in the ring
	}
	m := int(r.Metric)
	top := e.top[m]
	if len(top) == e.k && r.Latency <= top[e.k-1].Latency {
		return
	}
	ev := Event{
		Metric: e.metrics[m], Latency: r.Latency, End: r.End, CPU: r.CPU,
		PID: r.PID, TID: r.TID, Comm: cstring(r.Comm[:]),
		OtherTID: r.OtherTID, OtherPrio: r.OtherPrio, OtherComm: cstring(r.OtherComm[:]),
		KernelStack:  stack(r.KStack[:], r.KStackLen),
		UserStack:    stack(r.UStack[:], r.UStackLen),
		Interference: in,
	}
	i := sort.Search(len(top), func(i int) bool { return top[i].Latency < ev.Latency })
	top = append(top, Event{})
	copy(top[i+1:], top[i:])
	top[i] = ev
	if len(top) > e.k {
		top = top[:e.k]
	}
	e.top[m] = top
}

// reset starts a new trial: older events are discarded and every floor
// drops to zero.
func (e *evidence) reset() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.epoch++
	if err := e.epochV.Set(e.epoch); err != nil {
		return fmt.Errorf("evidence epoch: %w", err)
	}
	for m := range e.top {
		e.top[m], e.floors[m] = nil, 0
		if err := e.floor.Put(uint32(m), uint64(0)); err != nil {
			return fmt.Errorf("reset evidence floor: %w", err)
		}
	}
	return e.dropV.Set(uint64(0))
}

// events waits until the reader has taken in everything in the ring, then
// returns each metric's slowest events, slowest first.
func (e *evidence) events() (map[string][]Event, uint64, error) {
	// Flush makes the reader return what is in the ring, then
	// ErrFlushed, at which it answers every flush waiting.
	f := make(chan struct{})
	e.mu.Lock()
	e.flushes = append(e.flushes, f)
	e.mu.Unlock()
	if err := e.rd.Flush(); err != nil {
		return nil, 0, fmt.Errorf("flush evidence ring: %w", err)
	}
	select {
	case <-f:
	case <-e.done:
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return nil, 0, e.err
	}
	out := make(map[string][]Event, len(e.top))
	for m, top := range e.top {
		if len(top) > 0 {
			out[e.metrics[m]] = append([]Event(nil), top...)
		}
	}
	var dropped uint64
	if err := e.dropV.Get(&dropped); err != nil {
		return nil, 0, err
	}
	return out, dropped, nil
}

// ringEmpty says whether the ring holds nothing more to read now; false
// once the reader is closed (the ring is unmapped then).
func (e *evidence) ringEmpty() bool {
	e.closing.RLock()
	defer e.closing.RUnlock()
	return !e.closed && e.rd.AvailableBytes() == 0
}

func (e *evidence) close() {
	e.closing.Lock()
	e.closed = true
	e.rd.Close()
	e.closing.Unlock()
	<-e.done
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func stack(ips []uint64, n int32) []uint64 {
	if n <= 0 {
		return nil
	}
	k := min(int(n)/8, len(ips))
	for k > 0 && ips[k-1] == 0 {
		k--
	}
	return append([]uint64(nil), ips[:k]...)
}

// Evidence returns the slowest events of each metric since the last Reset
// (at most the Options.Evidence of each), slowest first, and how many slow
// events the ring had no room for. Nil when evidence is off.
func (t *Tracer) Evidence() (map[string][]Event, uint64, error) {
	if t.ev == nil {
		return nil, 0, nil
	}
	evs, dropped, err := t.ev.events()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: evidence: %w", t.name, err)
	}
	return evs, dropped, nil
}
