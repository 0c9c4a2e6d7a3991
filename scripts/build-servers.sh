#!/bin/sh
# Builds the servers of testdata/server (the recipe's services) and their
# loads into DIR, as the base or the head: the head's handler spends 40 µs
# in user space on every 40th request. The scenarios testdata/server/tcp.yaml
# and http.yaml run what this puts in DIR when given dir=DIR:
#
#   scripts/build-servers.sh /tmp/srv/base base
#   scripts/build-servers.sh /tmp/srv/head head
#   tailgate gate testdata/server/tcp.yaml --variant base:dir=/tmp/srv/base --variant head:dir=/tmp/srv/head
#
# Needs cc and go; run from the root of the tree.
set -eu
dir=${1:?usage: build-servers.sh DIR base|head}
build=${2:?usage: build-servers.sh DIR base|head}
case $build in
base) cflags= tags= ;;
head) cflags=-DSLOW_EVERY=40 tags=slow ;;
*) echo "build-servers.sh: build must be base or head, got $build" >&2; exit 2 ;;
esac
mkdir -p "$dir"
# shellcheck disable=SC2086 # cflags is one word or none
cc -O2 -Wall -pthread $cflags -o "$dir/tcp-server" testdata/server/tcp.c
go build -tags "$tags" -o "$dir/http-server" ./testdata/server/http
go build -o "$dir/http-client" ./testdata/server/httpclient
go build -o "$dir/echo-client" ./testdata/exec/echo/client
