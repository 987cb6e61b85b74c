//go:build race

package mcp

// raceBuild makes the tests build distill with the race detector when they
// run under it: the packages are then compiled once for both.
const raceBuild = true
