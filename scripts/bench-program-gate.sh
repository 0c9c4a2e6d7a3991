#!/bin/sh
# Gates two builds of testdata/program/work.c in one job, as issue 19's
# "power for programs" asks: base built with ITER=BASE, head with
# ITER=HEAD (HEAD = BASE is two builds of one source, an A/A). Appends one
# tab-separated line per gate to OUT: time, scenario, base/head ITER, exit,
# rounds, wall seconds, pair-dir, CONDITION, and each gated
# metric:percentile=ratio[lo,hi]:verdict. Needs cc and jq.
# BENCHMARKS.md ("Gating a program") records what it measured.
#
#   scripts/bench-program-gate.sh OUT BASE HEAD [RUNS] [CONDITION]
set -eu
out=${1:?usage: bench-program-gate.sh OUT BASE HEAD [RUNS] [CONDITION]}
base=${2:?base ITER}
head=${3:?head ITER}
runs=${4:-1}
condition=${5:-quiet}
tailgate=${TAILGATE:-bin/tailgate}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
mkdir "$work/base" "$work/head"
cc -O2 -DITER="$base" -o "$work/base/work" testdata/program/work.c
cc -O2 -DITER="$head" -o "$work/head/work" testdata/program/work.c
i=1
while [ "$i" -le "$runs" ]; do
	at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	set +e
	"$tailgate" gate testdata/program/bench.yaml --variant "base:dir=$work/base" \
		--variant "head:dir=$work/head" --format json="$work/r.json" >/dev/null 2>"$work/err"
	code=$?
	set -e
	if [ "$code" -gt 1 ]; then
		cat "$work/err" >&2
		exit "$code"
	fi
	jq -r --arg at "$at" --arg it "$base/$head" --arg code "$code" --arg cond "$condition" '
		[$at, .scenarios[0].name, $it, $code, (.run.rounds|tostring), (.run.seconds*10|round/10|tostring),
		 "pair-dir", $cond,
		 ([.scenarios[].verdicts[] | select(.gated and .ratio != null) |
		   "\(.metric):\(.percentile)=\(.ratio*1000|round/1000)[\(.ci_lo*1000|round/1000),\(.ci_hi*1000|round/1000)]:\(.verdict)"] | join(","))
		] | @tsv' "$work/r.json" >>"$out"
	tail -n 1 "$out"
	i=$((i + 1))
done
