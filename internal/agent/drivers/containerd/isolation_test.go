package containerd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
)

// TestRootPolicyAndUser: the exec driver's rule holds for containers: no
// uid 0 unless the node allows root tasks, whether root comes from the
// image or from the task.
func TestRootPolicyAndUser(t *testing.T) {
	e := newEnv(t)
	e.noRoot = true
	rootImage := ctrtest.BusyboxArchive(t)
	d := e.driver()
	for _, c := range []struct{ name, user string }{{"image's user is root", ""}, {"task asks for root", "0"},
		{"uid 0 spelled 00", "00"}, {"gid 0", "65534:0"}} {
		t.Run(c.name, func(t *testing.T) {
			b := newTask(t, ArchivePrefix+rootImage, "id", "-u")
			b.cfg.Task.User = c.user
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := d.StartTask(ctx, b.build()); !errors.Is(err, ErrRootNotAllowed) {
				t.Fatalf("StartTask = %v, want ErrRootNotAllowed", err)
			}
			// Nothing is left of the refused start: no container, no snapshot.
			if n := countSnapshots(t, d, true); n != 0 {
				t.Fatalf("%d container snapshots left after a refused start", n)
			}
		})
	}
	b := newTask(t, ArchivePrefix+rootImage, "id", "-u")
	b.cfg.Task.User = "65534:65534"
	cfg := b.build()
	start(t, d, cfg)
	wait(t, d, cfg.ID)
	eventually(t, "id -u output", func() bool { return readLog(t, cfg.TaskDir, "stdout") == "65534\n" })
}

// TestNamespaceVetoOnContainers is issue 18 defect 3: on a node that
// allows root tasks, a task of a namespace that does not (RootVeto) ran
// as uid 0 when its image named no user. The veto holds on the ids of the
// final spec: the image's user, the task's in any spelling, the group.
func TestNamespaceVetoOnContainers(t *testing.T) {
	e := newEnv(t)
	rootImage := ctrtest.BusyboxArchive(t)
	d := e.driver()                                                 // allows root tasks
	for _, user := range []string{"", "0", "00", "+0", "65534:0"} { // the test image has no /etc/passwd: ids only
		t.Run("user="+user, func(t *testing.T) {
			b := newTask(t, ArchivePrefix+rootImage, "id")
			b.cfg.Task.User = user
			b.cfg.RootVeto = `namespace "locked" does not allow root tasks`
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := d.StartTask(ctx, b.build()); !errors.Is(err, ErrRootNotAllowed) || !strings.Contains(err.Error(), `namespace "locked"`) {
				t.Fatalf("StartTask = %v, want ErrRootNotAllowed naming the namespace", err)
			}
		})
	}
	b := newTask(t, ArchivePrefix+rootImage, "id", "-u")
	b.cfg.Task.User = "65534:65534"
	b.cfg.RootVeto = `namespace "locked" does not allow root tasks`
	cfg := b.build()
	start(t, d, cfg)
	wait(t, d, cfg.ID)
	eventually(t, "id -u output", func() bool { return readLog(t, cfg.TaskDir, "stdout") == "65534\n" })
}

func TestNetworkHostOrIsolated(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	hostNS, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		network string
		same    bool
	}{{"", true}, {"host", true}, {"isolated", false}} {
		t.Run("network="+c.network, func(t *testing.T) {
			b := newTask(t, ArchivePrefix+archive, "readlink", "/proc/self/ns/net")
			b.cfg.Task.Network = c.network
			cfg := b.build()
			start(t, d, cfg)
			wait(t, d, cfg.ID)
			var got string
			eventually(t, "readlink output", func() bool {
				got = strings.TrimSpace(readLog(t, cfg.TaskDir, "stdout"))
				return got != ""
			})
			if (got == hostNS) != c.same {
				t.Fatalf("container netns %s, host %s: want same=%v", got, hostNS, c.same)
			}
		})
	}
}

