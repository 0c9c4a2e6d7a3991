#!/usr/bin/env bash
# A history of a fleet's boot parameters in virtual time: for each commit
# of REPO (oldest first), whose boot/cmdline holds the kernel command
# line, run syscall-write in a VM booting KERNEL with it (2 boots), and
# record it in the store git:REPO#tailgate-history, a push an hour.
# BENCHMARKS.md "Virtual time: a kernel's history, confirmed and bisected"
# made REPO as twelve commits, each adding one parameter to panic=10, the
# seventh audit=1.
set -euo pipefail
tg=${TAILGATE:-bin/tailgate}
repo=${REPO:?REPO: a repository whose commits hold boot/cmdline}
store="git:$repo#tailgate-history"
kernel=${KERNEL:-debian:6.12.118+deb12-cloud-amd64}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=0
for c in $(git -C "$repo" rev-list --reverse main); do
	i=$((i + 1))
	line=$(git -C "$repo" show "$c:boot/cmdline")
	t=$(($(git -C "$repo" show -s --format=%ct "$c") - 86400 + i * 3600))
	start=$(date +%s)
	# Named fleet, so that every commit's record is one series.
	"$tg" run syscall-write --kernel "fleet=$kernel $line" --clock virtual --trials 2 -o "$out/r.json" 2>"$out/run.err"
	"$tg" history add "$store" "$out/r.json" --commit "$c" --time "$t" 2>&1 | tail -1
	echo "$c $(($(date +%s) - start))s $line"
done
