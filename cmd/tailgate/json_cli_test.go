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
