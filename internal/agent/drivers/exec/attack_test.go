package exec

// Regression tests for the attacks of issue 8, each tried as a task would:
// they failed against the driver before tasks got their own namespaces, an
// unprivileged user and read-only cgroups.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// marker returns a unique `sleep` argument by which the test finds the
// task's processes from the host, whatever namespace or cgroup they are in.
func marker() string {
	return fmt.Sprintf("1000.%06d", time.Now().UnixNano()%1000000)
}

// procsWithArg lists host pids whose command line has arg.
func procsWithArg(arg string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range bytes.Split(data, []byte{0}) {
			if string(a) == arg {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// killProcsWithArg is the tests' own cleanup of what a task leaked.
func killProcsWithArg(t *testing.T, arg string) {
	t.Cleanup(func() {
		for _, pid := range procsWithArg(arg) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Logf("timed out after %s waiting for %s", timeout, what)
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func logHas(dir, stream, s string) func() bool {
	return func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, stream+".log"))
		return strings.Contains(string(data), s)
	}
}

func start(t *testing.T, d *Driver, cfg *drivers.TaskConfig) *drivers.TaskHandle {
	t.Helper()
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.StopTask(h.ID, time.Second)
		d.DestroyTask(h.ID)
	})
	return h
}

func sh(script string) []string { return []string{"sh", "-c", script} }

func TestAttackReadShadow(t *testing.T) {
	d := newTestDriver(t)
	cfg := taskConfig(t, "shadow", api.Resources{}, sh(`cat /etc/shadow >/dev/null && echo READ`)...)
	h := start(t, d, cfg)
	res := wait(t, d, h.ID)
	if res.ExitCode == 0 || logHas(cfg.TaskDir, "stdout", "READ")() {
		t.Fatalf("the task read /etc/shadow (result %+v)", res)
	}
}

func TestAttackSignalAgent(t *testing.T) {
	d := newTestDriver(t)
	cfg := taskConfig(t, "signal", api.Resources{}, sh(`kill -0 "$AGENT_PID" && echo SIGNALLED`)...)
	cfg.Env["AGENT_PID"] = strconv.Itoa(os.Getpid()) // this test process plays the agent
	h := start(t, d, cfg)
	res := wait(t, d, h.ID)
	if res.ExitCode == 0 || logHas(cfg.TaskDir, "stdout", "SIGNALLED")() {
		t.Fatalf("the task could signal the agent (result %+v)", res)
	}
}

// escapeCgroups is a task script that tries to move its shell into the
// root of every cgroup hierarchy (v1 and v2).
const escapeCgroups = `for f in /sys/fs/cgroup/*/cgroup.procs /sys/fs/cgroup/cgroup.procs; do echo $$ > "$f"; done 2>/dev/null; `

func TestAttackLeaveCgroupThenForkPastPidsLimit(t *testing.T) {
	d := newTestDriver(t)
	m := marker()
	killProcsWithArg(t, m)
	cfg := taskConfig(t, "escape", api.Resources{}, sh(escapeCgroups+
		`i=0; while [ $i -lt 30 ]; do sleep `+m+` & i=$((i+1)); done; echo started; wait`)...)
	cfg.Task.PidsLimit = 8
	h := start(t, d, cfg)
	done := make(chan struct{})
	go func() { wait(t, d, h.ID); close(done) }()
	waitFor(t, "the task to fork", 10*time.Second, func() bool {
		select {
		case <-done:
			return true
		default:
		}
		return logHas(cfg.TaskDir, "stdout", "started")()
	})
	if n := len(procsWithArg(m)); n > 8 {
		t.Fatalf("the task ran %d children under pidsLimit 8: it left its cgroup", n)
	}
}

func TestAttackSetsidChildOutlivesPurge(t *testing.T) {
	d := newTestDriver(t)
	m := marker()
	killProcsWithArg(t, m)
	cfg := taskConfig(t, "daemon", api.Resources{}, sh(escapeCgroups+`setsid sleep `+m+` & echo started; sleep 300`)...)
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, "the setsid child", 10*time.Second, func() bool { return len(procsWithArg(m)) > 0 }) {
		t.Fatal("the setsid child never started")
	}
	if err := d.StopTask(h.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := d.DestroyTask(h.ID); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, "the setsid child to die", 5*time.Second, func() bool { return len(procsWithArg(m)) == 0 }) {
		t.Fatalf("setsid child %v still runs after its task was stopped and destroyed", procsWithArg(m))
	}
}

// taskIn is taskConfig with the agent's layout: root/<alloc>/<task>.
func taskIn(t *testing.T, root, alloc, name string, cmd ...string) *drivers.TaskConfig {
	cfg := taskConfig(t, name, api.Resources{}, cmd...)
	cfg.TaskDir = filepath.Join(root, alloc, name)
	if err := os.MkdirAll(cfg.TaskDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestAttackReadOtherTasksEnvFilesAndLogs(t *testing.T) {
	d := newTestDriver(t)
	root := t.TempDir()
	secret := "s3cret-" + marker()
	victim := taskIn(t, root, "alloc-victim", "victim", sh(`echo "log-$VICTIM_SECRET"; echo "$VICTIM_SECRET" > secret.txt; echo ready >&2; sleep 300`)...)
	victim.Env["VICTIM_SECRET"] = secret
	start(t, d, victim)
	if !waitFor(t, "the victim to run", 10*time.Second, logHas(victim.TaskDir, "stderr", "ready")) {
		t.Fatal("victim did not start")
	}
	attacker := taskIn(t, root, "alloc-attacker", "attacker", sh(`
		cat /proc/[0-9]*/environ
		cat "$VICTIM_DIR"/*.log "$VICTIM_DIR"/*.json "$VICTIM_DIR"/secret.txt "$VICTIM_DIR"/local/secret.txt
		find "$ROOT" -type f -exec cat {} +
		echo done`)...)
	attacker.Env["VICTIM_DIR"] = victim.TaskDir
	attacker.Env["ROOT"] = root
	h := start(t, d, attacker)
	wait(t, d, h.ID)
	out, _ := os.ReadFile(filepath.Join(attacker.TaskDir, "stdout.log"))
	if !strings.Contains(string(out), "done") {
		t.Fatalf("attacker did not run to the end: %q", out)
	}
	if strings.Contains(string(out), secret) {
		t.Fatalf("a task read another task's environment, files or logs:\n%s", out)
	}
}

func TestSpecFileAndTaskDirArePrivate(t *testing.T) {
	d := newTestDriver(t)
	cfg := taskConfig(t, "private", api.Resources{}, "sleep", "300")
	start(t, d, cfg)
	for path, want := range map[string]os.FileMode{
		filepath.Join(cfg.TaskDir, "spec.json"): 0o600,
		cfg.TaskDir:                             0o700 | os.ModeDir,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s has mode %v, want %v", path, fi.Mode(), want)
		}
	}
}

var _ = cgroup.V1
