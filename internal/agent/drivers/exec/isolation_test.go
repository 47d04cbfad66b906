package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/confine"
)

// report runs script as a task and returns its stdout as key=value pairs
// (one "key=value" per line), failing on a non-zero exit.
func report(t *testing.T, d *Driver, mutate func(*api.Task), script string) (map[string]string, string) {
	t.Helper()
	cfg := taskConfig(t, "report", api.Resources{}, sh(script)...)
	if mutate != nil {
		mutate(cfg.Task)
	}
	for k, v := range cfg.Task.Env { // as the agent does
		cfg.Env[k] = v
	}
	cfg.Resources = cfg.Task.Resources
	h := start(t, d, cfg)
	res := wait(t, d, h.ID)
	out, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stdout.log"))
	errOut, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stderr.log"))
	if res.ExitCode != 0 {
		t.Fatalf("task failed: %+v\nstdout %s\nstderr %s", res, out, errOut)
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = strings.TrimSpace(v)
		}
	}
	return kv, cfg.TaskDir
}

// statusField reads a field of /proc/self/status as the task saw it.
const statusFields = `for f in Uid Gid CapEff CapPrm CapBnd CapAmb NoNewPrivs Seccomp; do
	echo "$f=$(grep "^$f:" /proc/self/status | cut -f2- | tr -s '\t ' ' ')"; done; `

func TestTaskRunsConfinedByDefault(t *testing.T) {
	d := newTestDriver(t)
	hostFile := "strata-host-" + marker()
	if err := os.WriteFile(filepath.Join("/tmp", hostFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(filepath.Join("/tmp", hostFile)) })
	kv, taskDir := report(t, d, func(tk *api.Task) { tk.Env = map[string]string{"HOST_FILE": hostFile} }, statusFields+`
		echo "pids=$(ls -d /proc/[0-9]* | wc -l)"
		echo "init=$(tr '\0' ' ' < /proc/1/cmdline | cut -d' ' -f2)"
		echo "cwd=$(pwd)"
		echo "taskdir=$STRATA_TASK_DIR"
		echo "owner=$(stat -c '%u %a' .)"
		ls /tmp/"$HOST_FILE" 2>/dev/null || echo "hostfile=hidden"
		touch /tmp/mine && echo "tmpwrite=ok"
		echo "cgroup=$(cut -d: -f3 /proc/self/cgroup | sort -u | tr '\n' ' ')"
		echo x > /sys/fs/cgroup/pids/pids.max 2>/dev/null || echo x > /sys/fs/cgroup/pids.max 2>/dev/null || echo "cgroupwrite=denied"
		unshare -U true 2>/dev/null || echo "unshare=denied"`)
	want := map[string]string{
		"Uid":         "65534 65534 65534 65534",
		"Gid":         "65534 65534 65534 65534",
		"CapEff":      "0000000000000000",
		"CapPrm":      "0000000000000000",
		"CapAmb":      "0000000000000000",
		"CapBnd":      fmt.Sprintf("%016x", confine.AllowedMask()),
		"NoNewPrivs":  "1",
		"Seccomp":     "2",
		"cwd":         filepath.Join(taskDir, "local"),
		"taskdir":     filepath.Join(taskDir, "local"),
		"owner":       "65534 700",
		"hostfile":    "hidden",
		"init":        "__exec",
		"tmpwrite":    "ok",
		"cgroup":      "/",
		"cgroupwrite": "denied",
		"unshare":     "denied",
	}
	for k, w := range want {
		if kv[k] != w {
			t.Errorf("%s = %q, want %q", k, kv[k], w)
		}
	}
	// The init, the shell, and the command substitution's subshell, ls
	// and wc (some maybe not reaped yet): nothing of the host's hundreds.
	if n, _ := strconv.Atoi(kv["pids"]); n < 2 || n > 6 {
		t.Errorf("task sees %s processes, want its own namespace's 2-6", kv["pids"])
	}
	if _, err := os.Stat("/tmp/mine"); err == nil {
		t.Error("the task's /tmp is the host's")
	}
}

func TestTaskUser(t *testing.T) {
	d := newTestDriver(t)
	tests := []struct {
		user, wantUID, wantGID string
	}{
		{"", "65534", "65534"},
		{"nobody", "65534", "65534"},
		{"4242", "4242", "4242"},
		{"4242:100", "4242", "100"},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			kv, _ := report(t, d, func(tk *api.Task) { tk.User = tt.user }, `echo "uid=$(id -u)"; echo "gid=$(id -g)"; echo "groups=$(id -G)"`)
			if kv["uid"] != tt.wantUID || kv["gid"] != tt.wantGID || kv["groups"] != tt.wantGID {
				t.Errorf("uid=%s gid=%s groups=%s, want %s:%s", kv["uid"], kv["gid"], kv["groups"], tt.wantUID, tt.wantGID)
			}
		})
	}
}

