package tracing

import "testing"

func TestCheckCPUs(t *testing.T) {
	for _, tt := range []struct {
		name string
		cpus []int
		err  string
	}{
		{"none", nil, ""},
		{"some", []int{0, 3, 1023}, ""},
		{"negative", []int{-1}, "CPU -1 out of range 0-1023"},
		{"beyond", []int{1024}, "CPU 1024 out of range 0-1023"},
		{"twice", []int{1, 1}, "CPU 1 listed twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckCPUs(tt.cpus)
			if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}
