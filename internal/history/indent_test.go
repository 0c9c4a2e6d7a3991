package history

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestIndentLeaves(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"object", `{"a":1,"b":"x"}`, "{\n \"a\": 1,\n \"b\": \"x\"\n}"},
		{"empty", `{"a":{},"b":[]}`, "{\n \"a\": {},\n \"b\": []\n}"},
		{"leaf arrays", `{"buckets":[[1,2],[3,4]],"s":["a,b","c]"]}`, "{\n \"buckets\": [[1,2],[3,4]],\n \"s\": [\"a,b\",\"c]\"]\n}"},
		{"objects in an array", `[{"a":[1]},{"b":"{\"q"}]`, "[\n {\n  \"a\": [1]\n },\n {\n  \"b\": \"{\\\"q\"\n }\n]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := indentLeaves([]byte(tc.in))
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			var a, b bytes.Buffer
			json.Compact(&a, got)
			json.Compact(&b, []byte(tc.in))
			if a.String() != b.String() {
				t.Errorf("changed the value: %s", a.String())
			}
		})
	}
}

func TestRecordSize(t *testing.T) {
	r := sample(t, 20)
	rec, err := NewRecord(r, commitID(1), r.Started, "main", Provenance{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := json.MarshalIndent(rec, "", " ")
	compact, _ := json.Marshal(rec)
	t.Logf("a record of 20 syscall-read trials: %d bytes (indented everywhere: %d, compact: %d)", len(b), len(old), len(compact))
	if _, err := ParseRecord("r", b); err != nil {
		t.Fatal(err)
	}
	if len(b) > len(compact)*3/2 {
		t.Errorf("%d bytes, %d compact: the buckets are not on one line", len(b), len(compact))
	}
}
