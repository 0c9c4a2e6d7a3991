package show

import "testing"

// Every format says what it writes, and nothing else has a sentence.
func TestAboutEveryFormat(t *testing.T) {
	for _, f := range Formats {
		if About[f] == "" {
			t.Errorf("format %s has no About", f)
		}
	}
	if len(About) != len(Formats) {
		t.Errorf("%d formats described, %d in Formats", len(About), len(Formats))
	}
}
