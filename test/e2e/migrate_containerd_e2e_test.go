package e2e

import (
	"fmt"
	"os"
	"path/filepath"
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
	c, socket, ns, image := containerCell(t, map[string]string{"n1": criuPath, "n2": criuPath})
	if out := c.mustStrata("nodes"); strings.Count(out, "memory: containerd") != 2 {
		t.Fatalf("strata nodes does not show that both nodes move containers with their memory:\n%s", out)
	}

	a := c.startContainerCounter("boxcount", image)
	source := a.NodeName

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

// containerCell starts a cell and agents named in criuOf (with the criu
// each uses) on one containerd, each agent in its own containerd
// namespace, and returns the cell, the socket, the namespaces and the
// image reference of a busybox image built here.
func containerCell(t *testing.T, criuOf map[string]string) (*cell, string, map[string]string, string) {
	t.Helper()
	socket := ctrtest.Socket(t) // skips unless root with containerd and runc
	image := "oci-archive:" + ctrtest.BusyboxArchive(t)
	c := newCell(t, 10*time.Second)
	ns := map[string]string{}
	for _, n := range []string{"n1", "n2", "n3"} {
		path, ok := criuOf[n]
		if !ok {
			continue
		}
		ns[n] = ctrtest.Namespace(t, socket)
		c.startAgent(n, "--criu-path", path, "--allow-root-tasks", "--containerd-socket", socket, "--containerd-namespace", ns[n])
	}
	return c, socket, ns, image
}

// startContainerCounter runs a counting container that also appends each
// count to a file it keeps open in its writable layer, and waits until it
// has counted to 20.
func (c *cell) startContainerCounter(name, image string) *api.Allocation {
	c.t.Helper()
	loop := `exec 3>>/tmp/count.log; ` + strings.Replace(counterLoop, "echo $i;", "echo $i; echo $i >&3;", 1)
	return c.startCounterSpec(name, fmt.Sprintf(containerCounterSpec, name, image, loop))
}

// TestContainerMoveAbortedRestoresOnSource: the target's runc cannot
// restore (its criu refuses), so the move is aborted and the container is
// restored where it was, with its memory and the file it keeps open in
// its writable layer: it counts on in the same log, without a restart.
func TestContainerMoveAbortedRestoresOnSource(t *testing.T) {
	criuPath := needCriu(t)
	dir := t.TempDir()
	broken := filepath.Join(dir, "criu-no-restore")
	// runc talks to criu as "criu swrk"; only the target restores.
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = swrk ]; then echo 'this criu does not restore' >&2; exit 1; fi\nexec %s \"$@\"\n", criuPath)
	if err := os.WriteFile(broken, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c, socket, _, image := containerCell(t, map[string]string{"n1": criuPath})
	a := c.startContainerCounter("abort", image)
	c.startAgent("n2", "--criu-path", broken, "--allow-root-tasks", "--containerd-socket", socket, "--containerd-namespace", ctrtest.Namespace(t, socket))
	before := c.counts(a.ID)

	out, errOut, code := c.strata("alloc", "migrate", a.ID, "--to", "n2")
	if code == 0 || !strings.Contains(out+errOut, "aborted") {
		t.Fatalf("strata alloc migrate: exit %d\n%s%s", code, out, errOut)
	}
	after := c.alloc(a.ID)
	if after.NodeName != "n1" || after.Migration.Outcome != api.MigrationAborted {
		t.Fatalf("allocation on %s, migration %+v", after.NodeName, after.Migration)
	}
	c.eventually(20*time.Second, "the counter counts on after the abort", func() error {
		n := c.counts(a.ID)
		if len(n) < len(before)+10 {
			return fmt.Errorf("%d lines", len(n))
		}
		return consecutive(n) // the same log: no restart from 1, no gap
	})
	if ts := c.alloc(a.ID).TaskStates["counter"]; ts == nil || ts.Restarts != 0 || !strings.Contains(ts.Message, "restored from its checkpoint") {
		t.Fatalf("task state %+v: want restored from the checkpoint, not restarted", ts)
	}
}

// TestDrainMigratesContainer: draining a node moves its container by live
// migration (nodes keep containers' memory), the same allocation counting
// on on the other node.
func TestDrainMigratesContainer(t *testing.T) {
	criuPath := needCriu(t)
	c, socket, _, image := containerCell(t, map[string]string{"n1": criuPath})
	a := c.startContainerCounter("drained", image)
	c.startAgent("n2", "--criu-path", criuPath, "--allow-root-tasks", "--containerd-socket", socket, "--containerd-namespace", ctrtest.Namespace(t, socket))
	c.drainMovesWithMemory(a, "n1", "n2")
}
