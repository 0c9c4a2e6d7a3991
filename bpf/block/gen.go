package block

//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror" -target bpfel -no-global-types block block.bpf.c -- -I../include