// rootSpellings are users that resolve to uid 0 or gid 0 on every node
// (issue 18 defect 3: "00" and "65534:0" ran as root where text was
// compared).
var rootSpellings = []string{"root", "0", "00", "+0", "root:root", "0:65534", "65534:0", "nobody:0", "nobody:root", "nobody:00"}

func TestRootTaskOnlyWhereAllowed(t *testing.T) {
	d := newTestDriver(t)
	for _, user := range rootSpellings {
		cfg := taskConfig(t, "root", api.Resources{}, "true")
		cfg.Task.User = user
		if _, err := d.StartTask(t.Context(), cfg); !errors.Is(err, ErrRootNotAllowed) {
			t.Errorf("user %q: StartTask error %v, want ErrRootNotAllowed", user, err)
		}
	}
	cfg := taskConfig(t, "nosuch", api.Resources{}, "true")
	cfg.Task.User = "no-such-user-here"
	if _, err := d.StartTask(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "no-such-user-here") {
		t.Errorf("unknown user: error %v, want one naming the user", err)
	}

	d.cfg.AllowRootTasks = true
	// The node allows root, the allocation's namespace does not: its veto
	// holds on the ids the node resolves, whatever the spelling.
	for _, user := range rootSpellings {
		cfg := taskConfig(t, "vetoed", api.Resources{}, "true")
		cfg.Task.User, cfg.RootVeto = user, `namespace "locked" does not allow root tasks`
		if _, err := d.StartTask(t.Context(), cfg); !errors.Is(err, ErrRootNotAllowed) || !strings.Contains(err.Error(), `namespace "locked"`) {
			t.Errorf("user %q under the namespace's veto: StartTask error %v, want ErrRootNotAllowed naming the namespace", user, err)
		}
	}
	kv, _ := report(t, d, func(tk *api.Task) { tk.User = "root" }, statusFields+
		`kill -0 1 2>/dev/null || echo "killinit=denied"; mount -t tmpfs x /mnt 2>/dev/null || echo "mount=denied"`)
	mask := fmt.Sprintf("%016x", confine.AllowedMask())
	for k, w := range map[string]string{"Uid": "0 0 0 0", "CapEff": mask, "CapPrm": mask, "CapBnd": mask,
		"NoNewPrivs": "1", "Seccomp": "2", "mount": "denied"} {
		if kv[k] != w {
			t.Errorf("root task: %s = %q, want %q", k, kv[k], w)
		}
	}
}

func TestSecretsDeliveredAsTmpfsFilesAndEnv(t *testing.T) {
	d := newTestDriver(t)
	kv, taskDir := report(t, d, func(tk *api.Task) {
		tk.Secrets = []*api.Secret{{Name: "db-password", Value: "hunter2"}, {Name: "token", Env: "API_TOKEN", Value: "tok-1"}}
	}, `echo "dir=$STRATA_SECRETS_DIR"
		echo "value=$(cat "$STRATA_SECRETS_DIR/db-password")"
		echo "mode=$(stat -c '%a %u' "$STRATA_SECRETS_DIR/db-password")"
		echo "fs=$(stat -f -c %T "$STRATA_SECRETS_DIR")"
		echo "files=$(ls "$STRATA_SECRETS_DIR" | tr '\n' ' ')"
		echo "env=$API_TOKEN"`)
	for k, w := range map[string]string{
		"dir": filepath.Join(taskDir, "local", "secrets"), "value": "hunter2", "mode": "400 65534",
		"fs": "tmpfs", "files": "db-password", "env": "tok-1",
	} {
		if kv[k] != w {
			t.Errorf("%s = %q, want %q", k, kv[k], w)
		}
	}
	// On the host the mount point is empty: the files lived on the task's tmpfs.
	entries, err := os.ReadDir(filepath.Join(taskDir, "local", "secrets"))
	if err != nil || len(entries) != 0 {
		t.Errorf("host secrets dir: %v, %v; want an empty directory", entries, err)
	}
}

