// Package kernels finds the kernels tailgate boots and keeps them ready:
// a Debian kernel fetched with apt-get download and unpacked into a cache
// (Cache.Resolve), or a local bzImage; the uncompressed ELF inside it
// (booted through PVH, with a decoder of its own for the kernel's
// xz+BCJ payload), its config, and the modules a guest must load.
package kernels

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// Kernel is a kernel ready to boot: its images and the modules the guest
// must load before it can talk to the host.
type Kernel struct {
	// Spec is the spec the kernel was resolved from, with aliases such as
	// debian:latest-cloud replaced by the ABI they named.
	Spec string `json:"spec"`
	// Release is what uname -r will say in the guest; "" when unknown.
	Release string `json:"release"`
	// Image is the bzImage (or ELF) the user gave or the package shipped.
	Image string `json:"image"`
	// Vmlinux is the uncompressed ELF kernel, booted through PVH; "" when
	// it could not be extracted, and Image is booted instead.
	Vmlinux string `json:"vmlinux,omitempty"`
	// Config is the kernel's build configuration; "" when unknown.
	Config string `json:"config,omitempty"`
	// SystemMap is the System.map of a kernel built in a tree (found
	// beside the image, and checked against it), which names the addresses
	// of its own text on the host: a guest booted from Vmlinux has no
	// KASLR. "" when there is none: Debian's packages ship a placeholder
	// ("The real System.map is in the linux-image-<version>-dbg package").
	SystemMap string `json:"-"`
	// Modules are module files the guest loads, dependencies first.
	Modules []string `json:"modules,omitempty"`
	// Package and Version name the Debian package, for debian: specs.
	Package string `json:"package,omitempty"`
	Version string `json:"version,omitempty"`
	// Dir is the kernel's cache directory, "" for a local image.
	Dir string `json:"-"`
}

// BootImage is the file to pass to QEMU's -kernel.
func (k *Kernel) BootImage() string {
	if k.Vmlinux != "" {
		return k.Vmlinux
	}
	return k.Image
}

// guestModules are the options the guest needs (the virtio-serial results
// port, the scratch disk), with the modules that provide them. On some
// kernels they are built in; otherwise their modules and dependencies go
// into the initramfs.
var guestModules = []struct{ config, module string }{
	{"CONFIG_VIRTIO_PCI", "virtio_pci"},
	{"CONFIG_VIRTIO_CONSOLE", "virtio_console"},
	{"CONFIG_VIRTIO_BLK", ScratchModule},
}

// scratchModule drives the scratch disk: the guest loads it only when it
// has one.
const ScratchModule = "virtio_blk"

// missingModules are the modules of guestModules that k's config builds
// as modules but k does not have: a kernel cached before the module was
// added to guestModules.
func (k *Kernel) missingModules() []string {
	if k.Config == "" {
		return nil
	}
	config, err := ReadConfig(k.Config)
	if err != nil {
		return nil
	}
	var missing []string
	for _, m := range guestModules {
		if config[m.config] != "m" {
			continue
		}
		if !slices.ContainsFunc(k.Modules, func(p string) bool { return ModuleName(p) == m.module }) {
			missing = append(missing, m.module)
		}
	}
	return missing
}

// ErrUnknown means a spec names no kernel that can be found.
var ErrUnknown = errors.New("unknown kernel")

// unknownKernelError is an ErrUnknown with its own one-line message.
type unknownKernelError struct{ msg string }

func (e *unknownKernelError) Error() string        { return e.msg }
func (e *unknownKernelError) Is(target error) bool { return target == ErrUnknown }

func unknownKernel(format string, a ...any) error {
	return &unknownKernelError{fmt.Sprintf(format, a...)}
}

