package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// runTCP is vegeta's schedule over raw TCP: a pacer hands each intended
// send time to an idle worker, starting one more (a connection of its
// own) when none is idle, up to MaxConns; a request that waits for a
// worker counts its wait. vegeta does not speak TCP, hence this loop.
func runTCP(ctx context.Context, s *Spec) Outcome {
	ticks := make(chan time.Time)
	outs := make(chan Outcome)
	var wg sync.WaitGroup
	workers := 0
	start := func() {
		workers++
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs <- tcpWorker(s, ticks)
		}()
	}
	total := Outcome{Latency: hist.New()}
	var collect sync.WaitGroup
	collect.Add(1)
	go func() {
		defer collect.Done()
		for o := range outs {
			total.Latency.Merge(o.Latency)
			total.Sent += o.Sent
			if o.Failed > 0 && total.Failed == 0 {
				total.FirstError = o.FirstError
			}
			total.Failed += o.Failed
		}
	}()
	pace(ctx, s.period(), func(intended time.Time) {
		select {
		case ticks <- intended:
			return
		default:
		}
		if workers < MaxConns {
			start()
		}
		ticks <- intended
	})
	close(ticks)
	wg.Wait()
	close(outs)
	collect.Wait()
	return total
}

// pace calls send with each intended send time, the n-th (from 0) at
// (n+1)·period after the start as vegeta's constant pacer has it, until
// ctx is done. A late call is not skipped: the next ones follow at once,
// and those due before ctx ended are sent after it too, so that a
// generator that fell behind omits none of its requests. Up to 2000
// requests/s it sleeps on a thread of its own (wait.go).
func pace(ctx context.Context, period time.Duration, send func(time.Time)) {
	if period >= minPrecisePeriod {
		onPacerThread(func() { paceWith(ctx, period, send, waitUntil) })
		return
	}
	timer := time.NewTimer(period)
	defer timer.Stop()
	paceWith(ctx, period, send, func(ctx context.Context, t time.Time) {
		if wait := time.Until(t); wait > 0 && ctx.Err() == nil {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
		}
	})
}

// paceWith is pace's loop, each wait for an intended time in wait.
func paceWith(ctx context.Context, period time.Duration, send func(time.Time), wait func(context.Context, time.Time)) {
	began := time.Now()
	end := watchEnd(ctx, began)
	defer end.stop()
	for n := time.Duration(1); ; n++ {
		intended := began.Add(n * period)
		wait(ctx, intended)
		if !end.due(intended) {
			return
		}
		send(intended)
	}
}

// ending is when a run's ctx ended, as an offset from its start.
type ending struct {
	ctx   context.Context
	began time.Time
	at    atomic.Int64 // ns after began; 0 until ctx ends
	stop  func() bool
}

func watchEnd(ctx context.Context, began time.Time) *ending {
	e := &ending{ctx: ctx, began: began}
	e.stop = context.AfterFunc(ctx, func() {
		// A deadline is the end to the ns; this function may run later.
		at := time.Since(began)
		if d, ok := ctx.Deadline(); ok && d.Before(time.Now()) {
			at = d.Sub(began)
		}
		e.at.Store(max(int64(at), 1))
	})
	return e
}

// due reports whether a request intended at t is due within the run:
// the run has not ended, or t is before its end.
func (e *ending) due(t time.Time) bool {
	if at := e.at.Load(); at != 0 {
		return t.Sub(e.began) < time.Duration(at)
	}
	// Ended but not yet recorded: the deadline, or now, is past the end.
	if e.ctx.Err() == nil {
		return true
	}
	if d, ok := e.ctx.Deadline(); ok && d.Before(time.Now()) {
		return t.Before(d)
	}
	return !t.After(time.Now())
}

// tcpWorker sends a request for each tick on a connection of its own,
// dialled when first needed and again after a failure.
func tcpWorker(s *Spec, ticks <-chan time.Time) Outcome {
	o := Outcome{Latency: hist.New()}
	var conn net.Conn
	var br *bufio.Reader
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	send := []byte(s.Send)
	reply := make([]byte, max(s.ReplyBytes, 1))
	for intended := range ticks {
		o.Sent++
		if conn == nil {
			c, err := net.DialTimeout("tcp", s.Addr, s.timeout())
			if err != nil {
				o.fail(err.Error())
				continue
			}
			conn, br = c, bufio.NewReader(c)
		}
		if err := roundTrip(conn, br, s, send, reply); err != nil {
			o.fail(err.Error())
			conn.Close()
			conn = nil
			continue
		}
		o.Latency.Record(uint64(time.Since(intended)))
	}
	return o
}

// roundTrip writes one request and reads its reply.
func roundTrip(conn net.Conn, br *bufio.Reader, s *Spec, send, reply []byte) error {
	if err := conn.SetDeadline(time.Now().Add(s.timeout())); err != nil {
		return err
	}
	if _, err := conn.Write(send); err != nil {
		return fmt.Errorf("send to %s: %w", s.Addr, err)
	}
	if s.ReplyBytes > 0 {
		if _, err := io.ReadFull(br, reply); err != nil {
			return fmt.Errorf("read %d bytes of reply from %s: %w", s.ReplyBytes, s.Addr, err)
		}
		return nil
	}
	return readUntil(br, []byte(s.ReplyUntil), s.Addr)
}

// readUntil reads up to and with delim, at most MaxReply bytes.
func readUntil(br *bufio.Reader, delim []byte, addr string) error {
	last := delim[len(delim)-1]
	var got []byte
	for len(got) <= MaxReply {
		chunk, err := br.ReadSlice(last)
		got = append(got, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
		case err != nil:
			return fmt.Errorf("read reply from %s: %w", addr, err)
		case bytes.HasSuffix(got, delim):
			return nil
		}
	}
	return fmt.Errorf("reply from %s: no %q within %d bytes", addr, delim, MaxReply)
}
