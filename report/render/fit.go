package render

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/tailgate-ci/tailgate/internal/plaintext"
)

// A table that keeps to a terminal's width. Within the width it is the
// house table (NewTable), unchanged; wider, it is laid out as kubectl and
// gh lay out theirs: no borders, the first column's repeated values as
// headings, the last column wrapped, and the columns of least use moved
// out of the row onto lines of their own beneath it.

// Column is one column of a FitTable and how it gives way when the rows
// are too wide.
type Column struct {
	Header string
	Align  tw.Align
	// Fold is the order in which the column leaves the row for a line of
	// its own beneath it ("header: value"), 1 first; 0 keeps it in the
	// row while any column with a Fold is left.
	Fold int
	// Group, for the first column: consecutive rows with the same value
	// are put under one heading line of it rather than repeating it.
	Group bool
	// Wrap is the fewest columns to which the cell may be wrapped, at
	// spaces, when this is the last column of the row; 0 never wraps.
	Wrap int
}

// FitTable is a table laid out to keep to Width columns; a Width of 0
// (termwidth.Unlimited) is unlimited.
type FitTable struct {
	Columns []Column
	Rows    [][]string
	Width   int
	// Narrow lays the table out narrowed even if it fits, as the other
	// tables of its report must be.
	Narrow bool
}

// gap separates the columns of a narrowed table; indent sets its rows
// under their group's heading.
const (
	gap    = 2
	indent = 2
)

// Append adds a row, one cell per column, each one line (plaintext.Line):
// a cell may hold a name from a Result file.
func (t *FitTable) Append(row []string) {
	cells := make([]string, len(row))
	for i, c := range row {
		cells[i] = plaintext.Line(c)
	}
	t.Rows = append(t.Rows, cells)
}

// Render writes the table: the house table when it fits the width (or
// the width is unlimited), else the narrow layout.
func (t *FitTable) Render(w io.Writer) error {
	if t.Width <= 0 || !t.Narrow && t.borderedWidth() <= t.Width {
		var aligns []tw.Align
		var header []string
		for _, c := range t.Columns {
			aligns = append(aligns, c.Align)
			header = append(header, c.Header)
		}
		tab := NewTable(w, aligns...)
		tab.Header(header)
		for _, r := range t.Rows {
			if err := tab.Append(r); err != nil {
				return err
			}
		}
		return tab.Render()
	}
	_, err := io.WriteString(w, t.narrow())
	return err
}

// overflows says whether the house table of t is wider than its width.
func (t *FitTable) overflows() bool { return t.Width > 0 && t.borderedWidth() > t.Width }

// borderedWidth is the width of the house table of t: each column its
// widest line, padded by a space each side, and a border between.
func (t *FitTable) borderedWidth() int {
	n := 1
	for i := range t.Columns {
		n += t.natural(i) + 3
	}
	return n
}

// natural is the width of column i's widest line, header included.
func (t *FitTable) natural(i int) int {
	n := textWidth(t.Columns[i].Header)
	for _, r := range t.Rows {
		if i < len(r) {
			for _, line := range strings.Split(r[i], "\n") {
				n = max(n, textWidth(line))
			}
		}
	}
	return n
}

// narrowLayout is which columns stay in the row, how wide each is, and
// which are folded onto lines beneath it.
type narrowLayout struct {
	group  bool
	in     []int // column indexes left in the row
	widths []int // by position in in
	folded []int // column indexes, in column order
}

// layout chooses the narrow layout: fold columns in Fold order until the
// row fits, then, if it still does not, every column but the first left.
func (t *FitTable) layout() narrowLayout {
	l := narrowLayout{group: len(t.Columns) > 1 && t.Columns[0].Group}
	for i := range t.Columns {
		if i > 0 || !l.group {
			l.in = append(l.in, i)
		}
	}
	for {
		if l.fit(t) {
			return l
		}
		next, order := -1, 0
		for p, i := range l.in {
			if f := t.Columns[i].Fold; f > 0 && (next < 0 || f < order) {
				next, order = p, f
			}
		}
		if next < 0 {
			break
		}
		l.fold(next)
	}
	for len(l.in) > 1 {
		l.fold(len(l.in) - 1)
	}
	l.fit(t)
	return l
}

// fold moves the column at position p of the row beneath it.
func (l *narrowLayout) fold(p int) {
	i := l.in[p]
	l.in = append(l.in[:p:p], l.in[p+1:]...)
	at := len(l.folded)
	for at > 0 && l.folded[at-1] > i {
		at--
	}
	l.folded = append(l.folded[:at:at], append([]int{i}, l.folded[at:]...)...)
}

