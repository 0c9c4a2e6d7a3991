package request

//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror" -target bpfel -no-global-types request request.bpf.c -- -I../include
