package cmdline

import (
	"os/exec"
	"strings"
	"testing"
)

// A line of quoted words is one a shell splits back into them: a
// --kernel with its command line stays one word, a quote in a word and
// an empty word survive, and a word that needs no quoting is left as is.
func TestQuote(t *testing.T) {
	args := []string{"syscall-write", "--kernel", "a0b7789b1027=debian:6.12-cloud panic=10 audit=1", "syscall.write:p99=2%", "it's", "", "a;b", "$HOME"}
	var words []string
	for _, a := range args {
		words = append(words, Quote(a))
	}
	got, err := exec.Command("sh", "-c", "for a in "+strings.Join(words, " ")+"; do printf '<%s>' \"$a\"; done").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, a := range args {
		want += "<" + a + ">"
	}
	if string(got) != want {
		t.Errorf("the shell split %q into %s, want %s", words, got, want)
	}
	if q := Quote("vm.swappiness=60"); q != "vm.swappiness=60" {
		t.Errorf("Quote(vm.swappiness=60) = %s, want it as it is", q)
	}
}

// A word with a control character is printed with it escaped, and bash
// reads the printed word back as the word: a carriage return from a
// record cannot hide part of the printed line.
func TestQuoteControl(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	args := []string{"a\rb", "x\ny", "tab\there", "it's\x1b[2Kgone", "\\\x7f", "bad\xffbyte", "zw\u200bsp"}
	var words []string
	for _, a := range args {
		q := Quote(a)
		if strings.ContainsFunc(q, hidden) {
			t.Errorf("Quote(%q) = %q holds a hidden character", a, q)
		}
		words = append(words, q)
	}
	got, err := exec.Command("bash", "-c", "for a in "+strings.Join(words, " ")+"; do printf '<%s>' \"$a\"; done").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, a := range args {
		want += "<" + a + ">"
	}
	if string(got) != want {
		t.Errorf("bash split %q into %q, want %q", words, got, want)
	}
}
