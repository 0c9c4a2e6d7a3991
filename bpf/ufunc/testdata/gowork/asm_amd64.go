package main

// undecodable, forever and asmret are in assembly (asm_amd64.s), for
// the tests of what ufunc refuses; never called.
func undecodable()
func forever()
func asmret()

var refused = []func(){undecodable, forever, asmret}
