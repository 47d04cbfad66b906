package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

const sleeper = `
apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: %s
spec:
  groups:
    - name: main
      replicas: %d
      tasks:
        - name: sleeper
          command: ["/bin/sh", "-c", "echo started; exec sleep 3600"]
          resources: {cpu: 100m, memory: 48Mi}
`

// TestHelloRunsIsolatedWithLogs submits the README's example and checks
// the real effects: a process, its cgroup memory limit, its logs.
func TestHelloRunsIsolatedWithLogs(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")
	out := c.mustStrata("run", "-f", "examples/hello.yaml", "--wait", "--timeout", "60s")
	if !strings.Contains(out, "running") {
		t.Fatalf("run --wait output: %s", out)
	}
	run := runningAllocs(c.allocs("hello"))
	if len(run) != 1 {
		t.Fatalf("want 1 running allocation, got %d", len(run))
	}
	a := run[0]
	var pid int
	for _, ts := range a.TaskStates {
		pid = ts.PID
	}
	if !pidAlive(pid) {
		t.Fatalf("task pid %d is not alive", pid)
	}
	if got, want := memoryLimitOf(t, pid), a.Resources.MemoryBytes; got != want {
		t.Fatalf("cgroup memory limit = %d, want the request %d", got, want)
	}
	c.eventually(20*time.Second, "logs", func() error {
		out, _, code := c.strata("logs", a.ID[:8])
		if code != 0 || !strings.Contains(out, "hello from strata") {
			return fmt.Errorf("logs exit %d: %q", code, out)
		}
		return nil
	})
	// status and nodes render, as table and as JSON.
	if st := c.mustStrata("status", "hello"); !strings.Contains(st, "running") {
		t.Fatalf("status: %s", st)
	}
	var nodes []*api.Node
	if err := json.Unmarshal([]byte(c.mustStrata("nodes", "-o", "json")), &nodes); err != nil || len(nodes) != 1 || nodes[0].Allocated.MemoryBytes != a.Resources.MemoryBytes {
		t.Fatalf("nodes -o json: %v %+v", err, nodes)
	}
	if ev := c.mustStrata("events", "--workload", "hello"); !strings.Contains(ev, "workload-registered") || !strings.Contains(ev, "placed 1 allocation") {
		t.Fatalf("events do not show the registration and placement:\n%s", ev)
	}
	c.mustStrata("stop", "hello")
	c.eventually(20*time.Second, "task stopped", func() error {
		if pidAlive(pid) {
			return fmt.Errorf("pid %d still alive", pid)
		}
		return nil
	})
}

// TestCrashIsRestartedPerPolicy: a task that exits 1 is restarted twice,
// then its allocation fails with the reason.
func TestCrashIsRestartedPerPolicy(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")
	spec := c.writeSpec("crashy", `
apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: crashy
spec:
  groups:
    - name: main
      restartPolicy: {mode: on-failure, attempts: 2, delay: 100ms, maxDelay: 200ms}
      tasks:
        - name: crash
          command: ["/bin/sh", "-c", "echo boom >&2; exit 3"]
          resources: {cpu: 100m, memory: 32Mi}
`)
	c.mustStrata("run", "-f", spec)
	c.eventually(30*time.Second, "first allocation fails after its restarts", func() error {
		for _, a := range c.allocs("crashy") {
			if a.PreviousAlloc != "" || a.ClientStatus != api.AllocFailed {
				continue
			}
			ts := a.TaskStates["crash"]
			if ts == nil || ts.Restarts != 2 || ts.ExitCode != 3 {
				return fmt.Errorf("task state %+v", ts)
			}
			if !strings.Contains(a.ClientReason, "crash") {
				return fmt.Errorf("reason %q does not name the task", a.ClientReason)
			}
			return nil
		}
		return fmt.Errorf("no failed first allocation yet")
	})
}

// TestServerSIGKILLLosesNothing: kill -9 the server, restart it on its data
// dir; workloads, allocations and nodes are all still there.
func TestServerSIGKILLLosesNothing(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")
	c.mustStrata("run", "-f", c.writeSpec("keep", fmt.Sprintf(sleeper, "keep", 2)), "--wait", "--timeout", "60s")
	before := c.allocs("keep")
	c.kill(c.server)
	c.startServer()
	after := c.allocs("keep")
	if len(after) != len(before) {
		t.Fatalf("allocations before %d, after restart %d", len(before), len(after))
	}
	ids := map[string]bool{}
	for _, a := range before {
		ids[a.ID] = true
	}
	for _, a := range after {
		if !ids[a.ID] {
			t.Fatalf("allocation %s appeared after restart", a.ID)
		}
	}
	st, _, err := c.newClient(c.addr).WorkloadStatus(context.Background(), "keep", nil)
	if err != nil || st.Workload.Version != 1 || len(st.Groups) != 1 || st.Groups[0].Desired != 2 {
		t.Fatalf("workload after restart: %v %+v", err, st)
	}
	if n := c.node("n1"); n == nil || n.Allocated.CPUMilli != 200 {
		t.Fatalf("node after restart: %+v", n)
	}
	// The cell still works: a new workload is placed.
	c.mustStrata("run", "-f", c.writeSpec("more", fmt.Sprintf(sleeper, "more", 1)), "--wait", "--timeout", "60s")
}

