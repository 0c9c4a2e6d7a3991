package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validateDoc checks doc against docs/NAME.schema.json.
func validateDoc(t *testing.T, name string, doc []byte) error {
	t.Helper()
	s, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "docs", name+".schema.json"))
	if err != nil {
		t.Fatalf("docs/%s.schema.json: %v", name, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}

func TestCatalogJSON(t *testing.T) {
	c := &Catalog{
		Scenarios: []CatalogScenario{{Name: "getppid", Workload: "syscall", Description: "a syscall", Tracers: []string{"syscall"},
			Metrics: []string{"syscall.getppid"}, Gate: map[string]map[string]float64{"syscall.getppid": {"p99": 0.1}}}},
		Tracers:         []CatalogTracer{{Name: "syscall", Description: "syscalls", Metrics: []string{"syscall.*"}}},
		WorkloadMetrics: []CatalogMetric{{Kind: "exec", Name: "exec.op", Description: "an op"}},
	}
	var b bytes.Buffer
	if err := WriteCatalogJSON(&b, c); err != nil {
		t.Fatal(err)
	}
	if err := validateDoc(t, "catalog", b.Bytes()); err != nil {
		t.Errorf("against docs/catalog.schema.json: %v\n%s", err, b.String())
	}
	var back CatalogJSON
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.JSON(), back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if err := validateDoc(t, "catalog", bytes.Replace(b.Bytes(), []byte(`"p99": 0.1`), []byte(`"p99": -1`), 1)); err == nil {
		t.Error("a negative threshold passes the schema")
	}
}

func TestKernelsJSON(t *testing.T) {
	cached := []CachedKernel{{Spec: "debian:6.1.0-28-cloud-amd64", Version: "6.1.119-1", Vmlinux: true, Modules: 3}, {Spec: "/k/bzImage", Modules: 0}}
	for _, tc := range []struct {
		name string
		abis []string
		err  error
	}{
		{"available", []string{"6.1.0-28-cloud-amd64", "6.12.9-amd64"}, nil},
		{"apt fails", nil, errors.New("apt-cache: not found")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteKernelsJSON(&b, "/cache", cached, tc.abis, tc.err); err != nil {
				t.Fatal(err)
			}
			if err := validateDoc(t, "kernels", b.Bytes()); err != nil {
				t.Errorf("against docs/kernels.schema.json: %v\n%s", err, b.String())
			}
			var back KernelsJSON
			if err := json.Unmarshal(b.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			want := Kernels("/cache", cached, tc.abis, tc.err)
			if diff := cmp.Diff(want, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			if tc.err == nil && (!back.Available[0].Cached || back.Available[1].Cached || back.Cached[0].Boots != "vmlinux") {
				t.Errorf("cached marks or boots wrong: %+v", back)
			}
		})
	}
}
