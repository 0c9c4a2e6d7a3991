package doctor

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/vm"
)

var update = flag.Bool("update", false, "rewrite testdata/doctor.*.golden")

// sampleChecks are checks of every status with details as long as real
// ones (the kvm line is the longest doctor prints).
func sampleChecks() []Check {
	return []Check{
		{Name: "kernel", OK: true, Detail: "6.1.0-28-amd64", Need: NeedHost},
		{Name: "privileges", OK: true, Detail: "may load and attach BPF programs", Need: NeedHost},
		{Name: "kernel BTF", OK: true, Detail: "/sys/kernel/btf/vmlinux present", Need: NeedHost},
		{Name: "offcpu tracer", OK: false, Detail: "attach tp_btf/sched_switch: operation not permitted", Need: NeedHost},
		{Name: "kfunc tracer", OK: false, Detail: "load kfunc: not supported (requires fentry or kprobes)", Need: "scenarios using it"},
		{Name: "cgroup v2", OK: true, Detail: "groups can be made and removed under /sys/fs/cgroup", Need: "exec, --cgroup"},
		{Name: "qemu", OK: true, Detail: "/usr/bin/qemu-system-x86_64", Need: "VM runs"},
		KVM(vmKVMOpensNotRuns),
		{Name: "apt-get", OK: false, Detail: "apt-get not found: debian: kernel specs cannot be fetched; use a local bzImage path", Need: "VM runs"},
	}
}

// vmKVMOpensNotRuns is the KVM whose check says most.
var vmKVMOpensNotRuns = vm.KVM{Opens: true, Reason: "KVM_RUN: a test loop of 20000 iterations took 24ms", Took: 70 * time.Millisecond}

// TestRenderWidths: at 80 and 100 columns no line is wider and every
// check's name, status and detail are there; unlimited, the rows are
// today's table.
func TestRenderWidths(t *testing.T) {
	cs := sampleChecks()
	var want bytes.Buffer // the table as doctor printed it before widths
	tab := render.NewTable(&want)
	tab.Header([]string{"check", "status", "needed for", "detail"})
	for _, c := range cs {
		tab.Append([]string{c.Name, c.Status(), c.Need, c.Detail})
	}
	tab.Render()
	for _, width := range []int{0, 80, 100, 40} {
		var b bytes.Buffer
		failed, err := Render(&b, cs, Options{Width: width})
		if err != nil {
			t.Fatal(err)
		}
		if failed != 1 {
			t.Errorf("width %d: %d failed, want 1", width, failed)
		}
		out := b.String()
		if width == 0 {
			if diff := cmp.Diff(want.String(), out); diff != "" {
				t.Errorf("unlimited width changed the table (-want +got):\n%s", diff)
			}
			continue
		}
		for i, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: line %d is %d columns: %q", width, i+1, n, l)
			}
		}
		flat := strings.Join(strings.Fields(out), " ")
		for _, c := range cs {
			for _, s := range []string{c.Name, c.Status(), c.Detail} {
				if !strings.Contains(flat, s) {
					t.Errorf("width %d lacks %q:\n%s", width, s, out)
				}
			}
		}
		if width == 80 || width == 100 {
			checkGolden(t, filepath.Join("testdata", "doctor."+strconv.Itoa(width)+".golden"), b.Bytes())
		}
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s differs (-want +got), written to %s.got:\n%s", path, path, diff)
	}
}

// TestReportJSON: the JSON validates against docs/doctor.schema.json and
// reads back as the Report it was written from.
func TestReportJSON(t *testing.T) {
	var b bytes.Buffer
	failed, err := WriteJSON(&b, sampleChecks())
	if err != nil || failed != 1 {
		t.Fatalf("WriteJSON: %d failed, %v", failed, err)
	}
	validate(t, filepath.Join("..", "..", "docs", "doctor.schema.json"), b.Bytes())
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(NewReport(sampleChecks()), back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if back.Schema != SchemaVersion || back.Checks[3].Status != "FAIL" || back.Checks[4].Status != "warn" {
		t.Errorf("schema %d, statuses %q %q", back.Schema, back.Checks[3].Status, back.Checks[4].Status)
	}
	// The schema is not vacuous.
	bad := bytes.Replace(b.Bytes(), []byte(`"status": "FAIL"`), []byte(`"status": "broken"`), 1)
	if validateErr(t, filepath.Join("..", "..", "docs", "doctor.schema.json"), bad) == nil {
		t.Error("a status of broken passes the schema")
	}
}

func validate(t *testing.T, schema string, doc []byte) {
	t.Helper()
	if err := validateErr(t, schema, doc); err != nil {
		t.Errorf("%s: %v\n%s", schema, err, doc)
	}
}

func validateErr(t *testing.T, schema string, doc []byte) error {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(schema)
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}
