package runner

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// Environment reads what a Result records about the running machine. Missing
// sources leave fields empty: a guest kernel may lack /proc/config.gz.
func Environment() result.Environment {
	var env result.Environment
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		env.KernelRelease = unix.ByteSliceToString(uts.Release[:])
	}
	env.KernelVersion = readTrim("/proc/version")
	env.Cmdline = readTrim("/proc/cmdline")
	env.Clocksource = readTrim("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	env.CPUs = runtime.NumCPU()
	env.ConfigHash = configHash()
	env.CPUModel, env.Virtualized = cpuInfo()
	return env
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// configHash is the sha256 of the kernel's config as /proc/config.gz gives
// it, or of /boot/config-<release> when there is no /proc/config.gz.
func configHash() string {
	var r io.Reader
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return ""
		}
		r = zr
	} else {
		var uts unix.Utsname
		if unix.Uname(&uts) != nil {
			return ""
		}
		b, err := os.ReadFile("/boot/config-" + unix.ByteSliceToString(uts.Release[:]))
		if err != nil {
			return ""
		}
		r = bytes.NewReader(b)
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func cpuInfo() (model, virt string) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "", ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			if model == "" {
				model = v
			}
		case "flags":
			if virt == "" && strings.Contains(" "+v+" ", " hypervisor ") {
				virt = "hypervisor"
			}
		}
		if model != "" && k == "flags" {
			break
		}
	}
	return model, virt
}
