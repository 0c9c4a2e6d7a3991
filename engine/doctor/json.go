package doctor

import (
	"encoding/json"
	"io"
)

// SchemaVersion is the schema of the JSON doctor writes
// (docs/doctor.schema.json).
const SchemaVersion = 1

// Report is what tailgate doctor --format json writes: every check, with
// its status, and how many that host runs need failed.
type Report struct {
	Schema int `json:"schema"`
	// Failed counts the failed checks host runs need: doctor exits 3
	// when it is not 0.
	Failed int           `json:"failed"`
	Checks []ReportCheck `json:"checks"`
}

// ReportCheck is a Check with its Status.
type ReportCheck struct {
	Check
	Status string `json:"status"`
}

// NewReport is the Report of the checks.
func NewReport(cs []Check) Report {
	r := Report{Schema: SchemaVersion, Checks: []ReportCheck{}}
	for _, c := range cs {
		if c.Status() == "FAIL" {
			r.Failed++
		}
		r.Checks = append(r.Checks, ReportCheck{Check: c, Status: c.Status()})
	}
	return r
}

// WriteJSON writes the checks' Report as indented JSON and returns how
// many of those host runs need failed, as Write does.
func WriteJSON(w io.Writer, cs []Check) (failed int, err error) {
	r := NewReport(cs)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return r.Failed, enc.Encode(r)
}
