// Package testenv is how a test says what it needs from the machine it
// runs on: every skip goes through Need (or Missing), which skips with the
// reason when the machine lacks the feature, and under TAILGATE_CI_STRICT
// fails instead where the machine has it (CI runs as root with the tools
// scripts/install-deps.sh installs, so a skip there hides a broken test).
package testenv

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// StrictEnv is the environment variable that makes a skip of a present
// feature a failure. CI sets it on the jobs that run as root.
const StrictEnv = "TAILGATE_CI_STRICT"

// Strict reports whether StrictEnv is set.
func Strict() bool { return os.Getenv(StrictEnv) != "" }

// A Feature is something of the machine a test needs: a kernel feature, a
// privilege, a tool.
type Feature struct {
	// Name is what the skip says is needed: "root", "loop devices".
	Name string
	// Use reports why a test cannot use the feature here, nil when it
	// can.
	Use func() error
	// Present asks, another way than Use, whether the machine has the
	// feature at all (the kernel's build config, say). Under Strict a test
	// that cannot use a present feature fails. Nil when nothing but Use
	// can tell (a skip is then trusted), unless Required.
	Present func() bool
	// Required marks what CI provides on every machine whatever its
	// kernel (root, the tools scripts/install-deps.sh installs): under
	// Strict a test that cannot use it fails.
	Required bool
}

// Need skips t, saying why, when it cannot use f; under Strict it fails
// instead when f is required or present.
func Need(t testing.TB, f Feature) {
	t.Helper()
	if err := f.Use(); err != nil {
		Missing(t, f, err)
	}
}

// Missing skips t because the test found it cannot use f (err says why),
// or fails under Strict as Need does. Call it where the test tried f
// itself.
func Missing(t testing.TB, f Feature, err error) {
	t.Helper()
	if Strict() {
		switch {
		case f.Required:
			t.Fatalf("needs %s: %v (%s is set, and CI provides it)", f.Name, err, StrictEnv)
		case f.Present != nil && f.Present():
			t.Fatalf("needs %s: %v, though this machine has it (%s is set)", f.Name, err, StrictEnv)
		}
	}
	t.Skipf("needs %s: %v", f.Name, err)
}

// Root is running as root. CI's privileged jobs are root.
var Root = Feature{
	Name: "root",
	Use: func() error {
		if id := os.Geteuid(); id != 0 {
			return fmt.Errorf("running as uid %d", id)
		}
		return nil
	},
	Required: true,
}

// Tool is a program on PATH that CI installs (scripts/install-deps.sh, or
// the runner image); install says how, for the skip's reason.
func Tool(name, install string) Feature {
	return Feature{
		Name: name,
		Use: func() error {
			_, err := exec.LookPath(name)
			if err != nil && install != "" {
				return fmt.Errorf("%w (%s)", err, install)
			}
			return err
		},
		Required: true,
	}
}

// Optional is f with Required cleared: a tool CI does not install.
func Optional(f Feature) Feature {
	f.Required = false
	return f
}

// LoopDevices is the loop driver's control device, opened read-write
// (root), present when the kernel was built with loop devices.
var LoopDevices = Feature{
	Name:    "loop devices",
	Use:     opens("/dev/loop-control"),
	Present: KernelConfig("CONFIG_BLK_DEV_LOOP"),
}

// PMQoS is the CPU latency PM QoS device, opened read-write (root), which
// every kernel with power management has. Opening it asks for no bound
// until something is written.
var PMQoS = Feature{
	Name:    "/dev/cpu_dma_latency (PM QoS)",
	Use:     opens("/dev/cpu_dma_latency"),
	Present: KernelConfig("CONFIG_PM"),
}

// KVMDevice is /dev/kvm opening read-write, present where the kernel has
// KVM loaded and the CPU has hardware virtualisation.
var KVMDevice = Feature{
	Name: "/dev/kvm",
	Use:  opens("/dev/kvm"),
	Present: func() bool {
		if _, err := os.Stat("/sys/module/kvm"); err != nil {
			return false
		}
		return cpuFlag("vmx") || cpuFlag("svm")
	},
}

// opens is a Use that opens path read-write.
func opens(path string) func() error {
	return func() error {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err == nil {
			f.Close()
		}
		return err
	}
}

// CPUs is at least n CPUs online for this process.
func CPUs(n int) Feature {
	return Feature{
		Name: fmt.Sprintf("%d CPUs", n),
		Use: func() error {
			if have := runtime.NumCPU(); have < n {
				return fmt.Errorf("this process may run on %d", have)
			}
			return nil
		},
	}
}

// KernelConfig returns a Present that reports whether the running
// kernel's build config sets any of opts to y or m. Where the config
// cannot be read (no /proc/config.gz, no /boot/config-RELEASE) it reports
// false: nothing says the feature is there.
func KernelConfig(opts ...string) func() bool {
	return func() bool {
		cfg := kernelConfig()
		for _, o := range opts {
			if v := cfg[o]; v == "y" || v == "m" {
				return true
			}
		}
		return false
	}
}

var kernelConfig = sync.OnceValue(func() map[string]string {
	cfg := map[string]string{}
	var r io.Reader
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return cfg
		}
		r = zr
	} else {
		var u unix.Utsname
		if unix.Uname(&u) != nil {
			return cfg
		}
		f, err := os.Open("/boot/config-" + unix.ByteSliceToString(u.Release[:]))
		if err != nil {
			return cfg
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && strings.HasPrefix(k, "CONFIG_") {
			cfg[k] = v
		}
	}
	return cfg
})

func cpuFlag(flag string) bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			return slices.Contains(strings.Fields(v), flag)
		}
	}
	return false
}

// Sysctl is the kernel parameter key (vm.swappiness) readable under
// /proc/sys.
func Sysctl(key string) Feature {
	return Feature{
		Name: key,
		Use: func() error {
			_, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(key, ".", "/"))
			return err
		},
	}
}

// Platform is the GOOS/GOARCH a test is written for, as "linux/amd64".
func Platform(want string) Feature {
	return Feature{
		Name: want,
		Use: func() error {
			if have := runtime.GOOS + "/" + runtime.GOARCH; have != want {
				return fmt.Errorf("this is %s", have)
			}
			return nil
		},
	}
}

// DebianKernels is Debian's kernel packages in the apt sources, which the
// tests that boot a Debian guest fetch: a Debian machine has them, an
// Ubuntu one does not (CI boots guests in a Debian container).
var DebianKernels = Feature{
	Name: "Debian's kernel packages (apt-cache show linux-image-cloud-amd64)",
	Use: func() error {
		out, err := exec.Command("apt-cache", "show", "linux-image-cloud-amd64").CombinedOutput()
		if err != nil {
			if line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); line != "" {
				return fmt.Errorf("%w: %s", err, line)
			}
		}
		return err
	},
}

// DebianGuest is what a test that boots a Debian guest needs: QEMU, apt
// and dpkg, and Debian's kernel packages. It skips, or fails under Strict
// as Need does.
func DebianGuest(t testing.TB) {
	t.Helper()
	Need(t, Tool("qemu-system-x86_64", "scripts/install-deps.sh installs it"))
	Need(t, Tool("apt-get", "Debian's apt fetches the kernels"))
	Need(t, Tool("dpkg-deb", "Debian: dpkg"))
	Need(t, DebianKernels)
}
