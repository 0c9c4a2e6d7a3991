package result

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// checkKeys refuses a JSON document, valid as json.Unmarshal has found
// it, in which an object names a key twice: encoding/json keeps the last
// and says nothing, so that a reader and a person (or another tool) could
// read two different documents in one file. Keys are compared as
// decoded ("a" and "\u0061" are one) and as encoding/json matches them to
// fields, regardless of case: "Kernel_Release" after "kernel_release"
// would win in tailgate and lose in jq.
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
			name := key
			key = foldKey(key)
			if o.many == nil && len(o.keys) == manyKeys {
				o.many = map[string]bool{}
				for _, k := range o.keys {
					o.many[k] = true
				}
			}
			if o.many != nil && o.many[key] || o.many == nil && slices.Contains(o.keys, key) {
				return fmt.Errorf("%w: key %+q appears twice in one object, in this case or another (at byte %d)", ErrCorrupt, name, start)
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

// foldKey is key with each letter replaced by the smallest of its simple
// case folds: two keys fold alike exactly when strings.EqualFold, which
// encoding/json uses to match a key to a field, finds them equal.
func foldKey(key string) string {
	return strings.Map(func(r rune) rune {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		return m
	}, key)
}

// checkSchema walks b, a Result document, against the Result's types
// before it is decoded, and refuses a key that is not a field's (an
// unknown field), one that names a field in another case than the
// field's own (encoding/json takes "Kernel_Release" for kernel_release,
// jq and every other reader do not), and more scenarios or trials than
// a run makes (MaxScenarios, MaxTrials): what a Result costs to hold is
// then bounded before any of it is. Values whose type decodes itself (a
// histogram, which refuses unknown fields itself) or is raw JSON are not
// walked.
func checkSchema(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	w := &schemaWalk{dec: dec, fields: map[reflect.Type]map[string]reflect.Type{}}
	return w.walk(reflect.TypeFor[Result](), "", "")
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// schemaWalk is checkSchema's state: the decoder, and the fields of each
// struct type met so far by their JSON names.
type schemaWalk struct {
	dec    *json.Decoder
	fields map[reflect.Type]map[string]reflect.Type
}

// arrayCaps are the arrays whose length is capped, by the key that holds
// them, with what they hold: what a run makes, so that no list costs
// more to hold than its JSON (an int of a CPU list is 8 bytes, "1," is
// 2).
var arrayCaps = map[string]struct {
	max  int
	what string
}{
	"scenarios":    {MaxScenarios, "scenarios"},
	"skipped":      {MaxScenarios, "skipped scenarios"},
	"trials":       {MaxTrials, "trials"},
	"slowest":      {MaxSlowest, "slow events"},
	"kernel_stack": {MaxStack, "frames"},
	"user_stack":   {MaxStack, "frames"},
	"cpus":         {MaxCPUs, "CPUs"},
	"top":          {64, "contributors"},
}

// walk walks one value of type t at the place at, held by key (a struct
// field's JSON name, or "").
func (w *schemaWalk) walk(t reflect.Type, at, key string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || t.Kind() == reflect.Interface {
		var skip json.RawMessage
		return w.dec.Decode(&skip)
	}
	tok, err := w.dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	switch tok {
	case json.Delim('{'):
		err = w.object(t, at, key)
	case json.Delim('['):
		err = w.array(t, at, key)
	}
	return err
}

// whole are the types of a list's elements that must name every field
// their writer always writes (those without omitempty): an element of a
// list costs its type's size to hold however short its JSON, and "{}"
// is three bytes (a list of empty slow events cost 60 times its size).
var whole = map[reflect.Type]bool{
	reflect.TypeFor[Event]():       true,
	reflect.TypeFor[Task]():        true,
	reflect.TypeFor[Contributor](): true,
	reflect.TypeFor[Probe]():       true,
	reflect.TypeFor[TracerInfo]():  true,
	reflect.TypeFor[Executable]():  true,
	reflect.TypeFor[Sysctl]():      true,
	reflect.TypeFor[Skipped]():     true,
}

// requiredFields are the JSON names of t's fields written always.
func requiredFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" && !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			out = append(out, name)
		}
	}
	return out
}

// objectCaps are the maps whose size is capped, by the key that holds
// them (arrayCaps' kind).
var objectCaps = map[string]struct {
	max  int
	what string
}{
	"metrics": {MaxMetrics, "metrics"},
}

func (w *schemaWalk) object(t reflect.Type, at, key string) error {
	fields := w.fields[t]
	if fields == nil && t.Kind() == reflect.Struct {
		fields = map[string]reflect.Type{}
		jsonFields(t, fields)
		w.fields[t] = fields
	}
	var seen []string // folded, of a struct: a handful
	limit, capped := objectCaps[key]
	if t.Kind() != reflect.Map {
		capped = false
	}
	for n := 0; w.dec.More(); n++ {
		if capped && n == limit.max {
			return fmt.Errorf("%w: %s holds more than %d %s, the most a run makes", ErrCorrupt, at, limit.max, limit.what)
		}
		k, err := w.dec.Token()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		name, _ := k.(string)
		vt, field := reflect.TypeFor[any](), ""
		switch t.Kind() {
		case reflect.Struct:
			// As checkKeys does, here first: a key twice is named so
			// before its case is.
			f := foldKey(name)
			if slices.Contains(seen, f) {
				return fmt.Errorf("%w: key %+q appears twice in one object, in this case or another (at byte %d)", ErrCorrupt, name, w.dec.InputOffset())
			}
			seen = append(seen, f)
			ft, ok := fields[name]
			if !ok {
				return unknownKey(name, cmp.Or(at, "the top"), fields)
			}
			vt, field = ft, name
		case reflect.Map:
			vt = t.Elem()
		}
		if err := w.walk(vt, at+"."+name, field); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if whole[t] {
		for _, f := range requiredFields(t) {
			if !slices.Contains(seen, foldKey(f)) {
				return fmt.Errorf("%w: an element of %s has no %q, which every one has", ErrCorrupt, cmp.Or(at, "the top"), f)
			}
		}
	}
	return nil
}

func (w *schemaWalk) array(t reflect.Type, at, key string) error {
	et := reflect.TypeFor[any]()
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		et = t.Elem()
	}
	limit, capped := arrayCaps[key]
	for n := 0; w.dec.More(); n++ {
		if capped && n == limit.max {
			return fmt.Errorf("%w: %s holds more than %d %s, the most a run makes", ErrCorrupt, at, limit.max, limit.what)
		}
		if err := w.walk(et, at+"[]", ""); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return nil
}

// unknownKey is the error for key at a place (at) whose fields are not
// it: one in another case, or none.
func unknownKey(key, at string, fields map[string]reflect.Type) error {
	for f := range fields {
		if strings.EqualFold(f, key) {
			return fmt.Errorf("%w: key %+q at %s is a field's name in another case; write it as the schema does", ErrCorrupt, key, at)
		}
	}
	return fmt.Errorf("%w: unknown field %+q at %s", ErrCorrupt, key, at)
}

// jsonFields adds the JSON names of t's fields to fields, with their
// types, those of an embedded struct without a name of its own too.
func jsonFields(t reflect.Type, fields map[string]reflect.Type) {
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			jsonFields(f.Type, fields)
		case f.IsExported() && name != "" && name != "-":
			fields[name] = f.Type
		}
	}
}
