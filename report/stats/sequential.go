package stats

import (
	"math"
	"slices"
)

// DefaultAlpha is the family-wise false-alarm rate of one invocation:
// the chance, with nothing changed, that any gated test is called a
// regression (over all looks of a sequential run).
const DefaultAlpha = 0.01

// DefaultBeta bounds, per gated test, the chance that a regression of at
// least its threshold is called "no change" (over all looks).
const DefaultBeta = 0.05

// Sequential is the stopping rule of a gate run that looks at its data
// more than once: after rounds First, First+Every, First+2·Every, … (each
// round one more trial per side) it compares everything measured so far,
// and stops when every gated test is decided, when a regression is
// confirmed, or when the budget is spent. Look k spends a share of Alpha
// and Beta (spend), and the shares sum to at most 1 over all looks, so by
// the union bound the rates hold however the run stops
// (docs/statistics.md, "Why looking early keeps the rates"). Look 0 is a
// single, final look at the full Alpha and Beta.
type Sequential struct {
	// Alpha is the family-wise false-alarm rate over all looks; 0 means
	// DefaultAlpha. Beta bounds the chance of "no change" for a real
	// regression, per test, over all looks; 0 means DefaultBeta.
	Alpha, Beta float64
	// First is the round of the first look and Every the rounds between
	// looks after it; 0 means DefaultFirstLook and DefaultLookEvery.
	First, Every int
	// Growth, when above 1, spaces the looks geometrically instead: after
	// rounds ⌈First·Growth^j⌉ (GateSchedule: 12, 15, 19, 24, …), Every
	// unused. Open-ended, look k spends 6/(π²k²) of the rates, so a long
	// run that looked every other round would have almost nothing left to
	// spend by its later looks, where a noisy metric's decision falls.
	Growth float64
	// Looks, when positive, is the most looks the run will make, fixed
	// before it starts (from the budget and the time a round takes). The
	// rates are then spent in proportion to the look's number, as the
	// trials seen grow: Alpha·2k/(K(K+1)) at look k ≤ K = Looks, nothing
	// after. This keeps more for the last looks, where the power is. 0
	// means open-ended: Alpha·6/(π²k²).
	Looks int
	// Even, with Looks, spends the rates evenly: Alpha/Looks at each look
	// k ≤ Looks. A paired gate plans its looks from the budget and the
	// time its first rounds took, and an even spending keeps as much for
	// its first decisive looks as for its last.
	Even bool
}

// The default look schedule: the first look after 6 rounds, then one
// every 2.
const (
	DefaultFirstLook = 6
	DefaultLookEvery = 2
)

// GateSchedule is where a paired same-job gate may look: after rounds 12,
// 15, 19, 24, 30, 37, 46, 58, … (growing by a quarter). Not before 12:
// with 1% split over a dozen looks, fewer rounds cannot reach the level at
// all (a signed-rank test over n rounds has no p-value below 2^-n).
var GateSchedule = Sequential{First: 12, Growth: 1.25}

// BootLooks are where a same-job gate of boots in virtual time may look
// (CompareBoots): after rounds 4, 6 and 10, at most. Three looks keep a
// third of the rates each: at 4 boots a side the rank-sum test reaches
// 1/70, under a third of DefaultBeta, so repeating boots say "no change";
// at 6, 1/924, under a third of DefaultAlpha, so a repeating shift is a
// regression. Ten boots a side leave room for a metric that varies.
var BootLooks = []int{4, 6, 10}

// PlanBootLooks returns the looks of a gate of boots in virtual time of
// at most n rounds, as PlanLooks does with BootLooks: at most 10 rounds.
func PlanBootLooks(n int) []int {
	n = min(n, BootLooks[len(BootLooks)-1])
	if n < 1 {
		return nil
	}
	out := slices.DeleteFunc(slices.Clone(BootLooks), func(r int) bool { return float64(r) > 0.9*float64(n) })
	return append(out, n)
}

// PlanLooks returns the rounds after which a paired gate of at most n
// rounds looks: GateSchedule's rounds below n, then n itself. The plan
// may be made from the time the first rounds took (it depends on no
// round's sign, so the randomization test stays exact), and must be made
// before the first look.
func PlanLooks(n int) []int {
	if n < 1 {
		return nil
	}
	// A scheduled look just before the last would spend its share on
	// almost the same rounds.
	out := slices.DeleteFunc(GateSchedule.Rounds(n), func(r int) bool { return float64(r) > 0.9*float64(n) })
	return append(out, n)
}

// spend is the share of a rate spent at look k ≥ 1: 6/(π²k²) when
// open-ended, 2k/(K(K+1)) over K planned looks, 1/K when Even. A
// same-job gate plans its looks and spends evenly; the other two are what
// the simulations measure that choice against.
func (s Sequential) spend(k int) float64 {
	if K := s.Looks; K > 0 {
		if k > K {
			return 0
		}
		if s.Even {
			return 1 / float64(K)
		}
		return 2 * float64(k) / float64(K*(K+1))
	}
	return 6 / (math.Pi * math.Pi * float64(k) * float64(k))
}

// AlphaAt returns the family-wise level to spend at look k (1-based), or
// all of Alpha for k = 0, a single look.
func (s Sequential) AlphaAt(k int) float64 {
	if s.Alpha <= 0 {
		return s.spentAt(DefaultAlpha, k)
	}
	return s.spentAt(s.Alpha, k)
}

// BetaAt returns the one-sided level of the "no change" interval at look
// k (1-based), or all of Beta for k = 0.
func (s Sequential) BetaAt(k int) float64 {
	if s.Beta <= 0 {
		return s.spentAt(DefaultBeta, k)
	}
	return s.spentAt(s.Beta, k)
}

// spentAt is the part of level spent at look k, or all of it for k = 0.
func (s Sequential) spentAt(level float64, k int) float64 {
	if k <= 0 {
		return level
	}
	return level * s.spend(k)
}

// Rounds returns the rounds, at most n, after which the rule looks at the
// data: fixed before the run starts, as the rule requires.
func (s Sequential) Rounds(n int) []int {
	var out []int
	for r := 1; r <= n; r++ {
		if s.LookAt(r) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// LookAt returns the look due after the given round (1-based), or 0 when
// none is.
func (s Sequential) LookAt(round int) int {
	first, every := s.First, s.Every
	if first <= 0 {
		first = DefaultFirstLook
	}
	if s.Growth > 1 {
		k, last := 0, 0
		for r := float64(first); ; r *= s.Growth {
			at := int(math.Ceil(r - 1e-9))
			if at > round {
				return 0
			}
			if at != last { // two powers rounding to one round make one look
				k, last = k+1, at
			}
			if at == round {
				return k
			}
		}
	}
	if every <= 0 {
		every = DefaultLookEvery
	}
	if round < first || (round-first)%every != 0 {
		return 0
	}
	return (round-first)/every + 1
}
