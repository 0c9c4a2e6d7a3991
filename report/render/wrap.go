package render

// Wrap breaks s at spaces into lines of at most width columns, those
// after the first indented by hang spaces; a width of 0 or less is
// unlimited. For text beside a FitTable that keeps to the same width.
func Wrap(s string, width, hang int) []string { return wrapHanging(s, width, hang) }
