// Package english words counts and lists in what tailgate writes for
// people: "1 round", "3 rounds", "text, json or html".
package english

import (
	"strconv"
	"strings"
)

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n and noun, with an s when n is not 1: "1 target", "2
// targets". For a noun whose plural is not noun+"s", Plural.
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Plural(n, noun, noun+"s")
}

// Or joins items as a choice: "a", "a or b", "a, b or c".
func Or(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// And joins items as a list: "a", "a and b", "a, b and c".
func And(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
