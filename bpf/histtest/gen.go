// Package histtest holds a BPF program that runs the C histogram bucket
// function on demand, for the test that checks C and Go agree.
package histtest

//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror" -target bpfel -no-global-types histtest histtest.bpf.c -- -I../include
