#!/usr/bin/env bash
# Per-trial spread of two builds of tailgate, run interleaved (A B, B A,
# ...) on one scenario: one line per run with the coefficient of variation
# of p50 and p99 across its trials and its wall time. As root.
#   scripts/bench-trial-spread.sh A_BIN B_BIN [RUNS] [SCENARIO] [TRIALS] [METRIC]
set -euo pipefail
a=$1 b=$2 runs=${3:-3} scenario=${4:-syscall-read} trials=${5:-20} metric=${6:-syscall.read}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf 'build\trun\ttrials\tp50_cv\tp99_cv\tp50_median_ns\tp99_median_ns\twall_s\n'
for ((r = 1; r <= runs; r++)); do
	order=("$a" "$b")
	((r % 2 == 0)) && order=("$b" "$a")
	for bin in "${order[@]}"; do
		start=$(date +%s.%N)
		"$bin" run "$scenario" --trials "$trials" -o "$out/r.json" >/dev/null 2>&1
		end=$(date +%s.%N)
		python3 - "$out/r.json" "$bin" "$r" "$start" "$end" "$metric" <<'PY'
import json, statistics, sys
path, bin_, run, start, end, metric = sys.argv[1:]
s = json.load(open(path))["scenarios"][0]
ts = s["metrics"][metric]["trials"]
def cv(k):
    v = [t["summary"][k] for t in ts]
    return statistics.stdev(v) / statistics.mean(v), statistics.median(v)
c50, m50 = cv("p50")
c99, m99 = cv("p99")
print(f"{bin_}\t{run}\t{len(ts)}\t{c50:.3f}\t{c99:.3f}\t{m50:.0f}\t{m99:.0f}\t{float(end)-float(start):.1f}")
PY
	done
done
