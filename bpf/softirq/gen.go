package softirq

//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror" -target bpfel -no-global-types softirq softirq.bpf.c -- -I../include
