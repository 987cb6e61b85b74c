// Package mutable holds package-level vars of every kind the rule weighs.
package mutable

var Names = []string{"a"} // want `exported var Names holds a slice`

var Table = map[string]int{"a": 1} // want `exported var Table holds a map`

type Words []string

var Named Words // want `exported var Named holds a slice`

var names = []string{"a"}

var Count = 3

var Array = [2]string{"a", "b"}

// Copy is how a package shares a list: a fresh copy each call.
func Copy() []string { return append([]string(nil), names...) }
