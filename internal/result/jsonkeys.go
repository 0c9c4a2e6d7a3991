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

// checkFieldCase refuses a key of b, a Result document, that names a
// field of the Result's types in another case than the field's own:
// encoding/json takes "Kernel_Release" for kernel_release, jq and every
// other reader do not. Values whose type decodes itself (a histogram)
// or is raw JSON are not walked.
func checkFieldCase(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return walkFieldCase(dec, reflect.TypeFor[Result](), "")
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

func walkFieldCase(dec *json.Decoder, t reflect.Type, at string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || t.Kind() == reflect.Interface {
		var skip json.RawMessage
		return dec.Decode(&skip)
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	switch tok {
	case json.Delim('{'):
		fields := map[string]reflect.Type{}
		if t.Kind() == reflect.Struct {
			jsonFields(t, fields)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
			key, _ := k.(string)
			vt := reflect.TypeFor[any]()
			switch t.Kind() {
			case reflect.Struct:
				ft, ok := fields[key]
				if !ok {
					return fmt.Errorf("%w: key %+q at %s is a field's name in another case; write it as the schema does", ErrCorrupt, key, cmp.Or(at, "the top"))
				}
				vt = ft
			case reflect.Map:
				vt = t.Elem()
			}
			if err := walkFieldCase(dec, vt, at+"."+key); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		et := reflect.TypeFor[any]()
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			et = t.Elem()
		}
		for dec.More() {
			if err := walkFieldCase(dec, et, at+"[]"); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return nil
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
