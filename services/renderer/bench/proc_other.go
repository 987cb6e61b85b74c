//go:build !unix

package bench

import "os/exec"

// killGroupOnCancel leaves cmd's default: its context ending kills Chromium
// itself.
func killGroupOnCancel(*exec.Cmd) {}
