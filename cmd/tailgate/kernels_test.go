package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeKernelCache is a kernel cache holding kernel.json for each ABI, as
// a fetch leaves it (the images themselves are not read by list).
func fakeKernelCache(t *testing.T, abis ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i, abi := range abis {
		k := map[string]any{
			"spec": "debian:" + abi, "release": abi, "image": "boot/vmlinuz-" + abi,
			"package": "linux-image-" + abi + "-unsigned", "version": "6.1.158-1",
		}
		if i%2 == 0 {
			k["vmlinux"] = "vmlinux"
			k["modules"] = []string{"lib/modules/virtio_net.ko", "lib/modules/net_failover.ko"}
		}
		b, err := json.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, abi), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, abi, "kernel.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// kernels list --format json validates against docs/kernels.schema.json,
// with kernels cached and with none, whether or not apt answers (its
// failure is the document's available_error); a format it does not know
// is a usage error.
func TestKernelsListJSON(t *testing.T) {
	// --kernel-cache, as run and gate spell it, and --cache, its former
	// name.
	for _, tc := range []struct {
		name, flag string
		abis       []string
	}{
		{"cached", "--kernel-cache", []string{"6.1.0-42-cloud-amd64", "6.12.57-rt-amd64"}},
		{"empty", "--kernel-cache", nil},
		{"cached, former name", "--cache", []string{"6.1.0-42-cloud-amd64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fakeKernelCache(t, tc.abis...)
			code, out, errOut := runInProcess(t, "kernels", "list", tc.flag, dir, "--format", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if err := validateBytes(t, docsSchema(t, "kernels"), []byte(out)); err != nil {
				t.Errorf("kernels list --format json does not validate against docs/kernels.schema.json: %v\n%s", err, out)
			}
			var doc struct {
				Cache  string `json:"cache"`
				Cached []struct {
					Spec    string `json:"spec"`
					Boots   string `json:"boots"`
					Modules int    `json:"modules"`
				} `json:"cached"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Cache != dir || len(doc.Cached) != len(tc.abis) {
				t.Fatalf("cache %q with %d kernels, want %q with %d:\n%s", doc.Cache, len(doc.Cached), dir, len(tc.abis), out)
			}
			if len(tc.abis) > 0 && (doc.Cached[0].Spec != "debian:"+tc.abis[0] || doc.Cached[0].Boots != "vmlinux" || doc.Cached[0].Modules != 2) {
				t.Errorf("first cached kernel %+v, want debian:%s booting vmlinux with 2 modules", doc.Cached[0], tc.abis[0])
			}
		})
	}
	if code, _, _ := runInProcess(t, "kernels", "list", "--cache", t.TempDir(), "--format", "xml"); code != exitUsage {
		t.Errorf("kernels list --format xml: exit %d, want %d", code, exitUsage)
	}
	// fetch takes the same --cache, and no --format.
	if code, _, errOut := runInProcess(t, "kernels", "fetch", "--cache", t.TempDir(), "--format", "json", "/nonexistent/bzImage"); code != exitUsage || !strings.Contains(errOut, "format") {
		t.Errorf("kernels fetch --format json: exit %d, want %d naming the flag: %s", code, exitUsage, errOut)
	}
}
