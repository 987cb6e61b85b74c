package render

import "syscall"

// sysProcAttr puts Chromium in a process group of its own and has the
// kernel kill it when this process dies. The signal is tied to the thread
// that started it: the Go runtime keeps its threads, and no goroutine here
// locks one and exits.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
