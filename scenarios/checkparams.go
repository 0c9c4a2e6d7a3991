package scenarios

import (
	"encoding/json"
	"fmt"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// CheckParams refuses a Result one scenario of which has a parameter
// digest (result.Scenario.Params) that is not its definition's (Params):
// compare, merge, the history's series and a baseline's lookup trust the
// digest to say what was measured, and show, ParamsDiff and a reader of
// the file trust the definition; a Result in which they disagree says
// two things. A scenario with no definition has nothing to check the
// digest against. Errors wrap result.ErrCorrupt.
func CheckParams(r *result.Result) error {
	for _, s := range r.Scenarios {
		if len(s.Definition) == 0 || string(s.Definition) == "null" {
			continue
		}
		var def Scenario
		if err := json.Unmarshal(s.Definition, &def); err != nil {
			return fmt.Errorf("%w: scenario %q: its definition does not read as a scenario: %v", result.ErrCorrupt, s.Name, err)
		}
		if p := Params(&def); p != s.Params {
			return fmt.Errorf("%w: scenario %q: its params %.16q are not the digest of its definition (%.16s…): the file was edited, or a tailgate of other parameters wrote it; measure it again", result.ErrCorrupt, s.Name, s.Params, p)
		}
	}
	return nil
}