// Cache fetches Debian kernels and keeps them unpacked, one directory
// per ABI:
//
//	DIR/<abi>/kernel.json  what is below, as a Kernel
//	DIR/<abi>/vmlinuz      the bzImage
//	DIR/<abi>/vmlinux      the ELF inside it (absent when extraction failed)
//	DIR/<abi>/config       the build configuration
//	DIR/<abi>/modules/     the modules the guest loads (e.g. virtio_pci.ko)
//	DIR/local/<sha256>/vmlinux  ELFs extracted from local bzImages
//
// A directory appears whole or not at all: it is unpacked into a temporary
// directory beside it and renamed.
type Cache struct {
	Dir string
	// Progress receives one line per slow step (download, unpack); nil
	// means none.
	Progress func(string)
}

// DefaultCache returns the cache in the user's cache directory
// ($XDG_CACHE_HOME/tailgate/kernels, usually ~/.cache/tailgate/kernels).
func DefaultCache() (*Cache, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	return &Cache{Dir: filepath.Join(d, "tailgate", "kernels")}, nil
}

func (c *Cache) progress(format string, a ...any) {
	if c.Progress != nil {
		c.Progress(fmt.Sprintf(format, a...))
	}
}

// DefaultSpec is the spec used when none is given.
const DefaultSpec = "debian:latest-cloud"

const listHint = "run 'tailgate kernels list' to see what is available"

// Resolve returns the kernel a spec names, fetching and unpacking it first
// if it is a Debian kernel not yet in the cache. A spec is a path to a
// bzImage (or an ELF vmlinux), or debian:ABI (debian:6.1.0-57-cloud-amd64),
// or debian:latest-FLAVOUR or debian:LINE-FLAVOUR (debian:6.1-cloud), the
// newest ABI of that kind the apt sources offer; FLAVOUR is cloud, rt or
// generic. "" means DefaultSpec.
func (c *Cache) Resolve(ctx context.Context, spec string) (*Kernel, error) {
	if spec == "" {
		spec = DefaultSpec
	}
	rest, ok := strings.CutPrefix(spec, "debian:")
	if !ok {
		return c.local(spec)
	}
	abi := rest
	if q, isAlias := parseAlias(rest); isAlias {
		var err error
		abi, err = c.resolveAlias(ctx, spec, q)
		if err != nil {
			return nil, err
		}
	} else if !validABI(rest) {
		return nil, unknownKernel("kernel %q: %q is not a Debian kernel ABI like 6.1.0-57-cloud-amd64; %s", spec, rest, listHint)
	}
	k, err := c.cached(abi)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return c.fetch(ctx, abi)
	}
	missing := k.missingModules()
	if len(missing) == 0 {
		return k, nil
	}
	// Cached before tailgate needed these modules: fetch the package
	// again; offline, the old one still runs what needs none of them.
	c.progress("cached %s has no %s module; fetching it again", spec, strings.Join(missing, ", "))
	fresh, err := c.fetch(ctx, abi)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		c.progress("fetching %s again failed (%v); using the cached kernel without %s", spec, err, strings.Join(missing, ", "))
		return k, nil
	}
	return fresh, nil
}

