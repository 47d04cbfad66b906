package e2e

import (
	"os"
	"syscall"
)

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

// killTree kills a process and its group; for tasks orphaned by a test.
func killTree(pid int) {
	if pid <= 0 {
		return
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGKILL)
}
