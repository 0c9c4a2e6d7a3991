#!/bin/sh
# A real history series for `tailgate history changes`: N runs of a
# scenario recorded as N commits an hour apart, the last half of them
# (from commit N/2+1) made while tools/slowdown holds a kernel-side
# slowdown of INSNS instructions (0: none, an A/A series). Prints the
# change points found. BENCHMARKS.md ("A real history series") records
# what it found.
#
#   scripts/bench-history-series.sh OUTDIR [SCENARIO] [N] [INSNS]
set -eu
out=${1:?usage: bench-history-series.sh OUTDIR [SCENARIO] [N] [INSNS]}
scenario=${2:-syscall-read}
n=${3:-12}
insns=${4:-520}
tailgate=${TAILGATE:-bin/tailgate}
mkdir -p "$out"
go build -o "$out/slowdown" ./tools/slowdown
store="$out/store"
i=1
while [ "$i" -le "$n" ]; do
	commit=$(printf '%07x' "$i")
	at=$(date -u -d "2026-01-01 00:00 UTC + $i hour" +%Y-%m-%dT%H:%M:%SZ)
	if [ "$insns" -gt 0 ] && [ "$i" -gt $((n / 2)) ]; then
		"$out/slowdown" -insns "$insns" -- "$tailgate" run "$scenario" -o "$out/r$i.json" >/dev/null
	else
		"$tailgate" run "$scenario" -o "$out/r$i.json" >/dev/null
	fi
	"$tailgate" history add "$store" "$out/r$i.json" --commit "$commit" --time "$at" >/dev/null
	i=$((i + 1))
done
"$tailgate" history changes "$store"
