package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// otherUser is the uid and gid of a local user who is not root: nobody.
const otherUser = 65534

// asOtherUser runs the shell script as otherUser, as that user would on
// this machine.
func asOtherUser(t *testing.T, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUser, Gid: otherUser}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as uid %d: %s: %v\n%s", otherUser, script, err, out)
	}
}

// sharedTmp returns a root-owned directory of mode 01777, as /tmp is,
// that otherUser can reach.
func sharedTmp(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(base), base} {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(d, st.Mode().Perm()|0o005)
		}
	}
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	return tmp
}

// TestRootWritesThroughNoUsersLink: links a local user made in a
// directory of theirs (not only in a sticky one) are not followed by
// root's merge -o, baseline save, a report file or a history store's
// records; root's files they name stay as they were, and nothing is
// made under root's directories. Once, each of these wrote there.
func TestRootWritesThroughNoUsersLink(t *testing.T) {
	testenv.Need(t, testenv.Root) // the attack is on root's writes
	tmp := sharedTmp(t)
	rootDir := t.TempDir()
	victim := filepath.Join(rootDir, "root-owned")
	if err := os.WriteFile(victim, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, t.TempDir(), "good.json")
	d := filepath.Join(tmp, "d")
	asOtherUser(t, fmt.Sprintf(`mkdir %[1]s %[1]s/hist
ln -s %[2]s %[1]s/out.json
ln -s %[3]s %[1]s/store
ln -s %[3]s %[1]s/hist/records
ln -s %[3]s %[1]s/hist/summaries`, d, victim, rootDir))
	for _, args := range [][]string{
		{"merge", good, "-o", filepath.Join(d, "out.json")},
		{"compare", good, good, "--format", "text=" + filepath.Join(d, "out.json")},
		{"baseline", "save", good, filepath.Join(d, "store")},
		{"baseline", "save", good, filepath.Join(d, "store", "sub")},
		{"history", "add", filepath.Join(d, "hist"), good, "--commit", strings.Repeat("ab", 20)},
	} {
		code, _, stderr := cli(args...)
		if code != exitUsage || !strings.Contains(stderr, "belongs to uid 65534") {
			t.Errorf("tailgate %s: exit %d, stderr %q; want 2 naming the user's link", strings.Join(args, " "), code, stderr)
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "secret" {
		t.Errorf("%s holds %q, %v; want it untouched", victim, b, err)
	}
	if ents, _ := os.ReadDir(rootDir); len(ents) != 1 {
		t.Errorf("root's directory now holds %v; want root-owned alone", ents)
	}
}

// TestReplacedFileIsRoots: -o onto a local user's file of mode 0666 in a
// shared directory leaves root's Result there, of mode 0644, not a file
// the user can still edit.
func TestReplacedFileIsRoots(t *testing.T) {
	testenv.Need(t, testenv.Root) // the attack is on root's writes
	tmp := sharedTmp(t)
	f := filepath.Join(tmp, "f")
	asOtherUser(t, fmt.Sprintf("umask 0; echo theirs > %s", f))
	good := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, t.TempDir(), "good.json")
	if code, _, stderr := cli("merge", good, "-o", f); code != exitPass {
		t.Fatalf("merge -o %s: exit %d\n%s", f, code, stderr)
	}
	st, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Sys().(*syscall.Stat_t); s.Uid != 0 || st.Mode().Perm() != 0o644 {
		t.Errorf("%s: uid %d, mode %v; want root's, 0644", f, s.Uid, st.Mode().Perm())
	}
}
