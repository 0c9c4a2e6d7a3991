package main

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestListFitsWidth(t *testing.T) {
	code, stdout, stderr := runInProcess(t, "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if n := utf8.RuneCountInString(line); n > listWidth {
			t.Errorf("%d columns, want at most %d: %s", n, listWidth, line)
		}
	}
	if strings.Contains(stdout, "epoll_wait") {
		t.Errorf("list prints the syscall names; they belong to list syscalls")
	}
}

func TestListSyscalls(t *testing.T) {
	code, stdout, stderr := runInProcess(t, "list", "syscalls")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	names := strings.Fields(stdout)
	for _, want := range []string{"read", "write", "clone"} {
		if !slices.Contains(names, want) {
			t.Errorf("list syscalls lacks %q", want)
		}
	}
	if code, _, _ := runInProcess(t, "list", "nosuch"); code != exitUsage {
		t.Errorf("list nosuch: exit %d, want %d", code, exitUsage)
	}
}