// TestAgentRestartKeepsTasks: kill -9 the agent, start it again: the tasks
// run on with the same pids and no restarts.
func TestAgentRestartKeepsTasks(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")
	c.mustStrata("run", "-f", c.writeSpec("steady", fmt.Sprintf(sleeper, "steady", 2)), "--wait", "--timeout", "60s")
	pids := map[string]int{}
	for _, a := range runningAllocs(c.allocs("steady")) {
		pids[a.ID] = a.TaskStates["sleeper"].PID
	}
	if len(pids) != 2 {
		t.Fatalf("want 2 running allocations, got %v", pids)
	}
	c.kill(c.agents["n1"])
	for id, pid := range pids {
		if !pidAlive(pid) {
			t.Fatalf("task of %s (pid %d) died with the agent", id, pid)
		}
	}
	c.startAgent("n1")
	// Give the agent time to reconcile, then check nothing was restarted.
	c.eventually(20*time.Second, "agent reports after restart", func() error {
		for _, a := range c.allocs("steady") {
			ts := a.TaskStates["sleeper"]
			if want, ok := pids[a.ID]; ok && (ts == nil || ts.PID != want || ts.State != api.TaskRunning) {
				return fmt.Errorf("alloc %s task %+v, want pid %d running", a.ID, ts, want)
			}
		}
		return nil
	})
	time.Sleep(2 * time.Second) // a restart, if one were coming, would happen within the agent's first sync
	for _, a := range c.allocs("steady") {
		ts := a.TaskStates["sleeper"]
		if want, ok := pids[a.ID]; ok && (ts.PID != want || ts.Restarts != 0 || !pidAlive(want)) {
			t.Fatalf("after agent restart alloc %s: %+v, want pid %d, 0 restarts", a.ID, ts, want)
		}
	}
}

// TestKilledAgentIsReplaced: the node of a killed agent goes down after the
// heartbeat TTL and its allocation is replaced on the other node.
func TestKilledAgentIsReplaced(t *testing.T) {
	c := newCell(t, 2*time.Second)
	c.startAgent("n1", "--label", "rack=r1")
	c.mustStrata("run", "-f", c.writeSpec("mover", fmt.Sprintf(sleeper, "mover", 1)), "--wait", "--timeout", "60s")
	first := runningAllocs(c.allocs("mover"))[0]
	c.startAgent("n2", "--label", "rack=r2")
	c.kill(c.agents[first.NodeName])
	oldPID := first.TaskStates["sleeper"].PID
	t.Cleanup(func() { killTree(oldPID) }) // the orphaned task of the dead agent
	c.eventually(30*time.Second, "replacement runs on the other node", func() error {
		for _, a := range c.allocs("mover") {
			if a.ID == first.ID {
				if a.ClientStatus != api.AllocLost {
					return fmt.Errorf("old allocation is %s, want lost", a.ClientStatus)
				}
				continue
			}
			if a.ClientStatus == api.AllocRunning && a.NodeName != first.NodeName && a.PreviousAlloc == first.ID {
				return nil
			}
		}
		return fmt.Errorf("no replacement running yet")
	})
	if n := c.node(first.NodeName); n.Status != api.NodeDown {
		t.Fatalf("node %s is %s, want down", first.NodeName, n.Status)
	}
	if ev := c.mustStrata("events"); !strings.Contains(ev, "node-down") {
		t.Fatalf("events do not show the node going down:\n%s", ev)
	}
	// The agent comes back: its node is ready again and it stops the task
	// the cell already replaced.
	c.startAgent(first.NodeName, "--label", "rack=r1")
	c.eventually(30*time.Second, "the returning agent stops the replaced task", func() error {
		if pidAlive(oldPID) {
			return fmt.Errorf("pid %d of lost allocation %s still runs", oldPID, first.ID)
		}
		return nil
	})
}