func TestStopForwardsSIGTERMToEveryProcess(t *testing.T) {
	d := newTestDriver(t)
	m := marker()
	killProcsWithArg(t, m)
	// The main process waits for its child: when it exits, the init ends
	// the namespace, and a slower child would die before it could log.
	cfg := taskConfig(t, "graceful", api.Resources{}, sh(`
		setsid sh -c 'trap "echo child-term >&2; exit 0" TERM; sleep `+m+` & wait' &
		child=$!
		trap 'wait $child; echo main-term; exit 0' TERM; echo ready; sleep 300 & wait`)...)
	h := start(t, d, cfg)
	if !waitFor(t, "the task to run", 10*time.Second, func() bool {
		return logHas(cfg.TaskDir, "stdout", "ready")() && len(procsWithArg(m)) > 0
	}) {
		t.Fatal("task did not start")
	}
	begin := time.Now()
	if err := d.StopTask(h.ID, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	res := wait(t, d, h.ID)
	if time.Since(begin) > 10*time.Second || res.ExitCode != 0 || res.Signal != 0 {
		t.Errorf("stop took %s with result %+v, want a prompt exit 0 on SIGTERM", time.Since(begin), res)
	}
	if !logHas(cfg.TaskDir, "stdout", "main-term")() || !logHas(cfg.TaskDir, "stderr", "child-term")() {
		t.Error("SIGTERM did not reach both the task and its setsid child")
	}
	if !waitFor(t, "no process left", 5*time.Second, func() bool { return len(procsWithArg(m)) == 0 }) {
		t.Error("a process of the task outlived it")
	}
}

func TestTaskPIDIsTheCommandOnTheHost(t *testing.T) {
	d := newTestDriver(t)
	m := marker()
	cfg := taskConfig(t, "pid", api.Resources{}, "sleep", m)
	h := start(t, d, cfg)
	if got := procsWithArg(m); len(got) != 1 || got[0] != h.PID {
		t.Errorf("handle PID %d, processes running the command %v", h.PID, got)
	}
	if h.InitPID == 0 || h.InitPID == h.PID || syscall.Kill(h.InitPID, 0) != nil {
		t.Errorf("init pid %d not a live process apart from the task", h.InitPID)
	}
}

func TestIsolatedNetworkHasLoopbackOnly(t *testing.T) {
	d := newTestDriver(t)
	script := `echo "ifaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' ')"`
	host, _ := report(t, d, nil, script)
	isolated, _ := report(t, d, func(tk *api.Task) { tk.Network = "isolated" }, script)
	if isolated["ifaces"] != "lo" {
		t.Errorf("isolated task sees interfaces %q, want lo only", isolated["ifaces"])
	}
	if host["ifaces"] == "lo" || host["ifaces"] == "" {
		t.Errorf("host-network task sees interfaces %q, want the node's", host["ifaces"])
	}
}

// TestTaskInheritsOnlyStdio: no pipe of the shim or the init, no cgroup
// file opened for the task stage, reaches the command.
func TestTaskInheritsOnlyStdio(t *testing.T) {
	d := newTestDriver(t)
	cfg := taskConfig(t, "fds", api.Resources{}, "ls", "/proc/self/fd")
	h := start(t, d, cfg)
	if res := wait(t, d, h.ID); res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	out, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stdout.log"))
	// 0-2 and ls's own open directory.
	if got := strings.Fields(string(out)); strings.Join(got, " ") != "0 1 2 3" {
		t.Errorf("the command holds fds %v, want 0 1 2 and its own 3", got)
	}
}

// TestScratchDirectoriesArePrivateAndBounded is issue 18 defect 9's
// second half: tasks wrote to the host's /var/tmp and /dev/shm, shared by
// every tenant, and the files outlived `stop --purge`. /tmp, /var/tmp and
// /dev/shm are the task's own tmpfs now, each bounded by its memory limit
// (whose cgroup its pages are charged to), gone with the task.
func TestScratchDirectoriesArePrivateAndBounded(t *testing.T) {
	d := newTestDriver(t)
	token := fmt.Sprintf("strata-scratch-%d", time.Now().UnixNano())
	kv, _ := report(t, d, func(tk *api.Task) {
		tk.Env = map[string]string{"TOKEN": token}
		tk.Resources.MemoryBytes = 32 << 20
	}, `for d in /tmp /var/tmp /dev/shm; do
			echo "$d=$(stat -f -c %T $d) $(df -k $d | tail -1 | awk '{print $2}') $(stat -c %a $d)"
			echo x > $d/$TOKEN || echo "$d=unwritable"
		done`)
	for _, dir := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		if want := "tmpfs 32768 1777"; kv[dir] != want {
			t.Errorf("%s inside the task: %q, want %q (a private tmpfs of the memory limit, sticky)", dir, kv[dir], want)
		}
		if _, err := os.Stat(filepath.Join(dir, token)); err == nil {
			os.Remove(filepath.Join(dir, token))
			t.Errorf("the task's file is in the host's %s", dir)
		}
	}
}
