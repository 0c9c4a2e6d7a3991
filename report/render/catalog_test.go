package render

import (
	"testing"
)

func TestWrapText(t *testing.T) {
	got := wrapText("aa bb cc dd", 5, " ")
	if want := "aa bb\n cc\n dd\n"; got != want {
		t.Errorf("wrapText = %q, want %q", got, want)
	}
}
