package proc

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	line := "4242 (a) b) (c) S 17 4242 4242 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n"
	st, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{Comm: "a) b) (c", State: 'S', PPID: 17, StartTime: 987654}
	if st != want {
		t.Errorf("ParseStat = %+v, want %+v", st, want)
	}
	for _, bad := range []string{"", "4242 a S 1", "4242 (a) S 1 2 3", "4242 (a) S x 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 0 0 1 0 5"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) took it", bad)
		}
	}
}

func TestReadStatOfSelf(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPID != os.Getppid() || st.StartTime == 0 || st.Exited() {
		t.Errorf("ReadStat(self) = %+v; parent %d", st, os.Getppid())
	}
	if _, err := ReadStat(-1); err == nil {
		t.Error("ReadStat(-1) took it")
	}
}
