package confine

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// AllowedCaps is the capability allow-list: the only capabilities a task
// may ever hold. A task running as root keeps exactly these; a task running
// as any other user holds none, and cannot gain these through a set-uid
// binary or file capabilities (no_new_privs). Absent on purpose, among
// others: CAP_SYS_ADMIN (mount, namespaces), CAP_SYS_PTRACE, CAP_SYS_MODULE,
// CAP_NET_ADMIN, CAP_NET_RAW, CAP_MKNOD, CAP_SYS_RAWIO, CAP_SYS_TIME,
// CAP_DAC_READ_SEARCH (open_by_handle_at) and CAP_SYS_RESOURCE.
var AllowedCaps = []Cap{
	{unix.CAP_CHOWN, "CAP_CHOWN"},
	{unix.CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE"},
	{unix.CAP_FOWNER, "CAP_FOWNER"},
	{unix.CAP_FSETID, "CAP_FSETID"},
	{unix.CAP_KILL, "CAP_KILL"},
	{unix.CAP_SETGID, "CAP_SETGID"},
	{unix.CAP_SETUID, "CAP_SETUID"},
	{unix.CAP_SETPCAP, "CAP_SETPCAP"},
	{unix.CAP_NET_BIND_SERVICE, "CAP_NET_BIND_SERVICE"},
	{unix.CAP_SYS_CHROOT, "CAP_SYS_CHROOT"},
	{unix.CAP_AUDIT_WRITE, "CAP_AUDIT_WRITE"},
	{unix.CAP_SETFCAP, "CAP_SETFCAP"},
}

// Cap is one Linux capability.
type Cap struct {
	Number int
	Name   string
}

// AllowedMask is AllowedCaps as a bit mask (bit n is capability n).
func AllowedMask() uint64 {
	var m uint64
	for _, c := range AllowedCaps {
		m |= 1 << uint(c.Number)
	}
	return m
}

// lastCap is the highest capability the running kernel knows.
func lastCap() int {
	data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			return n
		}
	}
	return unix.CAP_LAST_CAP
}

// LimitBoundingSet drops every capability outside AllowedCaps from the
// calling thread's bounding set and clears its ambient set. It needs
// CAP_SETPCAP, so it runs before the thread gives up root.
func LimitBoundingSet() error {
	allowed := AllowedMask()
	for c := 0; c <= lastCap(); c++ {
		if c < 64 && allowed&(1<<uint(c)) != 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	return nil
}

// SetCaps sets the calling thread's effective and permitted sets to mask
// and clears its inheritable set. A root task calls it with AllowedMask(),
// any other task with 0 (after setuid, which already emptied them).
func SetCaps(mask uint64) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	data[0].Effective, data[1].Effective = uint32(mask), uint32(mask>>32)
	data[0].Permitted, data[1].Permitted = uint32(mask), uint32(mask>>32)
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("set capabilities to %#x: %w", mask, err)
	}
	return nil
}

// SetNoNewPrivs makes execve unable to grant privileges: set-uid bits and
// file capabilities are ignored from now on, for the task and every
// process it starts. It is also what lets an unprivileged thread load a
// seccomp filter.
func SetNoNewPrivs() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return nil
}
