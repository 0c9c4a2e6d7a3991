package engine

import (
	"encoding/json"
	"fmt"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/shard"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// trialSet is one target's trials, appended as each trial's Result comes,
// with each scenario's definition saying how many trials it holds: every
// trial ran as a request of one.
type trialSet struct {
	name string
	res  *result.Result
	defs map[string]*scenarios.Scenario // each scenario as its trials ran
}

func newTrialSet(name string) *trialSet {
	return &trialSet{name: name, defs: map[string]*scenarios.Scenario{}}
}

// add appends the trials of r, which ran the scenarios ran (resolved, as
// the target ran them); from names r in a refusal.
func (t *trialSet) add(from string, r *result.Result, ran []*scenarios.Scenario) error {
	for _, s := range ran {
		if t.defs[s.Name] == nil {
			t.defs[s.Name] = s
		}
	}
	in := []result.Input{{Path: from, Result: r}}
	if t.res != nil {
		in = append([]result.Input{{Path: t.name + " trials so far", Result: t.res}}, in...)
	}
	m, err := result.Merge(in)
	if err != nil {
		return fmt.Errorf("target %s: %w", t.name, err)
	}
	for i := range m.Scenarios {
		s := &m.Scenarios[i]
		def := t.defs[s.Name]
		if def == nil {
			continue
		}
		c := *def
		c.Trials = s.Trials
		b, err := json.Marshal(&c)
		if err != nil {
			return err
		}
		s.Definition = b
	}
	t.res = m
	return nil
}

// result is the trials so far, nil for none.
func (t *trialSet) result() *result.Result { return t.res }

// ShardWork deals the scenario × target units of shard sh: the scenarios
// of ss each target runs, by target.
func ShardWork(sh shard.Spec, ss []*scenarios.Scenario, targets []Target) [][]*scenarios.Scenario {
	type unit struct{ s, t int }
	var keys []string
	var units []unit
	for ti, t := range targets {
		for si, s := range ss {
			keys = append(keys, s.Name+"@"+t.Name())
			units = append(units, unit{si, ti})
		}
	}
	work := make([][]*scenarios.Scenario, len(targets))
	for _, k := range sh.Select(keys) {
		u := units[k]
		work[u.t] = append(work[u.t], ss[u.s])
	}
	return work
}
