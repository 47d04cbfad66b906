package confine

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Seccomp return actions and the offsets of struct seccomp_data fields.
const (
	retAllow        = 0x7fff0000 // SECCOMP_RET_ALLOW
	retErrno        = 0x00050000 // SECCOMP_RET_ERRNO | errno
	retKillProcess  = 0x80000000 // SECCOMP_RET_KILL_PROCESS
	offsetNr        = 0
	offsetArch      = 4
	offsetArg0Low   = 16 // args[0], low 32 bits (little-endian)
	seccompSetModeF = 1  // SECCOMP_SET_MODE_FILTER
)

// namespaceFlags are the clone(2) flags that create namespaces: a task
// may not make new ones (user namespaces above all, the kernel's widest
// attack surface for an unprivileged caller).
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME

// deniedSyscalls fail with EPERM under the default profile: they load
// kernel code, change the machine's clock, mounts, swap or keyrings, read
// the kernel log, open files by handle, trace or read other processes'
// memory, enter or create namespaces, or open the kernel's most exploited
// interfaces (bpf, perf_event_open, userfaultfd, io_uring: its queued
// operations run in the kernel where this filter never sees them).
// Everything else is allowed; capabilities and the unprivileged user are
// the first line.
var deniedSyscalls = append([]uintptr{
	unix.SYS_ACCT, unix.SYS_ADD_KEY, unix.SYS_BPF, unix.SYS_CLOCK_ADJTIME,
	unix.SYS_CLOCK_SETTIME, unix.SYS_DELETE_MODULE, unix.SYS_FINIT_MODULE,
	unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSOPEN, unix.SYS_FSPICK,
	unix.SYS_INIT_MODULE, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER, unix.SYS_IO_URING_SETUP,
	unix.SYS_KEXEC_FILE_LOAD, unix.SYS_KEXEC_LOAD,
	unix.SYS_KEYCTL, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_MOUNT, unix.SYS_MOUNT_SETATTR,
	unix.SYS_MOVE_MOUNT, unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT,
	unix.SYS_OPEN_TREE, unix.SYS_PERF_EVENT_OPEN, unix.SYS_PIVOT_ROOT,
	unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PTRACE,
	unix.SYS_QUOTACTL, unix.SYS_REBOOT, unix.SYS_REQUEST_KEY, unix.SYS_SETNS,
	unix.SYS_SETTIMEOFDAY, unix.SYS_SWAPOFF, unix.SYS_SWAPON, unix.SYS_SYSLOG,
	unix.SYS_UMOUNT2, unix.SYS_UNSHARE, unix.SYS_USERFAULTFD, unix.SYS_VHANGUP,
}, archDeniedSyscalls...)

// DefaultProfile is the default seccomp filter as a BPF program: a foreign
// architecture (or the x32 ABI) kills the process, a denied system call
// fails with EPERM, clone3 fails with ENOSYS (its flags sit behind a
// pointer a filter cannot read, so C libraries fall back to clone, whose
// namespace flags are checked), clone with a namespace flag fails with
// EPERM, and everything else is allowed.
func DefaultProfile() []unix.SockFilter {
	var prog []unix.SockFilter
	stmt := func(code uint16, k uint32) { prog = append(prog, unix.SockFilter{Code: code, K: k}) }
	// Jumps are patched once the return instructions' places are known.
	type jump struct {
		at     int
		target *int
	}
	var jumps []jump
	var allow, deny, enosys, kill int
	jumpTo := func(code uint16, k uint32, target *int) {
		jumps = append(jumps, jump{at: len(prog), target: target})
		stmt(code, k)
	}
	const (
		ldAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		retK   = unix.BPF_RET | unix.BPF_K
		jumpTf = 1 // jump taken on true
	)
	stmt(ldAbs, offsetArch)
	// jeq arch: fall through when equal, else kill.
	prog = append(prog, unix.SockFilter{Code: jeq, K: auditArch, Jt: 1})
	jumpTo(unix.BPF_JMP|unix.BPF_JA, 0, &kill)
	stmt(ldAbs, offsetNr)
	if x32Bit != 0 {
		jumpTo(jge, x32Bit, &kill)
	}
	for _, nr := range deniedSyscalls {
		jumpTo(jeq, uint32(nr), &deny)
	}
	jumpTo(jeq, uint32(unix.SYS_CLONE3), &enosys)
	// clone: load its flags and refuse namespace flags.
	prog = append(prog, unix.SockFilter{Code: jeq, K: uint32(unix.SYS_CLONE), Jf: 2})
	stmt(ldAbs, offsetArg0Low)
	jumpTo(jset, namespaceFlags, &deny)
	allow = len(prog)
	stmt(retK, retAllow)
	deny = len(prog)
	stmt(retK, retErrno|uint32(unix.EPERM))
	enosys = len(prog)
	stmt(retK, retErrno|uint32(unix.ENOSYS))
	kill = len(prog)
	stmt(retK, retKillProcess)
	_ = allow
	for _, j := range jumps {
		off := *j.target - (j.at + 1)
		if off > 255 {
			panic(fmt.Sprintf("seccomp: jump of %d instructions", off))
		}
		if prog[j.at].Code == unix.BPF_JMP|unix.BPF_JA {
			prog[j.at].K = uint32(off)
		} else {
			prog[j.at].Jt = uint8(off)
		}
	}
	return prog
}

// LoadDefaultProfile installs DefaultProfile on the calling thread. It
// needs no_new_privs (or CAP_SYS_ADMIN) and is inherited across execve and
// by every child.
func LoadDefaultProfile() error {
	prog := DefaultProfile()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, seccompSetModeF, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("load seccomp profile: %w", errno)
	}
	return nil
}
