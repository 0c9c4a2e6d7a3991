#!/usr/bin/env bash
# A/A gates of one scenario, one at a time, quiet or beside the noisy
# neighbour (../shared/noise/neighbour, restarted as it ends): one TSV line
# per gate with its exit code, the gated test's verdict and its ratio, its
# rounds, its first "a round takes" and wall time. As root, with bin/tailgate built (or TAILGATE, the
# binary to run). GATE_TARGETS replaces the two targets, --variant a
# --variant b (e.g. two VM targets of testdata/bench/vtime-targets.yaml).
#   scripts/bench-gate-aa.sh RUNS quiet|neighbour [SCENARIO] [GATE ARGS...]
set -euo pipefail
runs=$1 condition=$2 scenario=${3:-syscall-read}
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")/.." && pwd)
neighbour=${NEIGHBOUR:-$here/../shared/noise/neighbour}
bin=${TAILGATE:-$here/bin/tailgate}
read -r -a targets <<<"${GATE_TARGETS:---variant a --variant b}"
out=$(mktemp -d)
nb=
cleanup() { [ -n "$nb" ] && kill "$nb" 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT
printf 'run\tcondition\tscenario\texit\tverdict\tratio\trounds\tround_s\twall_s\n'
for ((i = 1; i <= runs; i++)); do
	if [ "$condition" = neighbour ] && { [ -z "$nb" ] || ! kill -0 "$nb" 2>/dev/null; }; then
		"$neighbour" 900 >/dev/null 2>&1 &
		nb=$!
		sleep 3
	fi
	start=$(date +%s.%N)
	code=0
	"$bin" gate "$scenario" "${targets[@]}" --format "json=$out/r.json" "$@" >/dev/null 2>"$out/err" || code=$?
	end=$(date +%s.%N)
	python3 - "$out/r.json" "$out/err" "$i" "$condition" "$scenario" "$code" "$start" "$end" <<'PY'
import json, sys
import re
path, errpath, i, cond, sc, code, start, end = sys.argv[1:]
verdict = ratio = rounds = "-"
m = re.search(r"a round takes ([0-9.]+)(m?s)", open(errpath).read())
round_s = "-" if not m else f"{float(m[1]) / (1000 if m[2] == 'ms' else 1):.2f}"
try:
    r = json.load(open(path))
    rounds = r.get("run", {}).get("rounds", "-")
    for s in r.get("scenarios", []):
        for v in s.get("verdicts", []):
            if v.get("gated"):
                verdict, ratio = v.get("verdict", "-"), f"{v.get('ratio', 0):.3f}"
except Exception as e:
    verdict = "no report: " + str(e)[:40]
print(f"{i}\t{cond}\t{sc}\t{code}\t{verdict}\t{ratio}\t{rounds}\t{round_s}\t{float(end)-float(start):.1f}")
PY
done
