#!/bin/sh
# Builds the servers of testdata/server (the recipe's services) and their
# load into DIR, as the base or the head: the head's handler spends 40 µs
# in user space on every 40th request (head:US, US µs in the C server's);
# every:US, the C server's handler spends US µs on every request (a
# slowdown of the whole distribution, not of its tail alone; the Go
# server stays the base); layout, the base with its code laid out
# otherwise (the C server's handler and loop 40 bytes further on, the Go
# server's main package behind a function never called): another build
# of the same code, for an A/A that should decide nothing.
# The scenarios testdata/server/tcp.yaml and http.yaml run what this puts
# in DIR when given dir=DIR:
#
#   scripts/build-servers.sh /tmp/srv/base base
#   scripts/build-servers.sh /tmp/srv/head head
#   tailgate gate testdata/server/tcp.yaml --variant base:dir=/tmp/srv/base --variant head:dir=/tmp/srv/head
#
# Needs cc and go; run from the root of the tree.
set -eu
dir=${1:?usage: build-servers.sh DIR base|head|head:US|every:US|layout}
build=${2:?usage: build-servers.sh DIR base|head|head:US|every:US|layout}
case $build in
base) cflags='' tags='' ;;
head) cflags=-DSLOW_EVERY=40 tags=slow ;;
head:*[!0-9]* | head:) echo "build-servers.sh: head:US takes a whole number of µs, got $build" >&2; exit 2 ;;
head:*) cflags="-DSLOW_EVERY=40 -DSLOW_US=${build#head:}" tags=slow ;;
every:*[!0-9]* | every:) echo "build-servers.sh: every:US takes a whole number of µs, got $build" >&2; exit 2 ;;
every:*) cflags="-DSLOW_EVERY=1 -DSLOW_US=${build#every:}" tags= ;;
layout) cflags=-DLAYOUT_PAD=40 tags=layout ;;
*) echo "build-servers.sh: build must be base, head, head:US, every:US or layout, got $build" >&2; exit 2 ;;
esac
mkdir -p "$dir"
# shellcheck disable=SC2086 # cflags is words or none
cc -O2 -Wall -pthread $cflags -o "$dir/tcp-server" testdata/server/tcp.c
go build -tags "$tags" -o "$dir/http-server" ./testdata/server/http
go build -o "$dir/client" ./testdata/server/client
