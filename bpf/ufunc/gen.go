package ufunc

//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror" -target bpfel -no-global-types ufunc ufunc.bpf.c -- -I../include
