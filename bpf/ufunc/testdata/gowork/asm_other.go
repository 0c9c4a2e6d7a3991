//go:build !amd64

package main

var refused = []func(){func() {}}
