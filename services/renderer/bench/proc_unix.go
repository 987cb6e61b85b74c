//go:build unix

package bench

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel starts cmd in a process group of its own and kills the
// whole group when cmd's context ends: killing Chromium alone leaves its
// renderer and utility processes behind.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
