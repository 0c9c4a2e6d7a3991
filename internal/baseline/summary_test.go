package baseline

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestSummaryJSON: the summary of saved baselines validates against
// docs/baselines.schema.json and reads back as written.
func TestSummaryJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "baselines")
	if _, err := Save(dir, sample("host", "6.1.0", time.Unix(100, 0), "getppid", "pipe")); err != nil {
		t.Fatal(err)
	}
	entries, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteSummaryJSON(&b, entries); err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "docs", "baselines.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("against docs/baselines.schema.json: %v\n%s", err, b.String())
	}
	var back Summary
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Summarize(entries), back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if len(back.Baselines) != 2 || back.Baselines[0].Scenario != "getppid" || back.Baselines[0].Metrics[0].Events != 100 || back.Baselines[0].Metrics[0].P99Ns == nil || *back.Baselines[0].Metrics[0].P99Ns < 1900 {
		t.Errorf("summary = %+v", back)
	}
}
