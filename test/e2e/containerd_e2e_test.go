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

// TestMLInferenceExampleRunsInContainerd runs the seed's own example,
// examples/ml-inference.yaml, unchanged. Before the containerd driver its
// image-only task was placed on nodes that could not run it and failed 16
// times. Now: with only a node without the driver, the workload waits with
// the reason in `strata status`; a node with containerd (and the image,
// built here from busybox and preloaded as an operator would) runs it, with
// its limits, its logs and its GPU; the agent's restart does not restart
// it; stopping it removes the container.
func TestMLInferenceExampleRunsInContainerd(t *testing.T) {
	socket := ctrtest.Socket(t) // skips unless root with containerd and runc
	ns := ctrtest.Namespace(t, socket)
	archive := ctrtest.BusyboxArchiveWith(t, ctrtest.ImageOptions{
		User: "65534:65534",
		Cmd:  []string{"/bin/sh", "-c", `trap "exit 0" TERM; echo "inference-engine serving with gpu $NVIDIA_VISIBLE_DEVICES"; while true; do sleep 1; done`},
	})
	ctrtest.Load(t, socket, ns, archive, "custom-ml-image:v2.1")

	// Both nodes have a GPU (a fake nvidia-smi on the agents' PATH) and
	// satisfy the example's constraints; only one offers containerd.
	bin := t.TempDir()
	smi := "#!/bin/sh\necho '0, GPU-e2e-0, NVIDIA A100-SXM4-80GB, 81920, 00000000:07:00.0'\n"
	if err := os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte(smi), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	fits := []string{"--label", "datacenter=us-east-4", "--cpu-total", "16", "--memory-total", "128GiB", "--bandwidth-total", "200Gbps"}

	c := newCell(t, 10*time.Second)
	c.startAgent("plain", fits...)
	example := filepath.Join(repoRoot(t), "examples", "ml-inference.yaml")
	c.mustStrata("run", "-f", example)
	c.eventually(30*time.Second, "the reason in strata status", func() error {
		out, _, _ := c.strata("status", "my-ml-inference")
		if !strings.Contains(out, "no driver containerd") {
			return fmt.Errorf("status:\n%s", out)
		}
		return nil
	})
	if n := len(c.allocs("my-ml-inference")); n != 0 {
		t.Fatalf("%d allocations on a node without containerd", n)
	}

	ctrArgs := append([]string{"--containerd-socket", socket, "--containerd-namespace", ns}, fits...)
	c.startAgent("ctr", ctrArgs...)
	var alloc *api.Allocation
	c.eventually(60*time.Second, "the example running on the containerd node", func() error {
		run := runningAllocs(c.allocs("my-ml-inference"))
		if len(run) != 1 {
			out, _, _ := c.strata("status", "my-ml-inference")
			return fmt.Errorf("running %d\n%s", len(run), out)
		}
		alloc = run[0]
		return nil
	})
	if alloc.NodeName != "ctr" {
		t.Fatalf("placed on %s, want ctr", alloc.NodeName)
	}
	ts := alloc.TaskStates["inference-engine"]
	if got := memoryLimitOf(t, ts.PID); got != 64<<30 {
		t.Fatalf("container memory limit %d, want 64GiB", got)
	}
	c.eventually(20*time.Second, "the task's log", func() error {
		out, _, _ := c.strata("logs", alloc.ID)
		if !strings.Contains(out, "inference-engine serving with gpu GPU-e2e-0") {
			return fmt.Errorf("logs: %q", out)
		}
		return nil
	})

	// The agent dies and comes back: same process, no restart.
	c.kill(c.agents["ctr"])
	c.startAgent("ctr", ctrArgs...)
	c.eventually(30*time.Second, "the task re-attached", func() error {
		for _, a := range c.allocs("my-ml-inference") {
			if a.ID != alloc.ID {
				return fmt.Errorf("a new allocation %s appeared", a.ID)
			}
			got := a.TaskStates["inference-engine"]
			if a.ClientStatus != api.AllocRunning || got.PID != ts.PID || got.Restarts != 0 {
				return fmt.Errorf("status %s pid %d (was %d) restarts %d", a.ClientStatus, got.PID, ts.PID, got.Restarts)
			}
		}
		return nil
	})
	if !pidAlive(ts.PID) {
		t.Fatalf("container process %d died with the agent", ts.PID)
	}

	// An image that cannot be had: the reason reaches strata status while
	// the task retries, then the allocation's failure and the events.
	c.mustStrata("run", "-f", c.writeSpec("badimage", badImageSpec))
	c.eventually(30*time.Second, "the image failure in status, allocs and events", func() error {
		allocs := c.allocs("badimage")
		if len(allocs) != 1 || allocs[0].ClientStatus != api.AllocFailed || !strings.Contains(allocs[0].ClientReason, "image unavailable: oci-archive:/nonexistent/model.tar") {
			return fmt.Errorf("allocs %+v", allocs)
		}
		if events, _, _ := c.strata("events"); !strings.Contains(events, "image unavailable") {
			return fmt.Errorf("events:\n%s", events)
		}
		return nil
	})
	if ids := ctrtest.Containers(t, socket, ns); len(ids) != 1 {
		t.Fatalf("containers %v: want only the example's, nothing of the failed starts", ids)
	}

	c.mustStrata("stop", "my-ml-inference")
	c.eventually(30*time.Second, "the container removed", func() error {
		if ids := ctrtest.Containers(t, socket, ns); len(ids) != 0 {
			return fmt.Errorf("containers left: %v", ids)
		}
		return nil
	})
	for _, a := range c.allocs("my-ml-inference") {
		if got := a.TaskStates["inference-engine"]; got.ExitCode != 0 || got.Failed {
			t.Fatalf("stopped task: %+v, want a clean exit (its TERM trap)", got)
		}
	}
}

const badImageSpec = `
apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: badimage
spec:
  groups:
    - name: main
      restartPolicy: {mode: on-failure, attempts: 1, delay: 100ms}
      placement:
        require:
          - {key: node, op: "=", values: [ctr]}
      tasks:
        - name: model
          driver: containerd
          image: oci-archive:/nonexistent/model.tar
          resources: {cpu: 100m, memory: 32Mi}
`
