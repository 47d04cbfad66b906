package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
)

// containerCounterSpec is counterSpec's counter in a container of image.
const containerCounterSpec = `
apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: %s
spec:
  groups:
    - name: main
      replicas: 1
      restartPolicy: {mode: always}
      tasks:
        - name: counter
          driver: containerd
          image: %q
          command: ["/bin/sh", "-c", %q]
          resources: {cpu: 100m, memory: 64Mi}
`

// TestMigrateContainerKeepsMemory: a counter in a container (its own pid,
// mount, ipc and uts namespaces) migrated between two agents that share
// one containerd under different namespaces, as two nodes would have
// their own: it goes on from where it was each time, under the same
// allocation id, and the node it left keeps no container of it.
func TestMigrateContainerKeepsMemory(t *testing.T) {
	criuPath := needCriu(t)
	socket := ctrtest.Socket(t) // skips unless root with containerd and runc
	archive := ctrtest.BusyboxArchive(t)
	ns := map[string]string{"n1": ctrtest.Namespace(t, socket), "n2": ctrtest.Namespace(t, socket)}
	c := newCell(t, 10*time.Second)
	for _, n := range []string{"n1", "n2"} {
		c.startAgent(n, "--criu-path", criuPath, "--allow-root-tasks", "--containerd-socket", socket, "--containerd-namespace", ns[n])
	}
	if out := c.mustStrata("nodes"); strings.Count(out, "memory: containerd") != 2 {
		t.Fatalf("strata nodes does not show that both nodes move containers with their memory:\n%s", out)
	}

	c.mustStrata("run", "-f", c.writeSpec("boxcount", fmt.Sprintf(containerCounterSpec, "boxcount", "oci-archive:"+archive, counterLoop)), "--wait", "--timeout", "90s")
	running := runningAllocs(c.allocs("boxcount"))
	if len(running) != 1 {
		t.Fatalf("want 1 running counter, got %d", len(running))
	}
	a := running[0]
	source := a.NodeName
	c.eventually(20*time.Second, "the counter counts", func() error {
		if n := c.counts(a.ID); len(n) < 20 {
			return fmt.Errorf("%d lines", len(n))
		}
		return nil
	})

	for i, to := range []string{"", source} {
		before := c.counts(a.ID)
		from := c.alloc(a.ID).NodeName
		args := []string{"alloc", "migrate", a.ID}
		if to != "" {
			args = append(args, "--to", to)
		}
		out := c.mustStrata(args...)
		if !strings.Contains(out, "migrated to node") {
			t.Fatalf("move %d: strata alloc migrate said:\n%s", i+1, out)
		}
		moved := c.alloc(a.ID)
		if moved.NodeName == from {
			t.Fatalf("move %d: the allocation is still on %s", i+1, from)
		}
		if m := moved.Migration; m == nil || m.Outcome != api.MigrationCommitted || m.Fallback || m.Report == nil || m.Report.CheckpointBytes <= 0 {
			t.Fatalf("move %d: migration record %+v", i+1, m)
		}
		c.checkContinues(a.ID, before[len(before)-1])
		c.eventually(20*time.Second, "no container left on "+from, func() error {
			if ids := ctrtest.Containers(t, socket, ns[from]); len(ids) != 0 {
				return fmt.Errorf("containers %v", ids)
			}
			return nil
		})
	}
	if got := runningAllocs(c.allocs("boxcount")); len(got) != 1 {
		t.Errorf("%d running allocations after two moves, want 1", len(got))
	}
}
