package history

import "bytes"

// indentLeaves indents the compact JSON b as json.MarshalIndent(v, "",
// " ") would, except that an array holding no object is written on one
// line: a histogram's buckets, [[233,3],[235,120],...], would otherwise
// take three lines a bucket, which made a record of 200 trials 4 MB and
// a 1,000-commit history gigabytes. Objects stay one field a line, so a
// record still reads and diffs as before.
func indentLeaves(b []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(b) + len(b)/4)
	depth := 0
	newline := func() {
		out.WriteByte('\n')
		for range depth {
			out.WriteByte(' ')
		}
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case '"':
			j := endOfString(b, i)
			out.Write(b[i:j])
			i = j - 1
		case '{', '[':
			if c == '[' {
				if j, ok := leafArray(b, i); ok {
					out.Write(b[i:j])
					i = j - 1
					continue
				}
			}
			out.WriteByte(c)
			if i+1 < len(b) && (b[i+1] == '}' || b[i+1] == ']') {
				out.WriteByte(b[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out.WriteByte(c)
		case ',':
			out.WriteByte(c)
			newline()
		case ':':
			out.WriteString(": ")
		default:
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

// endOfString returns the index just past the string starting at b[i].
func endOfString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// leafArray reports whether the array starting at b[i] holds no object,
// and the index just past it.
func leafArray(b []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			j = endOfString(b, j) - 1
		case '{':
			return 0, false
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}
