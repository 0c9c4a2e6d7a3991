package main

import "testing"

// doctor and list print JSON that their schemas in docs/ accept; a format
// neither knows is a usage error.
func TestDoctorAndListJSON(t *testing.T) {
	for _, tc := range []struct{ cmd, schema string }{{"doctor", "doctor"}, {"list", "catalog"}} {
		code, out, errOut := runInProcess(t, tc.cmd, "--format", "json")
		if code != 0 {
			t.Fatalf("%s --format json: exit %d: %s", tc.cmd, code, errOut)
		}
		if err := validateBytes(t, docsSchema(t, tc.schema), []byte(out)); err != nil {
			t.Errorf("%s --format json does not validate against docs/%s.schema.json: %v\n%s", tc.cmd, tc.schema, err, out)
		}
		if code, _, _ := runInProcess(t, tc.cmd, "--format", "xml"); code != exitUsage {
			t.Errorf("%s --format xml: exit %d, want %d", tc.cmd, code, exitUsage)
		}
	}
}

// baseline show --format json validates against docs/baselines.schema.json,
// a metric without events (p99 null) included.
func TestBaselineShowJSON(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runInProcess(t, "baseline", "save", "../../report/testdata/trials-syscall-read.json", dir); code != 0 {
		t.Fatalf("baseline save: exit %d: %s", code, errOut)
	}
	code, out, errOut := runInProcess(t, "baseline", "show", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("baseline show --format json: exit %d: %s", code, errOut)
	}
	if err := validateBytes(t, docsSchema(t, "baselines"), []byte(out)); err != nil {
		t.Errorf("baseline show --format json does not validate: %v\n%s", err, out)
	}
}
