//go:build unix && !linux

package render

import "syscall"

// sysProcAttr puts Chromium in a process group of its own. Only Linux can
// have the kernel kill it when this process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
