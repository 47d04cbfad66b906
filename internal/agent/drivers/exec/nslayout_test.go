package exec

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mountsBuilder builds a task namespace's mount table, as mountinfo lists it.
type mountsBuilder struct {
	mounts []mountEntry
	next   int
}

// mount adds a mount of fstype at point on parent (an id) and returns its id.
func (b *mountsBuilder) mount(parent int, point, fstype, root string) int {
	b.next++
	b.mounts = append(b.mounts, mountEntry{ID: b.next, Parent: parent, Point: point, FSType: fstype, Root: root})
	return b.next
}

// taskNamespace is the layout the init builds over a small host: its root,
// /proc, /dev and /dev/pts stacked twice, /sys; then the init's own mounts.
func taskNamespace() (*nsLayout, *mountsBuilder) {
	b := &mountsBuilder{}
	root := b.mount(0, "/", "ext4", "/")
	b.mount(root, "/sys", "sysfs", "/")
	dev := b.mount(root, "/dev", "devtmpfs", "/")
	pts := b.mount(dev, "/dev/pts", "devpts", "/")
	b.mount(pts, "/dev/pts", "devpts", "/")
	b.mount(root, "/data/allocs", "tmpfs", "/")
	tmp := b.mount(root, "/tmp", "tmpfs", "/")
	b.mount(root, "/data/allocs/a/t/local", "ext4", "/data/allocs/a/t/local")
	b.mount(tmp, "/tmp/bin/strata", "ext4", "/tmp/bin/strata")
	cg := b.mount(root, "/sys/fs/cgroup", "tmpfs", "/")
	b.mount(cg, "/sys/fs/cgroup/cpu", "cgroup", "/strata/a/t")
	b.mount(cg, "/sys/fs/cgroup/memory", "cgroup", "/strata/a/t")
	proc := b.mount(root, "/proc", "proc", "/")
	b.mount(proc, "/proc/sys", "proc", "/sys")
	l := &nsLayout{
		Tmpfs:      []string{"/data/allocs", "/tmp", "/sys/fs/cgroup"},
		Sandbox:    "/data/allocs/a/t/local",
		Exe:        "/tmp/bin/strata",
		CgroupRoot: "/sys/fs/cgroup",
		Cgroups:    []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory"},
		Proc:       []string{"/proc", "/proc/sys", "/proc/sysrq-trigger"},
	}
	return l, b
}

// TestExternalsOfATaskNamespace: the init's binds of host directories and
// every host mount but the root are external, keyed so that a restore can
// map them to the target's paths; the init's tmpfs and proc mounts are not.
func TestExternalsOfATaskNamespace(t *testing.T) {
	l, b := taskNamespace()
	args, err := l.externals(b.mounts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--external", "mnt[/dev]:h/dev",
		"--external", "mnt[/dev/pts]:h/dev/pts", // stacked twice: one key, the host's top one
		"--external", "mnt[/sys]:h/sys",
		"--external", "mnt[/sys/fs/cgroup/cpu]:strata-cg/cpu",
		"--external", "mnt[/sys/fs/cgroup/memory]:strata-cg/memory",
		"--external", "mnt[/tmp/bin/strata]:strata-exe",
		"--external", "mnt[/data/allocs/a/t/local]:strata-sandbox",
	}
	slices.Sort(want)
	got := slices.Clone(args)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("dump arguments\n got %q\nwant %q", args, want)
	}
	kinds := map[string]string{}
	for _, e := range l.Externals {
		kinds[e.Key] = e.Kind + ":" + e.Path
	}
	for key, kind := range map[string]string{"h/dev": "host:/dev", "strata-cg/cpu": "cgroup:cpu",
		"strata-sandbox": "sandbox:", "strata-exe": "exe:"} {
		if kinds[key] != kind {
			t.Errorf("external %s is %q, want %q", key, kinds[key], kind)
		}
	}
}

