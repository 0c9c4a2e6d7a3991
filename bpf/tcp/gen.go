package tcp

//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror" -target bpfel -no-global-types tcp tcp.bpf.c -- -I../include
