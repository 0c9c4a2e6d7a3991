package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// runHTTP attacks s.URL with vegeta's attacker and constant pacer. vegeta
// starts a request's clock when a worker takes its tick, which a late
// pacer would hide; its pacer sends the hit counted n (from 0) at
// (n+1)·period after the attack began, and the result's sequence number
// counts hits in that order, so the latency kept here runs from that
// intended time instead.
func runHTTP(ctx context.Context, s *Spec) Outcome {
	atk := vegeta.NewAttacker(
		vegeta.Timeout(s.timeout()),
		vegeta.KeepAlive(true),
		vegeta.Redirects(vegeta.NoFollow),
		// vegeta starts a worker, and so a connection, whenever all are
		// busy; behind a stall that is one per request due. Past
		// MaxConns a request waits for a worker, and its wait counts in
		// its latency (from its intended send time).
		vegeta.MaxWorkers(MaxConns),
		vegeta.MaxConnections(MaxConns),
	)
	tr := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodGet, URL: s.URL})
	period := s.period()
	// Taken just before vegeta takes its own: the intended times run a
	// few µs early, the same for base and head.
	began := time.Now()
	end := watchEnd(ctx, began)
	defer end.stop()
	pacer := endPacer{ConstantPacer: vegeta.ConstantPacer{Freq: s.Rate, Per: time.Second}, end: end, period: period, locked: new(sync.Once)}
	results := atk.Attack(tr, pacer, 0, "")
	o := Outcome{Latency: hist.New()}
	for r := range results {
		o.Sent++
		switch {
		case r.Code >= 400:
			o.fail(fmt.Sprintf("HTTP status %d from %s", r.Code, s.URL))
			continue
		case r.Error != "":
			o.fail(r.Error)
			continue
		}
		intended := began.Add(time.Duration(r.Seq+1) * period)
		lat := r.End().Sub(intended)
		// A hit sent before its intended time (two hits taken out of
		// order) keeps vegeta's own measure.
		lat = max(lat, r.Latency)
		o.Latency.Record(uint64(lat))
	}
	return o
}

// endPacer is vegeta's constant pacer until ctx is done; then it lets
// the hits due before the end go at once, and stops: a pacer that fell
// behind omits none of its requests. (A hit whose wait the end cut
// short still goes, after the end: vegeta's attack sleeps the wait out.)
//
// Up to 2000 requests/s it sleeps itself, in clock_nanosleep on the
// attack's thread, which it locks (wait.go), and hands vegeta no wait to
// time.Sleep: Go's timers wake late by hundreds of µs, which every
// latency would count.
type endPacer struct {
	vegeta.ConstantPacer
	end    *ending
	period time.Duration
	locked *sync.Once
}

func (p endPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if p.end.ctx.Err() == nil {
		wait, stop := p.ConstantPacer.Pace(elapsed, hits)
		if wait <= 0 || stop || p.period < minPrecisePeriod {
			return wait, stop
		}
		// vegeta's attack runs on a goroutine that ends with it.
		p.locked.Do(lockPacerThread)
		waitUntil(p.end.ctx, p.end.began.Add(elapsed+wait))
		return 0, false
	}
	return 0, !p.end.due(p.end.began.Add(time.Duration(hits+1) * p.period))
}
