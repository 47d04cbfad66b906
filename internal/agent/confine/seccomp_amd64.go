package confine

import "golang.org/x/sys/unix"

// auditArch is AUDIT_ARCH_X86_64; x32Bit marks x32 system call numbers,
// a second ABI a filter written for x86-64 must not let through.
const (
	auditArch = unix.AUDIT_ARCH_X86_64
	x32Bit    = 0x40000000
)

// archDeniedSyscalls exist on x86-64 only: port I/O and obsolete calls.
var archDeniedSyscalls = []uintptr{
	unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_USELIB, unix.SYS__SYSCTL,
	unix.SYS_CREATE_MODULE, unix.SYS_NFSSERVCTL,
}
