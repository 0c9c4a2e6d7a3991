package result

import (
	"encoding/json"
	"fmt"
	"slices"
)

// checkKeys refuses a JSON document, valid as json.Unmarshal has found
// it, in which an object names a key twice: encoding/json keeps the last
// and says nothing, so that a reader and a person (or another tool) could
// read two different documents in one file. Keys are compared as
// decoded ("a" and "\u0061" are one).
func checkKeys(b []byte) error {
	type object struct {
		keys      []string        // while few: most objects have a handful
		many      map[string]bool // past manyKeys
		expectKey bool
	}
	const manyKeys = 16
	var stack []*object // nil entries are arrays
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '{':
			stack = append(stack, &object{expectKey: true})
		case '[':
			stack = append(stack, nil)
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if n := len(stack); n > 0 && stack[n-1] != nil {
				stack[n-1].expectKey = true
			}
		case '"':
			start := i
			escaped := false
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					escaped = true
					i++
				}
			}
			n := len(stack)
			if n == 0 || stack[n-1] == nil || !stack[n-1].expectKey {
				continue
			}
			o := stack[n-1]
			o.expectKey = false
			key := string(b[start+1 : i])
			if escaped {
				if err := json.Unmarshal(b[start:i+1], &key); err != nil {
					return fmt.Errorf("%w: key at byte %d: %v", ErrCorrupt, start, err)
				}
			}
			if o.many == nil && len(o.keys) == manyKeys {
				o.many = map[string]bool{}
				for _, k := range o.keys {
					o.many[k] = true
				}
			}
			if o.many != nil && o.many[key] || o.many == nil && slices.Contains(o.keys, key) {
				return fmt.Errorf("%w: key %q appears twice in one object (at byte %d)", ErrCorrupt, key, start)
			}
			if o.many != nil {
				o.many[key] = true
			} else {
				o.keys = append(o.keys, key)
			}
		}
	}
	return nil
}
