#!/bin/sh
# Gates two builds of testdata/program/work.c in one job, as issue 19's
# "power for programs" asks: base built with ITER=BASE, head with
# ITER=HEAD (HEAD = BASE is two builds of one source, an A/A). The gates
# are BenchmarkGateRuns's (cmd/tailgate/gate_bench_test.go) with the two
# builds as dir= variants; it appends one tab-separated line per gate to
# OUT: time, scenario, BASE/HEAD, run, exit, rounds, wall seconds, mode,
# CONDITION, and each gated metric:percentile=ratio[lo,hi]:verdict.
# (The raw files of testdata/bench/program-gate-runs-2026120[23]*.tsv came
# from this script's earlier form: no run column, mode "pair-dir".)
# Needs cc and go. BENCHMARKS.md ("Gating a program") records what it
# measured.
#
#   scripts/bench-program-gate.sh OUT BASE HEAD [RUNS] [CONDITION]
set -eu
out=${1:?usage: bench-program-gate.sh OUT BASE HEAD [RUNS] [CONDITION]}
base=${2:?base ITER}
head=${3:?head ITER}
runs=${4:-1}
condition=${5:-quiet}
case $out in /*) ;; *) out=$PWD/$out ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
mkdir "$work/base" "$work/head"
cc -O2 -DITER="$base" -o "$work/base/work" testdata/program/work.c
cc -O2 -DITER="$head" -o "$work/head/work" testdata/program/work.c
before=0
if [ -f "$out" ]; then before=$(wc -l <"$out"); fi
TAILGATE_BENCH_SCENARIOS="$PWD/testdata/program/bench.yaml" \
	TAILGATE_BENCH_BASE_VARIANT="base:dir=$work/base" TAILGATE_BENCH_HEAD_VARIANT="head:dir=$work/head" \
	TAILGATE_BENCH_RUNS="$runs" TAILGATE_BENCH_LABEL="$base/$head" TAILGATE_BENCH_CONDITION="$condition" \
	TAILGATE_BENCH_OUT="$out" \
	go test ./cmd/tailgate/ -run '^$' -bench '^BenchmarkGateRuns$' -benchtime 1x -timeout 0 >"$work/log" 2>&1 ||
	{ cat "$work/log" >&2; exit 1; }
tail -n +"$((before + 1))" "$out"
