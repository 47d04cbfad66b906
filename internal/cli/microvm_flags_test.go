package cli

import (
	"strings"
	"testing"
)

func TestMicroVMFlags(t *testing.T) {
	out, _, code := runCLI("agent", "--help")
	for _, flag := range []string{"--microvm-kernel", "--microvm-busybox", "--microvm-qemu", "--microvm-accel"} {
		if code != 0 || !strings.Contains(out, flag) {
			t.Errorf("strata agent --help does not document %s", flag)
		}
	}
	_, errOut, code := runCLI("agent", "--servers", "http://127.0.0.1:1", "--data-dir", t.TempDir(), "--microvm-accel", "hvf")
	if code == 0 || !strings.Contains(errOut, `--microvm-accel "hvf": want auto, kvm, tcg or off`) {
		t.Errorf("bad accel: exit %d, stderr %q", code, errOut)
	}
}
