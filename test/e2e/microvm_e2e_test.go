package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers/microvm/ocitest"
)

const microVMWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: %s
spec:
  groups:
    - name: main
      restartPolicy: {mode: never}
      tasks:
        - name: vm
          driver: microvm
          image: oci-archive:%s
          command: ["/bin/sh", "-c", "echo hello from a micro-VM on $(uname -r); sleep 3; exit %d"]
          resources: {cpu: 1, memory: 160Mi}
`

// needMicroVMHost skips, saying what is missing, on a host that cannot boot
// micro-VMs; CI installs qemu-system-x86, linux-image-cloud-amd64 and
// busybox-static, so there it runs.
func needMicroVMHost(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("no qemu-system-x86_64 (apt-get install qemu-system-x86)")
	}
	if k, _ := filepath.Glob("/boot/vmlinuz-*"); len(k) == 0 {
		t.Skip("no guest kernel in /boot (apt-get install linux-image-cloud-amd64)")
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("no /bin/busybox (apt-get install busybox-static)")
	}
}

// TestMicroVMWorkloadRunsInACell: a workload with driver microvm boots a
// guest from an OCI archive on a node whose agent offers the driver (the
// node says so, and which accelerator, in `strata nodes`), its console is
// its log, and its exit code, 0 or not, is the task's.
func TestMicroVMWorkloadRunsInACell(t *testing.T) {
	needMicroVMHost(t)
	layer, err := ocitest.BusyboxLayer("/bin/busybox")
	if err != nil {
		t.Fatal(err)
	}
	image := filepath.Join(t.TempDir(), "busybox.oci.tar")
	if err := ocitest.WriteArchive(image, ocitest.Image{Layers: []ocitest.Layer{layer}}); err != nil {
		t.Fatal(err)
	}
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")

	n := c.node("n1")
	if n.Labels["driver.microvm"] != "1" || n.Labels["microvm.accel"] == "" {
		t.Fatalf("node labels %v do not advertise the micro-VM driver and its accelerator", n.Labels)
	}
	accel := n.Labels["microvm.accel"]
	if out := c.mustStrata("nodes"); !strings.Contains(out, "microvm.accel="+accel) {
		t.Errorf("strata nodes does not show the accelerator:\n%s", out)
	}

	for _, tc := range []struct {
		name string
		code int
	}{{"vm-ok", 0}, {"vm-fails", 5}} {
		c.mustStrata("run", "-f", c.writeSpec(tc.name, fmt.Sprintf(microVMWorkload, tc.name, image, tc.code)))
		// The console is the log: read it while the guest runs (a failed
		// allocation is replaced and its directory goes with it).
		c.eventually(4*time.Minute, tc.name+" logs the guest's output", func() error {
			for _, a := range c.allocs(tc.name) {
				if out, _, _ := c.strata("logs", a.ID); strings.Contains(out, "hello from a micro-VM on 6.") {
					return nil
				}
			}
			return fmt.Errorf("no guest output in %s's logs yet", tc.name)
		})
		var done *api.Allocation
		c.eventually(time.Minute, tc.name+" ends", func() error {
			for _, a := range c.allocs(tc.name) {
				if a.Terminal() {
					done = a
					return nil
				}
			}
			return fmt.Errorf("%s still runs", tc.name)
		})
		ts := done.TaskStates["vm"]
		if ts == nil || ts.ExitCode != tc.code {
			t.Fatalf("%s: task state %+v, want exit code %d", tc.name, ts, tc.code)
		}
		wantStatus := api.AllocComplete
		if tc.code != 0 {
			wantStatus = api.AllocFailed
		}
		if done.ClientStatus != wantStatus {
			t.Errorf("%s: allocation %s, want %s", tc.name, done.ClientStatus, wantStatus)
		}
	}
}