func TestSecretsAsEnvironmentOnly(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	b := newTask(t, ArchivePrefix+archive, "sh", "-c", `echo "token=$API_TOKEN"`)
	b.cfg.Task.Secrets = []*api.Secret{{Name: "token", Env: "API_TOKEN", Value: "s3cret"}}
	cfg := b.build()
	start(t, d, cfg)
	wait(t, d, cfg.ID)
	eventually(t, "secret in env", func() bool { return readLog(t, cfg.TaskDir, "stdout") == "token=s3cret\n" })

	b = newTask(t, ArchivePrefix+archive, "true")
	b.cfg.Task.Secrets = []*api.Secret{{Name: "cert.pem", Value: "x"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := d.StartTask(ctx, b.build()); !errors.Is(err, ErrFileSecrets) || !strings.Contains(err.Error(), `secrets[0] "cert.pem"`) {
		t.Fatalf("StartTask with a file secret = %v, want ErrFileSecrets naming it", err)
	}
}

// TestTaskDirectoryIsMountedAtLocal: the task's own directory, owned by its
// user, is the container's /local and $STRATA_TASK_DIR; the logs beside it
// stay out of reach.
func TestTaskDirectoryIsMountedAtLocal(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	b := newTask(t, ArchivePrefix+archive, "sh", "-c", `echo "dir=$STRATA_TASK_DIR"; echo kept > /local/out; ls /local`)
	b.cfg.Task.User = "65534:65534"
	b.cfg.Env["STRATA_TASK_DIR"] = "/host/path/the/agent/set"
	cfg := b.build()
	start(t, d, cfg)
	if res := wait(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("result %+v; stderr %q", res, readLog(t, cfg.TaskDir, "stderr"))
	}
	eventually(t, "stdout", func() bool { return readLog(t, cfg.TaskDir, "stdout") == "dir=/local\nout\n" })
	data, err := os.ReadFile(filepath.Join(cfg.TaskDir, "local", "out"))
	if err != nil || string(data) != "kept\n" {
		t.Fatalf("host side of /local/out: %q %v", data, err)
	}
	fi, err := os.Stat(filepath.Join(cfg.TaskDir, "local"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || fi.Mode().Perm() != 0o700 {
		t.Fatalf("task dir owned by %d mode %v, want 65534 and 0700", st.Uid, fi.Mode().Perm())
	}
}

// TestContainersRunUnderSeccomp is issue 18 defect 7: containers ran with
// no seccomp filter (`Seccomp: 0`) and a non-root container made a user
// namespace (`unshare -U -r`) and mounted a tmpfs in it. They run under
// containerd's default profile now, whose rules follow the container's
// capabilities: none of these for a non-root task.
func TestContainersRunUnderSeccomp(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	b := newTask(t, ArchivePrefix+archive, "sh", "-c", `grep '^Seccomp:' /proc/self/status
		if unshare -U -r true 2>/dev/null; then echo userns=allowed; else echo userns=denied; fi
		if unshare -U -r mount -t tmpfs x /tmp 2>/dev/null; then echo mount=allowed; else echo mount=denied; fi`)
	b.cfg.Task.User = "65534:65534"
	cfg := b.build()
	start(t, d, cfg)
	if res := wait(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("result %+v; stderr %q", res, readLog(t, cfg.TaskDir, "stderr"))
	}
	var out string
	eventually(t, "the report", func() bool {
		out = readLog(t, cfg.TaskDir, "stdout")
		return strings.Contains(out, "mount=")
	})
	for _, want := range []string{"Seccomp:\t2", "userns=denied", "mount=denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("container reports %q, want %q", out, want)
		}
	}
}

// TestScratchDirectoriesAreBoundedTmpfs (issue 18 defect 9): a
// container's /tmp and /var/tmp were its writable layer, on the node's
// disk with no bound. They are tmpfs of the task's memory limit now, as
// its /dev/shm, all gone with the container.
func TestScratchDirectoriesAreBoundedTmpfs(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	b := newTask(t, ArchivePrefix+archive, "sh", "-c", `for d in /tmp /var/tmp /dev/shm; do
		echo "$d=$(stat -f -c %T $d) $(df -k $d | tail -1 | awk '{print $2}') $(stat -c %a $d)"; done`).mem(32 << 20)
	b.cfg.Task.User = "65534:65534"
	cfg := b.build()
	start(t, d, cfg)
	if res := wait(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("result %+v; stderr %q", res, readLog(t, cfg.TaskDir, "stderr"))
	}
	var out string
	eventually(t, "the report", func() bool {
		out = readLog(t, cfg.TaskDir, "stdout")
		return strings.Contains(out, "/dev/shm=")
	})
	for _, dir := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		if want := dir + "=tmpfs 32768 1777\n"; !strings.Contains(out, want) {
			t.Errorf("container reports %q, want %q", out, want)
		}
	}
}
