#!/usr/bin/env bash
# install-deps.sh: install the Debian packages tailgate's tests and VM runs
# need (QEMU, cpio, Chromium, xmllint, shellcheck), when they are missing. Needs root (apt-get).
set -euo pipefail

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v cpio >/dev/null || need+=(cpio)
command -v dpkg-deb >/dev/null || need+=(dpkg)
# The HTML report's test renders the page in headless Chromium.
command -v chromium >/dev/null || need+=(chromium)
# The JUnit test validates against the xUnit XSD with xmllint; the workflow
# tests run shellcheck through actionlint.
command -v xmllint >/dev/null || need+=(libxml2-utils)
command -v shellcheck >/dev/null || need+=(shellcheck)
if [ "${#need[@]}" -gt 0 ]; then
	echo "install-deps: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}"
else
	echo "install-deps: qemu-system-x86, cpio, chromium, xmllint and shellcheck present"
fi
# apt-get download of kernel packages needs current package lists.
if ! apt-cache show 'linux-image-cloud-amd64' >/dev/null 2>&1; then
	apt-get update -qq
fi