// TestBadInputIsRejected: validate and run exit non-zero naming the field;
// the server answers 400 and writes nothing.
func TestBadInputIsRejected(t *testing.T) {
	c := newCell(t, 10*time.Second)
	bad := c.writeSpec("bad", `
apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: bad
spec:
  groups:
    - name: main
      tasks:
        - name: t
          command: ["true"]
          resources: {cpu: 100m, memory: -5Mi}
        - name: t
          comand: ["x"]
`)
	for _, cmd := range [][]string{{"validate", "-f", bad}, {"run", "-f", bad}} {
		_, errOut, code := c.strata(cmd...)
		if code == 0 {
			t.Fatalf("strata %v succeeded on bad input", cmd)
		}
		for _, path := range []string{"spec.groups[0].tasks[0].resources.memory", "spec.groups[0].tasks[1].comand"} {
			if !strings.Contains(errOut, path) {
				t.Errorf("strata %v: error does not name %s:\n%s", cmd, path, errOut)
			}
		}
	}
	body, _ := readFile(bad)
	resp, err := c.httpClient(30*time.Second).Post(c.addr+"/v1/workloads", "application/yaml", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var er api.ErrorResponse
	json.NewDecoder(resp.Body).Decode(&er)
	if resp.StatusCode != http.StatusBadRequest || len(er.Fields) < 2 {
		t.Fatalf("POST bad workload: %d %+v", resp.StatusCode, er)
	}
	resp2, err := c.httpClient(30*time.Second).Post(c.addr+"/v1/workloads", "application/yaml", strings.NewReader(strings.Repeat("x", 5<<20)))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp2.Body)
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d, want 413", resp2.StatusCode)
	}
	if out := c.mustStrata("status", "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("bad input wrote state: %s", out)
	}
	if _, errOut, code := c.strata("status", "nope"); code == 0 || !strings.Contains(errOut, "not found") {
		t.Fatalf("status of unknown workload: exit %d %s", code, errOut)
	}
}

// TestUnplaceableShowsReasons: a workload that fits nowhere stays pending
// and status says why, per node count.
func TestUnplaceableShowsReasons(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("n1", "--label", "rack=r1")
	spec := c.writeSpec("huge", `
apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: huge
spec:
  groups:
    - name: main
      placement:
        require: [{key: rack, op: "=", values: [r3]}]
      tasks:
        - name: t
          command: ["sleep", "1"]
          resources: {cpu: 100m, memory: 32Mi}
`)
	out, errOut, code := c.strata("run", "-f", spec, "--wait", "--timeout", "30s")
	if code == 0 || !strings.Contains(errOut, "rack != r3") {
		t.Fatalf("run --wait of an unplaceable workload: exit %d\n%s\n%s", code, out, errOut)
	}
	if st := c.mustStrata("status", "huge"); !strings.Contains(st, "1 nodes: rack != r3") && !strings.Contains(st, "1 node: rack != r3") {
		t.Fatalf("status does not explain: %s", st)
	}
}

// TestDevCellFromReadme runs the README's main command the way a newcomer
// does: `strata dev` in a fresh directory with the default relative data
// dir, then the README's hello example.
func TestDevCellFromReadme(t *testing.T) {
	dir := t.TempDir()
	httpAddr := freeAddr(t)
	// strata dev makes its own CA and certificates in its data dir.
	c := &cell{t: t, dir: dir, addr: "https://" + httpAddr, agents: map[string]*proc{}, tlsDir: filepath.Join(dir, "strata-data", "tls")}
	c.server = &proc{log: &syncBuffer{}}
	c.server.cmd = exec.Command(strataBin, "dev", "--http-addr", httpAddr)
	c.server.cmd.Env = c.daemonEnv("dev")
	c.server.cmd.Dir = dir
	c.server.cmd.Stdout, c.server.cmd.Stderr = c.server.log, c.server.log
	if err := c.server.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.shutdown)
	c.eventually(20*time.Second, "dev node ready", func() error {
		nodes, _, err := c.newClient(c.addr).Nodes(context.Background(), nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != api.NodeReady {
			return fmt.Errorf("nodes %v %v", nodes, err)
		}
		return nil
	})
	c.mustStrata("run", "-f", "examples/hello.yaml", "--wait", "--timeout", "60s")
	a := runningAllocs(c.allocs("hello"))[0]
	c.eventually(20*time.Second, "hello logs", func() error {
		out, _, _ := c.strata("logs", a.ID)
		if !strings.Contains(out, "hello from strata") {
			return fmt.Errorf("logs %q", out)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, "strata-data", "server", "raft", "raft.db")); err != nil {
		t.Fatalf("dev did not keep its state in ./strata-data: %v", err)
	}
}

// TestMemoryHogIsOOMKilled: a task past its memory limit is killed by the
// kernel and reported as OOM, not as a plain crash.
func TestMemoryHogIsOOMKilled(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")
	spec := c.writeSpec("hog", `
apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: hog
spec:
  groups:
    - name: main
      restartPolicy: {mode: never}
      tasks:
        - name: hog
          command: ["/bin/sh", "-c", "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo survived"]
          resources: {cpu: 100m, memory: 32Mi}
`)
	c.mustStrata("run", "-f", spec)
	c.eventually(60*time.Second, "OOM reported", func() error {
		for _, a := range c.allocs("hog") {
			ts := a.TaskStates["hog"]
			if a.ClientStatus == api.AllocFailed && ts != nil && ts.OOMKilled {
				if !strings.Contains(a.ClientReason, "OOM") {
					return fmt.Errorf("reason %q does not say OOM", a.ClientReason)
				}
				return nil
			}
		}
		return fmt.Errorf("no OOM-killed allocation yet")
	})
}
