package tracers

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// budgetFile holds each program's budget of verified instructions.
const budgetFile = "../verifier-budget.tsv"

// readBudget reads a budget file: "tracer program evidence budget" lines,
// tab-separated, by LoadCost.BudgetKey; # starts a comment.
func readBudget(name string, b []byte) (map[string]uint32, error) {
	budgets := map[string]uint32{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 || (f[2] != "plain" && f[2] != "evidence") {
			return nil, fmt.Errorf("%s:%d: want tracer, program, plain or evidence, and a budget, tab-separated", name, n)
		}
		v, err := strconv.ParseUint(f[3], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: budget %q: want a count of instructions", name, n, f[3])
		}
		key := strings.Join(f[:3], "\t")
		if _, ok := budgets[key]; ok {
			return nil, fmt.Errorf("%s:%d: %s listed twice", name, n, strings.Join(f[:3], " "))
		}
		budgets[key] = uint32(v)
	}
	return budgets, sc.Err()
}

// TestVerifierBudget loads every tracer as a run does, in each variant
// this kernel loads, with evidence and without, and fails when a program
// took the verifier more instructions than its budget in
// bpf/verifier-budget.tsv, or has none: as veristat guards the kernel's
// own BPF programs in its CI. A program whose states stop pruning costs
// seconds of every load (BENCHMARKS.md, "The verifier's bill"). A change
// that makes a program longer raises its budget with
// tools/verifiercost -budget.
func TestVerifierBudget(t *testing.T) {
	b, err := os.ReadFile(budgetFile)
	if err != nil {
		t.Fatal(err)
	}
	budgets, err := readBudget(budgetFile, b)
	if err != nil {
		t.Fatal(err)
	}
	costs, err := LoadCosts(CostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	measured := 0
	for _, c := range costs {
		for _, p := range c.Programs {
			key := c.BudgetKey(p.Program)
			name := strings.ReplaceAll(key, "\t", " ")
			budget, ok := budgets[key]
			switch {
			case !ok:
				t.Errorf("%s (%s): %d instructions verified and no budget in %s; add one (go run ./tools/verifiercost -budget)", name, c.Variant, p.Insns, budgetFile)
			case p.Insns == 0:
				t.Errorf("%s (%s): the kernel gave no count of verified instructions", name, c.Variant)
			case p.Insns > budget:
				t.Errorf("%s (%s): %d instructions verified, over its budget of %d (verifier time %v)", name, c.Variant, p.Insns, budget, p.Verify)
			}
			measured++
		}
	}
	t.Logf("%d programs measured", measured)
	// tp_btf, raw_tp, and the interference log's: a kernel that loads
	// fewer has left most of the budget unchecked.
	if measured < 50 {
		t.Errorf("only %d programs measured", measured)
	}
}

func TestReadBudget(t *testing.T) {
	for _, tc := range []struct {
		name, src, err string
		want           int
	}{
		{"lines and comments", "# tracer\tprogram\tevidence\tbudget\nsched\tsched_switch_btf\tevidence\t7100\n\nsched\tsched_switch_btf\tplain\t3210\n", "", 2},
		{"three fields", "sched\tsched_switch_btf\t7100\n", "f:1: want tracer", 0},
		{"bad evidence", "sched\tsched_switch_btf\ton\t7100\n", "f:1: want tracer", 0},
		{"bad budget", "# c\nsched\tsched_switch_btf\tplain\t7k\n", `f:2: budget "7k"`, 0},
		{"twice", "s\tp\tplain\t1\ns\tp\tplain\t2\n", "f:2: s p plain listed twice", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readBudget("f", []byte(tc.src))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || len(got) != tc.want {
				t.Fatalf("%d budgets, %v; want %d", len(got), err, tc.want)
			}
		})
	}
}