// fit sets the widths of the row's columns and says whether the row
// keeps to t.Width, the last column wrapped if it may be.
func (l *narrowLayout) fit(t *FitTable) bool {
	l.widths = l.widths[:0]
	used := 0
	if l.group {
		used = indent
	}
	for p, i := range l.in {
		if p > 0 {
			used += gap
		}
		l.widths = append(l.widths, t.natural(i))
		used += l.widths[p]
	}
	if used <= t.Width {
		return true
	}
	last := len(l.in) - 1
	if last < 0 {
		return true
	}
	c := t.Columns[l.in[last]]
	room := t.Width - (used - l.widths[last])
	if c.Wrap > 0 && room >= max(c.Wrap, textWidth(c.Header)) {
		l.widths[last] = room
		return true
	}
	if last == 0 { // one column left: it wraps, whatever it is
		l.widths[0] = max(1, room)
		return true
	}
	return false
}

// narrow lays t out within t.Width.
func (t *FitTable) narrow() string {
	l := t.layout()
	var b strings.Builder
	lead := ""
	if l.group {
		lead = strings.Repeat(" ", indent)
	}
	header := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = c.Header
	}
	if len(l.in) > 0 {
		t.writeRow(&b, l, lead, header)
	}
	group := ""
	for n, r := range t.Rows {
		if l.group && (n == 0 || r[0] != group) {
			group = r[0]
			for _, line := range wrapWidth(group, t.Width) {
				b.WriteString(line + "\n")
			}
		}
		if len(l.in) > 0 {
			t.writeRow(&b, l, lead, r)
		}
		// Folded cells go beneath, each "header: value", its own lines
		// indented under the row's.
		for _, i := range l.folded {
			if i >= len(r) || r[i] == "" || r[i] == "-" {
				continue // nothing to say
			}
			under := lead + "    "
			text := t.Columns[i].Header + ": " + strings.ReplaceAll(r[i], "\n", ", ")
			for _, line := range wrapHanging(text, t.Width-textWidth(under), 2) {
				b.WriteString(under + line + "\n")
			}
		}
	}
	return b.String()
}

// writeRow writes the cells of r that l keeps in the row, each padded to
// its width as its column aligns; a cell of several lines (or wrapped)
// makes the row as many lines.
func (t *FitTable) writeRow(b *strings.Builder, l narrowLayout, lead string, r []string) {
	cells := make([][]string, len(l.in))
	height := 1
	for p, i := range l.in {
		cell := ""
		if i < len(r) {
			cell = r[i]
		}
		for _, line := range strings.Split(cell, "\n") {
			cells[p] = append(cells[p], wrapWidth(line, l.widths[p])...)
		}
		height = max(height, len(cells[p]))
	}
	for k := range height {
		var line strings.Builder
		line.WriteString(lead)
		for p, i := range l.in {
			if p > 0 {
				line.WriteString(strings.Repeat(" ", gap))
			}
			s := ""
			if k < len(cells[p]) {
				s = cells[p][k]
			}
			pad := strings.Repeat(" ", max(0, l.widths[p]-textWidth(s)))
			if t.Columns[i].Align == tw.AlignRight {
				line.WriteString(pad + s)
			} else {
				line.WriteString(s + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// textWidth is the columns s takes on a terminal: one per rune, as every
// symbol a report prints (µ, ±, ←, …) is one column wide.
func textWidth(s string) int { return utf8.RuneCountInString(s) }

// wrapWidth breaks s at spaces into lines of at most width columns; a
// word longer than a line is cut. A width of 0 or less is unlimited.
func wrapWidth(s string, width int) []string { return wrapHanging(s, width, 0) }

// wrapHanging breaks s at spaces into lines of at most width columns,
// the lines after the first indented by hang spaces (at most half the
// width). The spaces within a line are kept as s has them, so a padded
// label stays padded; a word longer than a line is cut. A width of 0 or
// less is unlimited.
func wrapHanging(s string, width, hang int) []string {
	if width <= 0 || textWidth(s) <= width {
		return []string{s}
	}
	pad := strings.Repeat(" ", min(hang, width/2))
	var lines []string
	line, fresh := "", true // fresh: nothing but the indent on the line yet
	rest := s
	for rest != "" {
		word := strings.TrimLeft(rest, " ")
		space := rest[:len(rest)-len(word)]
		if end := strings.IndexByte(word, ' '); end >= 0 {
			word, rest = word[:end], word[end:]
		} else {
			rest = ""
		}
		if word == "" {
			break
		}
		if !fresh && textWidth(line)+textWidth(space)+textWidth(word) > width {
			lines = append(lines, line)
			line, fresh, space = pad, true, ""
		}
		if fresh && len(lines) > 0 {
			space = ""
		}
		for textWidth(line)+textWidth(space)+textWidth(word) > width {
			// Only a word too long for a line of its own gets here.
			cut := []rune(word)
			n := max(1, width-textWidth(line)-textWidth(space))
			lines = append(lines, line+space+string(cut[:n]))
			line, space, word = pad, "", string(cut[n:])
		}
		line += space + word
		fresh = false
	}
	if !fresh || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// NewTable returns the house terminal table: plain ASCII borders (they
// survive CI logs and copy-paste), headers as written, one alignment per
// column.
func NewTable(w io.Writer, align ...tw.Align) *tablewriter.Table {
	return tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
}

// Column alignments, short names for table layouts.
const (
	left  = tw.AlignLeft
	right = tw.AlignRight
)
