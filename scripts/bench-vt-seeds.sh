#!/bin/sh
# Seeded boots in virtual time against a base, as issue 42's proofs ask:
# boots SCENARIO on KERNEL with SEEDS seeds (run --trials, seed k for
# trial k: a same-job gate's round k boots the same), once bare as the
# base and once per head command line given on stdin, one a line (a
# meaningless token for an A/A, "audit=1 TOKEN" for a real change), and
# gates each head against the base (gate --candidate --baseline: one look
# at the whole 1%) at the scenario's own thresholds and with every
# metric's p99 gated at 2%. Appends one tab-separated line per gate to
# OUT: time, scenario, head command line, threshold set, exit code, and
# each gated test as metric:percentile=ratio[lo,hi]:verdict, "held" where
# its threshold is inside its nuisance band. Boots in virtual time do not
# depend on the host's load. BENCHMARKS.md ("Seeds in virtual time")
# records what it measured.
#
#   printf '%s\n' tailgate.ab=1 xyzzy | scripts/bench-vt-seeds.sh OUT SCENARIO KERNEL [SEEDS]
set -eu
out=${1:?usage: bench-vt-seeds.sh OUT SCENARIO KERNEL [SEEDS] <heads}
scenario=${2:?scenario}
kernel=${3:?kernel, e.g. debian:6.1-cloud}
seeds=${4:-6}
case $out in /*) ;; *) out=$PWD/$out ;; esac
tg=${TAILGATE:-tailgate}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
"$tg" run "$scenario" --kernel "$kernel" --clock virtual --trials "$seeds" -o "$work/base.json" >"$work/log" 2>&1 ||
	{ cat "$work/log" >&2; exit 1; }
n=0
while IFS= read -r head; do
	[ -n "$head" ] || continue
	n=$((n + 1))
	"$tg" run "$scenario" --kernel "$kernel $head" --clock virtual --trials "$seeds" -o "$work/head$n.json" >"$work/log" 2>&1 ||
		{ cat "$work/log" >&2; exit 1; }
	for set in default p99=2%; do
		th=""
		[ "$set" = default ] || th="--threshold $set"
		code=0
		# shellcheck disable=SC2086
		"$tg" gate --candidate "$work/head$n.json" --baseline "$work/base.json" $th \
			--format json="$work/rep.json" --format text="$work/rep.txt" >/dev/null 2>&1 || code=$?
		tests=$(jq -r '[.scenarios[].verdicts[] | select(.gated) |
			"\(.metric):\(.percentile)=\(.ratio // "-" | tostring | .[0:6])[\(.ci_lo // "-" | tostring | .[0:6]),\(.ci_hi // "-" | tostring | .[0:6])]:\(if ((.warnings // []) | map(select(test("inside its nuisance band"))) | length > 0) then "held" else .verdict end)"] | join(" ")' "$work/rep.json")
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$scenario" "$head" "$set" "$code" "$tests" | tee -a "$out"
	done
done
