// Package english words counts in what tailgate writes for people: "1
// round", "3 rounds".
package english

import "strconv"

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
