package cgroup

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// DeviceRule is one device node a task must not open: its type ('c' for
// a character device, 'b' for a block device) and numbers.
type DeviceRule struct {
	Type  byte
	Major uint32
	Minor uint32
}

// String is the rule as the v1 devices controller reads it, with every
// access (read, write, mknod): "c 195:1 rwm".
func (r DeviceRule) String() string {
	return fmt.Sprintf("%c %d:%d rwm", r.Type, r.Major, r.Minor)
}

// DeviceRuleOf stats the device node at path. A path that does not exist
// is no error: ok is false (nothing to deny); a path that is not a device
// node is an error, since a rule for it would deny nothing.
func DeviceRuleOf(path string) (rule DeviceRule, ok bool, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		if os.IsNotExist(err) {
			return DeviceRule{}, false, nil
		}
		return DeviceRule{}, false, fmt.Errorf("stat device %s: %w", path, err)
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFCHR:
		rule.Type = 'c'
	case syscall.S_IFBLK:
		rule.Type = 'b'
	default:
		return DeviceRule{}, false, fmt.Errorf("device %s: not a device node", path)
	}
	rule.Major, rule.Minor = unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))
	return rule, true, nil
}

// DeviceRulesOf stats every path (DeviceRuleOf), skipping those that do
// not exist and repeated rules.
func DeviceRulesOf(paths []string) ([]DeviceRule, error) {
	var out []DeviceRule
	for _, p := range paths {
		r, ok, err := DeviceRuleOf(p)
		if err != nil {
			return nil, err
		}
		if ok && !containsRule(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func containsRule(rules []DeviceRule, r DeviceRule) bool {
	for _, x := range rules {
		if x == r {
			return true
		}
	}
	return false
}

// applyDevicesV1 writes each rule to the group's devices.deny: the
// group keeps its parent's allow-all default with these as exceptions,
// so the task keeps /dev/null, ttys and the rest, and loses exactly the
// devices of the node it was not given.
func (g *v1Group) applyDevicesV1(lim Limits) error {
	dir := g.dir("devices")
	if !exists(dir) {
		if len(lim.DenyDevices) > 0 {
			return fmt.Errorf("deny devices for %s: %w", g.rel, ErrNoDeviceControl)
		}
		return nil
	}
	for _, r := range lim.DenyDevices {
		if err := writeFile(dir, "devices.deny", r.String()); err != nil {
			return err
		}
	}
	return nil
}

// ErrNoDeviceControl is returned by Create when a task must be denied
// devices and a cgroup v1 host has no devices hierarchy to do it with. On
// cgroup v2 Create attaches an eBPF device filter (devices_bpf.go).
var ErrNoDeviceControl = fmt.Errorf("no devices controller")

// DeviceControl reports whether groups of version v under root enforce
// Limits.DenyDevices: v2 always (an eBPF program; Create fails when the
// kernel refuses it), v1 when the devices hierarchy is mounted.
func DeviceControl(v Version, root string) bool {
	return v == V2 || (v == V1 && exists(root+"/devices"))
}
