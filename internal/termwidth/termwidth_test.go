package termwidth

import (
	"bytes"
	"os"
	"testing"
)

func TestFrom(t *testing.T) {
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pipeR.Close()
	defer pipeW.Close()
	for _, tc := range []struct {
		name    string
		columns string
		f       *os.File
		want    int
	}{
		{"columns", "80", nil, 80},
		{"columns over a pipe", "100", pipeW, 100},
		{"columns padded", " 120 ", nil, 120},
		{"empty columns, no file", "", nil, Piped},
		{"pipe", "", pipeW, Piped},
		{"zero columns", "0", pipeW, Piped},
		{"bad columns", "wide", pipeW, Piped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := From(tc.columns, tc.f); got != tc.want {
				t.Errorf("From(%q) = %d, want %d", tc.columns, got, tc.want)
			}
		})
	}
}

func TestOfBuffer(t *testing.T) {
	t.Setenv("COLUMNS", "")
	if got := Of(&bytes.Buffer{}); got != Piped {
		t.Errorf("Of(buffer) = %d, want %d", got, Piped)
	}
	t.Setenv("COLUMNS", "90")
	if got := Of(&bytes.Buffer{}); got != 90 {
		t.Errorf("Of(buffer) with COLUMNS=90 = %d", got)
	}
}