// TestExternalsRefuseAHostMountUnderTheInitsOwn: criu names an external
// mount by its mount point, so a host mount below one of the init's at the
// same point would take the init's with it (a host /proc, or a host /tmp
// holding the task's directory): the dump is refused, saying which.
func TestExternalsRefuseAHostMountUnderTheInitsOwn(t *testing.T) {
	for _, point := range []string{"/proc", "/tmp", "/sys/fs/cgroup/cpu"} {
		t.Run(point, func(t *testing.T) {
			l, b := taskNamespace()
			// The host's mount, mounted before the init's at the same point.
			host := mountEntry{ID: 100, Parent: 1, Point: point, FSType: "hostfs", Root: "/"}
			for i, m := range b.mounts {
				if m.Point == point && m.Parent != host.ID {
					b.mounts[i].Parent = host.ID
					break
				}
			}
			b.mounts = append(b.mounts, host)
			_, err := l.externals(b.mounts)
			if err == nil || !strings.Contains(err.Error(), point) {
				t.Fatalf("externals = %v, want a refusal naming %s", err, point)
			}
		})
	}
}

// TestTopmostPicksTheLastMountAtAPoint: of mounts stacked at one point, the
// one no other sits on.
func TestTopmostPicksTheLastMountAtAPoint(t *testing.T) {
	b := &mountsBuilder{}
	root := b.mount(0, "/", "ext4", "/")
	host := b.mount(root, "/proc", "proc", "/")
	own := b.mount(host, "/proc", "proc", "/")
	if top := topmost(b.mounts); top["/proc"].ID != own || top["/"].ID != root {
		t.Errorf("topmost = %+v, want /proc %d", top, own)
	}
}

// TestRestoreExternalsMapToThisNode: each key of an image goes to this
// node's path: the task's directory and cgroups of the new spec, the host
// mount at the same path; one with nothing to bind is named.
func TestRestoreExternalsMapToThisNode(t *testing.T) {
	dir := t.TempDir()
	sandbox := filepath.Join(dir, "allocs", "a", "t", "local")
	cpu := filepath.Join(dir, "cg", "cpu", "strata-2", "a", "t")
	for _, p := range []string{sandbox, cpu} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, _ := os.Executable()
	d := &Driver{cfg: Config{ShimCommand: []string{self, "__shim"}}}
	s := &spec{SandboxDir: sandbox, CgroupVersion: 1, CgroupRoot: filepath.Join(dir, "cg"), CgroupDirs: []string{cpu}}
	l := &nsLayout{Externals: []nsExt{
		{Key: "h/dev", Kind: extHost, Point: "/dev", Path: "/dev"},
		{Key: "strata-sandbox", Kind: extSandbox, Point: "/old/allocs/a/t/local"},
		{Key: "strata-cg/cpu", Kind: extCgroup, Point: "/sys/fs/cgroup/cpu", Path: "cpu"},
		{Key: "strata-exe", Kind: extExe, Point: "/tmp/old/strata"},
	}}
	args, err := d.restoreExternals(l, s)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := filepath.EvalSymlinks(self)
	want := []string{"--external", "mnt[h/dev]:/dev", "--external", "mnt[strata-sandbox]:" + sandbox,
		"--external", "mnt[strata-cg/cpu]:" + cpu, "--external", "mnt[strata-exe]:" + exe}
	if !slices.Equal(args, want) {
		t.Errorf("restore arguments\n got %q\nwant %q", args, want)
	}

	l.Externals = append(l.Externals, nsExt{Key: "strata-cg/memory", Kind: extCgroup, Point: "/sys/fs/cgroup/memory", Path: "memory"})
	if _, err := d.restoreExternals(l, s); err == nil || !strings.Contains(err.Error(), "/sys/fs/cgroup/memory") {
		t.Errorf("a cgroup this node lacks: %v, want an error naming its mount point", err)
	}
	l.Externals = []nsExt{{Key: "h/no/such", Kind: extHost, Point: "/no/such", Path: "/no/such"}}
	if _, err := d.restoreExternals(l, s); err == nil || !strings.Contains(err.Error(), "/no/such") {
		t.Errorf("a host mount this node lacks: %v, want an error naming it", err)
	}
}
