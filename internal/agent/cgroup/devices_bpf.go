package cgroup

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On cgroup v2 device access is decided by eBPF programs of type
// BPF_PROG_TYPE_CGROUP_DEVICE attached to the cgroup and its ancestors:
// the kernel runs every one on each open or mknod of a device node and
// refuses it when one returns 0. attachDeviceFilter loads a program that
// returns 0 for the task's denied devices and 1 for everything else, and
// attaches it to the task's cgroup with BPF_F_ALLOW_MULTI, so it adds to
// what the ancestors decide. The attachment lives as long as the cgroup:
// the program needs no file descriptor kept open, survives the agent's
// restart, and goes when Remove deletes the directory.

// bpfInsn is one eBPF instruction (struct bpf_insn).
type bpfInsn struct {
	code uint8
	regs uint8 // dst in the low four bits, src in the high four
	off  int16
	imm  int32
}

// eBPF opcodes used here (linux/bpf_common.h, linux/bpf.h).
const (
	opLdxMemW   = 0x61 // BPF_LDX | BPF_MEM | BPF_W
	opAnd32Imm  = 0x54 // BPF_ALU | BPF_AND | BPF_K
	opJneImm    = 0x55 // BPF_JMP | BPF_JNE | BPF_K
	opMov64Imm  = 0xb7 // BPF_ALU64 | BPF_MOV | BPF_K
	opExit      = 0x95 // BPF_JMP | BPF_EXIT
	devTypeBlk  = 1    // BPF_DEVCG_DEV_BLOCK
	devTypeChar = 2    // BPF_DEVCG_DEV_CHAR
)

// deviceFilterProgram returns the instructions: r1 points at struct
// bpf_cgroup_dev_ctx {u32 access_type; u32 major; u32 minor}, the type in
// access_type's low 16 bits.
func deviceFilterProgram(deny []DeviceRule) []bpfInsn {
	prog := []bpfInsn{
		{code: opLdxMemW, regs: 2 | 1<<4, off: 0}, // r2 = ctx->access_type
		{code: opAnd32Imm, regs: 2, imm: 0xffff},  // r2 &= 0xffff: the device type
		{code: opLdxMemW, regs: 3 | 1<<4, off: 4}, // r3 = ctx->major
		{code: opLdxMemW, regs: 4 | 1<<4, off: 8}, // r4 = ctx->minor
	}
	for _, r := range deny {
		typ := int32(devTypeChar)
		if r.Type == 'b' {
			typ = devTypeBlk
		}
		prog = append(prog,
			bpfInsn{code: opJneImm, regs: 2, off: 4, imm: typ},
			bpfInsn{code: opJneImm, regs: 3, off: 3, imm: int32(r.Major)},
			bpfInsn{code: opJneImm, regs: 4, off: 2, imm: int32(r.Minor)},
			bpfInsn{code: opMov64Imm, regs: 0, imm: 0}, // denied
			bpfInsn{code: opExit},
		)
	}
	return append(prog, bpfInsn{code: opMov64Imm, regs: 0, imm: 1}, bpfInsn{code: opExit})
}

func encodeInsns(prog []bpfInsn) []byte {
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = append(out, in.code, in.regs)
		out = binary.LittleEndian.AppendUint16(out, uint16(in.off))
		out = binary.LittleEndian.AppendUint32(out, uint32(in.imm))
	}
	return out
}

// bpfProgLoadAttr is the head of union bpf_attr for BPF_PROG_LOAD.
type bpfProgLoadAttr struct {
	progType    uint32
	insnCnt     uint32
	insns       uint64
	license     uint64
	logLevel    uint32
	logSize     uint32
	logBuf      uint64
	kernVersion uint32
	progFlags   uint32
}

// bpfProgAttachAttr is union bpf_attr for BPF_PROG_ATTACH.
type bpfProgAttachAttr struct {
	targetFD     uint32
	attachBPFFD  uint32
	attachType   uint32
	attachFlags  uint32
	replaceBPFFD uint32
}

// attachDeviceFilter denies the rules to every process of the v2 cgroup
// at dir (and of its descendants).
func attachDeviceFilter(dir string, deny []DeviceRule) error {
	code := encodeInsns(deviceFilterProgram(deny))
	license := []byte("Apache-2.0\x00")
	load := func(logBuf []byte) (int, error) {
		attr := bpfProgLoadAttr{
			progType: unix.BPF_PROG_TYPE_CGROUP_DEVICE,
			insnCnt:  uint32(len(code) / 8),
			insns:    uint64(uintptr(unsafe.Pointer(&code[0]))),
			license:  uint64(uintptr(unsafe.Pointer(&license[0]))),
		}
		if len(logBuf) > 0 {
			attr.logLevel, attr.logSize = 1, uint32(len(logBuf))
			attr.logBuf = uint64(uintptr(unsafe.Pointer(&logBuf[0])))
		}
		fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_LOAD, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
		runtime.KeepAlive(code)
		runtime.KeepAlive(license)
		runtime.KeepAlive(logBuf)
		if errno != 0 {
			return -1, errno
		}
		return int(fd), nil
	}
	prog, err := load(nil)
	if err != nil {
		logBuf := make([]byte, 1<<16)
		if _, err2 := load(logBuf); err2 != nil {
			return fmt.Errorf("load device filter for %s: %w (verifier: %s)", dir, err, cString(logBuf))
		}
		return fmt.Errorf("load device filter for %s: %w", dir, err)
	}
	defer unix.Close(prog)
	cg, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open cgroup %s: %w", dir, err)
	}
	defer unix.Close(cg)
	attr := bpfProgAttachAttr{
		targetFD:    uint32(cg),
		attachBPFFD: uint32(prog),
		attachType:  unix.BPF_CGROUP_DEVICE,
		attachFlags: unix.BPF_F_ALLOW_MULTI,
	}
	if _, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_ATTACH, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr)); errno != 0 {
		return fmt.Errorf("attach device filter to %s: %w", dir, errno)
	}
	return nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
