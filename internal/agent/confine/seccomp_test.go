package confine

import (
	"encoding/binary"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"
)

// run interprets prog (the subset of classic BPF the profile uses) on a
// seccomp_data built from arch, nr and the low half of args[0].
func run(t interface{ Fatalf(string, ...any) }, prog []unix.SockFilter, arch, nr, arg0 uint32) uint32 {
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[offsetNr:], nr)
	binary.LittleEndian.PutUint32(data[offsetArch:], arch)
	binary.LittleEndian.PutUint32(data[offsetArg0Low:], arg0)
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			a = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(in.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			pc += int(pick(a == in.K, in.Jt, in.Jf))
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			pc += int(pick(a >= in.K, in.Jt, in.Jf))
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			pc += int(pick(a&in.K != 0, in.Jt, in.Jf))
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unexpected code %#x", pc, in.Code)
		}
	}
	t.Fatalf("program fell off its end")
	return 0
}

func pick(cond bool, jt, jf uint8) uint8 {
	if cond {
		return jt
	}
	return jf
}

func TestDefaultProfileDecisions(t *testing.T) {
	prog := DefaultProfile()
	eperm, enosys := uint32(retErrno|uint32(unix.EPERM)), uint32(retErrno|uint32(unix.ENOSYS))
	tests := []struct {
		name           string
		arch, nr, arg0 uint32
		want           uint32
	}{
		{"read", auditArch, unix.SYS_READ, 0, retAllow},
		{"execve", auditArch, unix.SYS_EXECVE, 0, retAllow},
		{"mount", auditArch, unix.SYS_MOUNT, 0, eperm},
		{"unshare", auditArch, unix.SYS_UNSHARE, 0, eperm},
		{"ptrace", auditArch, unix.SYS_PTRACE, 0, eperm},
		{"bpf", auditArch, unix.SYS_BPF, 0, eperm},
		// io_uring runs operations the filter never sees, and its kernel
		// code is among the most exploited (issue 18 defect 13).
		{"io_uring_setup", auditArch, unix.SYS_IO_URING_SETUP, 0, eperm},
		{"io_uring_enter", auditArch, unix.SYS_IO_URING_ENTER, 0, eperm},
		{"io_uring_register", auditArch, unix.SYS_IO_URING_REGISTER, 0, eperm},
		{"clone3", auditArch, unix.SYS_CLONE3, 0, enosys},
		{"clone for a thread", auditArch, unix.SYS_CLONE, unix.CLONE_VM | unix.CLONE_THREAD | unix.CLONE_SIGHAND, retAllow},
		{"clone for fork", auditArch, unix.SYS_CLONE, uint32(unix.SIGCHLD), retAllow},
		{"clone into a user namespace", auditArch, unix.SYS_CLONE, unix.CLONE_NEWUSER | uint32(unix.SIGCHLD), eperm},
		{"clone into a mount namespace", auditArch, unix.SYS_CLONE, unix.CLONE_NEWNS, eperm},
		{"foreign architecture", auditArch ^ 1, unix.SYS_READ, 0, retKillProcess},
	}
	if x32Bit != 0 {
		tests = append(tests, struct {
			name           string
			arch, nr, arg0 uint32
			want           uint32
		}{"x32 ABI", auditArch, x32Bit | unix.SYS_READ, 0, retKillProcess})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(t, prog, tt.arch, tt.nr, tt.arg0); got != tt.want {
				t.Errorf("decision %#x, want %#x", got, tt.want)
			}
		})
	}
}

// TestDefaultProfileAllowsAllButTheDenied: any other system call number,
// with any argument, is allowed; every denied one fails with EPERM.
func TestDefaultProfileAllowsAllButTheDenied(t *testing.T) {
	prog := DefaultProfile()
	rapid.Check(t, func(rt *rapid.T) {
		nr := rapid.Uint32Range(0, 1023).Draw(rt, "nr")
		arg := rapid.Uint32().Draw(rt, "arg0")
		got := run(rt, prog, auditArch, nr, arg)
		switch {
		case slices.Contains(deniedSyscalls, uintptr(nr)):
			if got != retErrno|uint32(unix.EPERM) {
				rt.Fatalf("denied syscall %d: decision %#x", nr, got)
			}
		case nr == unix.SYS_CLONE || nr == unix.SYS_CLONE3:
		default:
			if got != retAllow {
				rt.Fatalf("syscall %d (arg %#x): decision %#x, want allow", nr, arg, got)
			}
		}
	})
}

func TestAllowedMaskMatchesList(t *testing.T) {
	m := AllowedMask()
	for _, c := range AllowedCaps {
		if m&(1<<uint(c.Number)) == 0 {
			t.Errorf("%s missing from the mask", c.Name)
		}
	}
	for _, forbidden := range []int{unix.CAP_SYS_ADMIN, unix.CAP_SYS_PTRACE, unix.CAP_SYS_MODULE, unix.CAP_NET_ADMIN, unix.CAP_NET_RAW, unix.CAP_DAC_READ_SEARCH} {
		if m&(1<<uint(forbidden)) != 0 {
			t.Errorf("capability %d is in the allow-list", forbidden)
		}
	}
}
