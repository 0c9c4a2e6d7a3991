package cmdline

import "strings"

// Quote is s as one word of a shell's command line: as it is when no
// character of it needs quoting, else single-quoted (a --kernel with its
// command line, a sysctl's value with spaces).
func Quote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !shellSafe(r) }) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe says r needs no quoting in a shell word.
func shellSafe(r rune) bool {
	return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
}