var abiRE = regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+)?(-[0-9]+|\+deb[0-9]+)*-([a-z0-9]+-)*amd64$`)

func validABI(s string) bool { return abiRE.MatchString(s) }

// debianABI is an ABI taken apart: 6.1.0-57-cloud-amd64 is version
// [6 1 0 57], line "6.1", flavour "cloud".
type debianABI struct {
	abi     string
	version []int
	line    string
	flavour string // cloud, rt, generic
}

func parseABI(abi string) (debianABI, bool) {
	if !validABI(abi) {
		return debianABI{}, false
	}
	rest := strings.TrimSuffix(abi, "-amd64")
	a := debianABI{abi: abi, flavour: "generic"}
	for _, f := range []string{"cloud", "rt"} {
		if r, ok := strings.CutSuffix(rest, "-"+f); ok {
			rest, a.flavour = r, f
		}
	}
	rest, _, _ = strings.Cut(rest, "+")
	for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return r == '.' || r == '-' }) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return debianABI{}, false
		}
		a.version = append(a.version, n)
	}
	if len(a.version) < 2 {
		return debianABI{}, false
	}
	a.line = fmt.Sprintf("%d.%d", a.version[0], a.version[1])
	return a, true
}

// kernelQuery is a debian:latest-cloud or debian:6.1-rt alias.
type kernelQuery struct {
	line    string // "" for latest
	flavour string
}

var aliasRE = regexp.MustCompile(`^(latest|[0-9]+\.[0-9]+)-(cloud|rt|generic)$`)

func parseAlias(s string) (kernelQuery, bool) {
	m := aliasRE.FindStringSubmatch(s)
	if m == nil {
		return kernelQuery{}, false
	}
	q := kernelQuery{flavour: m[2]}
	if m[1] != "latest" {
		q.line = m[1]
	}
	return q, true
}

func (q kernelQuery) match(a debianABI) bool {
	return a.flavour == q.flavour && (q.line == "" || q.line == a.line)
}

// newest returns the newest ABI matching q, or "".
func newest(abis []string, q kernelQuery) string {
	var best debianABI
	for _, s := range abis {
		a, ok := parseABI(s)
		if !ok || !q.match(a) {
			continue
		}
		if best.abi == "" || slices.Compare(a.version, best.version) > 0 {
			best = a
		}
	}
	return best.abi
}

// resolveAlias asks apt for the newest matching ABI. Offline, the newest
// matching cached kernel will do.
func (c *Cache) resolveAlias(ctx context.Context, spec string, q kernelQuery) (string, error) {
	avail, aptErr := c.available(ctx)
	if abi := newest(avail, q); abi != "" {
		return abi, nil
	}
	var cached []string
	if ks, err := c.Cached(); err == nil {
		for _, k := range ks {
			cached = append(cached, strings.TrimPrefix(k.Spec, "debian:"))
		}
	}
	if abi := newest(cached, q); abi != "" {
		if aptErr != nil {
			c.progress("apt-cache failed (%v); using the cached kernel debian:%s", aptErr, abi)
		}
		return abi, nil
	}
	if aptErr != nil {
		return "", fmt.Errorf("kernel %q: cannot list Debian kernels: %w", spec, aptErr)
	}
	return "", unknownKernel("kernel %q: no such kernel in the apt sources (run apt-get update?); %s", spec, listHint)
}

// aptLists is where apt keeps the package lists; they change only with
// apt-get update.
const aptLists = "/var/lib/apt/lists"

// available is AvailableDebian, remembered in the cache directory
// for as long as apt's package lists are unchanged: apt-cache takes most of
// a second, which every run naming a kernel alias would otherwise pay.
func (c *Cache) available(ctx context.Context) ([]string, error) {
	type memo struct {
		Lists time.Time `json:"lists"`
		ABIs  []string  `json:"abis"`
	}
	path := filepath.Join(c.Dir, "available.json")
	fi, statErr := os.Stat(aptLists)
	if statErr == nil {
		var m memo
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &m) == nil && m.Lists.Equal(fi.ModTime()) && len(m.ABIs) > 0 {
			return m.ABIs, nil
		}
	}
	abis, err := AvailableDebian(ctx)
	if err != nil || statErr != nil {
		return abis, err
	}
	if b, err := json.Marshal(memo{Lists: fi.ModTime(), ABIs: abis}); err == nil {
		writeFileAtomic(path, b) // a memo: failing to keep it costs the next run a lookup
	}
	return abis, nil
}

// AvailableDebian lists the ABIs of the amd64 kernel packages
// (linux-image-ABI-unsigned) the apt sources offer, oldest first.
func AvailableDebian(ctx context.Context) ([]string, error) {
	cmd := exec.CommandContext(ctx, "apt-cache", "search", "--names-only", `^linux-image-.*-amd64-unsigned$`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache search: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var abis []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, _, _ := strings.Cut(sc.Text(), " ")
		abi, ok := strings.CutPrefix(name, "linux-image-")
		if !ok {
			continue
		}
		abi, ok = strings.CutSuffix(abi, "-unsigned")
		if ok && validABI(abi) {
			abis = append(abis, abi)
		}
	}
	sortABIs(abis)
	return abis, nil
}

// sortABIs orders ABIs by version, oldest first.
func sortABIs(abis []string) {
	slices.SortFunc(abis, func(x, y string) int {
		a, _ := parseABI(x)
		b, _ := parseABI(y)
		if c := slices.Compare(a.version, b.version); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
}

// Cached lists the Debian kernels in the cache, oldest first.
func (c *Cache) Cached() ([]*Kernel, error) {
	ents, err := os.ReadDir(c.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	var abis []string
	for _, e := range ents {
		if e.IsDir() && validABI(e.Name()) {
			abis = append(abis, e.Name())
		}
	}
	sortABIs(abis)
	var ks []*Kernel
	for _, abi := range abis {
		k, err := c.cached(abi)
		if err != nil {
			continue // a directory someone else is writing, or junk
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// cached loads a cached kernel; an error wrapping os.ErrNotExist means it
// is not cached.
func (c *Cache) cached(abi string) (*Kernel, error) {
	dir := filepath.Join(c.Dir, abi)
	b, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		return nil, err
	}
	var k Kernel
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("kernel cache %s: %w (remove the directory to fetch again)", dir, err)
	}
	// Paths are stored relative to the directory, so the cache can move.
	k.Dir = dir
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		return filepath.Join(dir, p)
	}
	k.Image, k.Vmlinux, k.Config = abs(k.Image), abs(k.Vmlinux), abs(k.Config)
	for i := range k.Modules {
		k.Modules[i] = abs(k.Modules[i])
	}
	return &k, nil
}

// fetch downloads, unpacks and caches the package of a Debian ABI.
func (c *Cache) fetch(ctx context.Context, abi string) (*Kernel, error) {
	spec := "debian:" + abi
	pkg := "linux-image-" + abi + "-unsigned"
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	// Fetches killed part way leave their temporary directories behind.
	if old, _ := filepath.Glob(filepath.Join(c.Dir, ".fetch-"+abi+"-*")); len(old) > 0 {
		for _, d := range old {
			if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > time.Hour {
				os.RemoveAll(d)
			}
		}
	}
	tmp, err := os.MkdirTemp(c.Dir, ".fetch-"+abi+"-")
	if err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	defer os.RemoveAll(tmp)

	c.progress("downloading %s", pkg)
	t0 := time.Now()
	dl := exec.CommandContext(ctx, "apt-get", "download", "-q", pkg)
	dl.Dir = tmp
	out, err := dl.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(string(out))
		if strings.Contains(msg, "Unable to locate package") || strings.Contains(msg, "Couldn't find any package") || strings.Contains(msg, "has no installation candidate") {
			return nil, unknownKernel("kernel %q: apt knows no package %s; %s", spec, pkg, listHint)
		}
		return nil, fmt.Errorf("kernel %q: apt-get download %s: %w: %s", spec, pkg, err, lastLine(msg))
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, pkg+"_*.deb"))
	if len(debs) != 1 {
		return nil, fmt.Errorf("kernel %q: apt-get download left %d .deb files", spec, len(debs))
	}
	root := filepath.Join(tmp, "root")
	c.progress("unpacking %s (downloaded in %.1fs)", filepath.Base(debs[0]), time.Since(t0).Seconds())
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", debs[0], root).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kernel %q: dpkg-deb -x: %w: %s", spec, err, lastLine(string(out)))
	}
	k := &Kernel{Spec: spec, Package: pkg}
	if _, v, ok := strings.Cut(strings.TrimSuffix(filepath.Base(debs[0]), ".deb"), "_"); ok {
		k.Version, _, _ = strings.Cut(v, "_")
		k.Version = strings.ReplaceAll(k.Version, "%3a", ":")
	}
	dst := filepath.Join(tmp, "out")
	if err := c.unpack(k, root, dst); err != nil {
		return nil, fmt.Errorf("kernel %q: %w", spec, err)
	}
	final := filepath.Join(c.Dir, abi)
	if old, err := c.cached(abi); err == nil && len(old.missingModules()) > 0 {
		// A cache of before a module was needed: out of the way, into the
		// temporary directory removed below.
		os.Rename(final, filepath.Join(tmp, "stale"))
	}
	if err := os.Rename(dst, final); err != nil {
		// Someone else cached it meanwhile: use theirs.
		if k2, err2 := c.cached(abi); err2 == nil {
			return k2, nil
		}
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	c.progress("cached %s in %s", spec, final)
	return c.cached(abi)
}

// unpack lays out the cache directory dst from an unpacked package.
func (c *Cache) unpack(k *Kernel, root, dst string) error {
	images, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	if len(images) != 1 {
		return fmt.Errorf("package has %d boot/vmlinuz-* files, want 1", len(images))
	}
	k.Release = strings.TrimPrefix(filepath.Base(images[0]), "vmlinuz-")
	if err := os.MkdirAll(filepath.Join(dst, "modules"), 0o755); err != nil {
		return err
	}
	if err := os.Rename(images[0], filepath.Join(dst, "vmlinuz")); err != nil {
		return err
	}
	k.Image = "vmlinuz"
	config := map[string]string{}
	if err := os.Rename(filepath.Join(root, "boot", "config-"+k.Release), filepath.Join(dst, "config")); err == nil {
		k.Config = "config"
		config, err = ReadConfig(filepath.Join(dst, "config"))
		if err != nil {
			return err
		}
	}

	mods, err := indexModules(filepath.Join(root, "lib", "modules", k.Release))
	if err != nil {
		return err
	}
	var want []string
	for _, m := range guestModules {
		switch config[m.config] {
		case "y":
			continue
		case "m", "":
			if _, ok := mods[m.module]; ok || config[m.config] == "m" {
				want = append(want, m.module)
			}
		}
	}
	order, err := moduleOrder(mods, want)
	if err != nil {
		return err
	}
	for _, name := range order {
		src := mods[name]
		rel := filepath.Join("modules", filepath.Base(src))
		if err := os.Rename(src, filepath.Join(dst, rel)); err != nil {
			return err
		}
		k.Modules = append(k.Modules, rel)
	}

	bz, err := os.ReadFile(filepath.Join(dst, "vmlinuz"))
	if err != nil {
		return err
	}
	if vmlinux, err := extractVmlinux(bz); err != nil {
		c.progress("cannot extract vmlinux (%v); the VM will boot the bzImage", err)
	} else if err := os.WriteFile(filepath.Join(dst, "vmlinux"), vmlinux, 0o644); err != nil {
		return err
	} else {
		k.Vmlinux = "vmlinux"
	}
	b, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, "kernel.json"), append(b, '\n'), 0o644)
}

// readConfig reads a kernel .config into option → value (y, m, "...").
func ReadConfig(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "CONFIG_") {
			cfg[k] = v
		}
	}
	return cfg, nil
}

// moduleName is the name the kernel knows a module file by.
func ModuleName(file string) string {
	base := filepath.Base(file)
	for _, ext := range []string{".ko.xz", ".ko.zst", ".ko.gz", ".ko"} {
		if s, ok := strings.CutSuffix(base, ext); ok {
			return strings.ReplaceAll(s, "-", "_")
		}
	}
	return ""
}

// indexModules maps module names to files below dir.
func indexModules(dir string) (map[string]string, error) {
	mods := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if errors.Is(err, os.ErrNotExist) && path == dir {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		if n := ModuleName(path); n != "" && d.Type().IsRegular() {
			mods[n] = path
		}
		return nil
	})
	return mods, err
}

// moduleOrder returns want and everything they depend on, dependencies
// first. Debian packages ship no modules.dep; each module's .modinfo names
// its dependencies.
func moduleOrder(mods map[string]string, want []string) ([]string, error) {
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name, from string) error
	visit = func(name, from string) error {
		switch state[name] {
		case 1:
			return fmt.Errorf("module dependency cycle through %s", name)
		case 2:
			return nil
		}
		path, ok := mods[name]
		if !ok {
			if from != "" {
				return fmt.Errorf("module %s (needed by %s) is not in the package", name, from)
			}
			return fmt.Errorf("module %s is not in the package", name)
		}
		state[name] = 1
		deps, err := moduleDepends(path)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(d, name); err != nil {
				return err
			}
		}
		state[name] = 2
		order = append(order, name)
		return nil
	}
	for _, w := range want {
		if err := visit(w, ""); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// moduleDepends reads the depends= entry of a module's .modinfo section.
func moduleDepends(path string) ([]string, error) {
	b, err := readModule(path)
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("module %s: no .modinfo section", filepath.Base(path))
	}
	info, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", filepath.Base(path), err)
	}
	var deps []string
	for _, kv := range bytes.Split(info, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("depends=")); ok {
			for _, d := range strings.Split(string(v), ",") {
				if d = strings.TrimSpace(d); d != "" {
					deps = append(deps, strings.ReplaceAll(d, "-", "_"))
				}
			}
		}
	}
	return deps, nil
}

// readModule reads a module file, decompressing .ko.xz and .ko.zst.
func readModule(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r io.Reader
	switch {
	case strings.HasSuffix(path, ".xz"):
		r, err = xz.NewReader(bytes.NewReader(b))
	case strings.HasSuffix(path, ".zst"):
		var d *zstd.Decoder
		d, err = zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderConcurrency(1))
		if err == nil {
			defer d.Close()
			r = d
		}
	default:
		return b, nil
	}
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", filepath.Base(path), err)
	}
	out, err := io.ReadAll(io.LimitReader(r, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", filepath.Base(path), err)
	}
	return out, nil
}

// local resolves a kernel image on disk. An ELF is booted as is; the ELF
// inside a bzImage is extracted once and cached by content hash.
func (c *Cache) local(path string) (*Kernel, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, unknownKernel("kernel %q: no such file; give a bzImage path or debian:ABI (%s)", path, listHint)
	}
	if err != nil {
		return nil, fmt.Errorf("kernel %q: %w", path, err)
	}
	abs, _ := filepath.Abs(path)
	k := &Kernel{Spec: path, Image: abs}
	if bytes.HasPrefix(b, []byte("\x7fELF")) {
		if err := checkPVH(b); err != nil {
			return nil, fmt.Errorf("kernel %q: %w; give the bzImage instead", path, err)
		}
		k.Vmlinux = abs
		k.SystemMap = treeSystemMap(abs, abs)
		return k, nil
	}
	k.Release = bzRelease(b)
	if k.Release == "" {
		return nil, fmt.Errorf("kernel %q: neither a bzImage nor an ELF kernel", path)
	}
	sum := sha256.Sum256(b)
	dir := filepath.Join(c.Dir, "local", hex.EncodeToString(sum[:12]))
	vml := filepath.Join(dir, "vmlinux")
	if _, err := os.Stat(vml); err == nil {
		k.Vmlinux = vml
		k.SystemMap = treeSystemMap(abs, vml)
		return k, nil
	}
	elfImage, err := extractVmlinux(b)
	if err != nil {
		c.progress("cannot extract vmlinux from %s (%v); the VM will boot the bzImage", path, err)
		return k, nil
	}
	if err := writeFileAtomic(vml, elfImage); err != nil {
		c.progress("cannot cache vmlinux (%v); the VM will boot the bzImage", err)
		return k, nil
	}
	k.Vmlinux = vml
	k.SystemMap = treeSystemMap(abs, vml)
	return k, nil
}

// writeFileAtomic writes a file through a temporary file and a rename.
func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return result.WriteFileAtomic(path, b)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
