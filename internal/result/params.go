package result

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// ParamDiff is one field of a scenario's definition that the parameter
// digest covers (Scenario.Params) and two runs set differently: Field is
// its path ("duration", "workload.size", "tracers.sched"), A and B its
// values in each ("(none)" where one lacks it).
type ParamDiff struct {
	Field, A, B string
}

// paramFields are the parts of a definition that Params digests, in the
// order a difference is named.
var paramFields = []string{"duration", "workload", "tracers"}

// ParamsDiff names the fields of the workload, the tracers and the duration
// in which the definitions of a and b differ: what makes their Params
// differ. None when the definitions do not say (unreadable, or equal while
// the digests differ, as a digest of another version would).
func ParamsDiff(a, b *Scenario) []ParamDiff {
	da, db := decodeDefinition(a.Definition), decodeDefinition(b.Definition)
	if da == nil || db == nil {
		return nil
	}
	var out []ParamDiff
	for _, f := range paramFields {
		out = appendDiffs(out, f, da[f], db[f])
	}
	return out
}

func decodeDefinition(raw json.RawMessage) map[string]any {
	if len(raw) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil {
		return nil
	}
	return m
}

// appendDiffs appends the leaves under path at which a and b differ: the
// keys of two objects one by one, any other value whole.
func appendDiffs(out []ParamDiff, path string, a, b any) []ParamDiff {
	ma, aObj := a.(map[string]any)
	mb, bObj := b.(map[string]any)
	if aObj && bObj {
		keys := slices.Collect(maps.Keys(ma))
		for k := range mb {
			if _, ok := ma[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = appendDiffs(out, path+"."+k, ma[k], mb[k])
		}
		return out
	}
	va, vb := paramText(path, a), paramText(path, b)
	if va != vb {
		out = append(out, ParamDiff{Field: path, A: va, B: vb})
	}
	return out
}

// paramText is a definition's value as a difference names it: the
// duration as a duration, a string bare, anything else as compact JSON.
func paramText(path string, v any) string {
	switch x := v.(type) {
	case nil:
		return "(none)"
	case string:
		return x
	case json.Number:
		if n, err := x.Int64(); err == nil && path == "duration" {
			return time.Duration(n).String()
		}
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
