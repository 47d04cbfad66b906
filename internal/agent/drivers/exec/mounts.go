package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/internal/agent/drivers"
)

// setupMounts builds the task's view of the file system in the init's
// fresh mount namespace (nothing here propagates back to the host):
//
//   - every path of HidePaths (the agent's allocation directories, /tmp,
//     /var/tmp, /dev/shm) is covered by an empty tmpfs: the task sees no
//     other task's files or logs, and gets private scratch directories
//     bounded by ScratchBytes; the host's mounts below them
//     (other software's, mounted and unmounted at any time) are detached
//     from the task's namespace first;
//   - its own directory (SandboxDir) is bound back at the same path;
//   - its secrets go on a tmpfs at SandboxDir/secrets, 0400, its user's;
//   - the cgroup file system shows only the task's own cgroups, read-only
//     (the host's cgroup mounts are detached);
//   - /proc is a new proc for the task's pid namespace (no other process
//     is visible; the host's is detached), with /proc/sys and
//     /proc/sysrq-trigger read-only;
//   - the init's own executable, when a covered path held it (a strata
//     binary in the data dir or /tmp, as in tests), is bound back at its
//     path, read-only: criu finds every file the tree maps in the tree's
//     mount namespace, and restores it there from the same path.
func setupMounts(s *spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// Hold what must stay visible before covering its path.
	sandbox, err := unix.Open(s.SandboxDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open task directory: %w", err)
	}
	defer unix.Close(sandbox)
	cgroupFDs := make([]int, len(s.CgroupDirs))
	for i, dir := range s.CgroupDirs {
		if cgroupFDs[i], err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return fmt.Errorf("open cgroup: %w", err)
		}
		defer unix.Close(cgroupFDs[i])
	}
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return fmt.Errorf("own executable: %w", err)
	}
	exeFD, err := unix.Open(exe, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open own executable: %w", err)
	}
	defer unix.Close(exeFD)
	if err := detachBelow(s.HidePaths, []string{s.SandboxDir, exe}); err != nil {
		return err
	}
	// The host's own mounts at the scratch directories (a tmpfs at
	// /dev/shm, a /tmp of its own) leave the namespace rather than stay
	// below the task's: nothing of them is reachable, and a checkpoint
	// finds one mount per point.
	for _, p := range s.HidePaths {
		if slices.Contains(drivers.ScratchDirs, p) {
			for range 16 { // stacked mounts, one by one
				if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
					break // EINVAL: no mount left at p
				}
			}
		}
	}
	for _, p := range s.HidePaths {
		if _, err := os.Stat(p); err != nil {
			continue // already covered by an earlier one, or absent
		}
		opts := "mode=0755"
		if slices.Contains(drivers.ScratchDirs, p) {
			opts = "mode=1777"
			if s.ScratchBytes > 0 {
				opts += ",size=" + strconv.FormatInt(s.ScratchBytes, 10)
			}
		}
		if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("cover %s: %w", p, err)
		}
	}
	if err := os.MkdirAll(s.SandboxDir, 0o755); err != nil {
		return fmt.Errorf("task directory mount point: %w", err)
	}
	if err := bindFD(sandbox, s.SandboxDir, false); err != nil {
		return err
	}
	if underAny(exe, s.HidePaths) {
		if err := bindExecutable(exeFD, exe); err != nil {
			return err
		}
	}
	if len(s.Secrets) > 0 {
		if err := mountSecrets(s); err != nil {
			return err
		}
	}
	if err := mountCgroups(s, cgroupFDs); err != nil {
		return err
	}
	// The host's /proc (and what is mounted below it) leaves the
	// namespace: the task's is a new one, not a cover over the host's.
	if err := unix.Unmount("/proc", unix.MNT_DETACH); err != nil && err != unix.EINVAL {
		return fmt.Errorf("detach /proc: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	for _, p := range []string{"/proc/sys", "/proc/sysrq-trigger"} {
		if _, err := os.Stat(p); err != nil {
			continue // a kernel without it
		}
		if err := bindReadOnly(p, p); err != nil {
			return err
		}
	}
	return nil
}

// mountCgroups replaces the host's cgroup mounts with a tmpfs holding,
// read-only, the task's own cgroup directories only (one per controller on
// v1, the single one on v2): a task can read its limits and usage but
// cannot move a process into another cgroup or change a limit. The binds
// are staged in the task's fresh /tmp first (a bind needs its source
// mounted), then the host's cgroup mounts leave the namespace and the
// binds move into place: no host mount stays below the task's view.
func mountCgroups(s *spec, fds []int) error {
	root := s.CgroupRoot
	stage, err := os.MkdirTemp("/tmp", ".strata-cgroups-")
	if err != nil {
		return fmt.Errorf("stage cgroups: %w", err)
	}
	defer os.RemoveAll(stage)
	staged := make([]string, len(fds))
	for i, fd := range fds {
		staged[i] = filepath.Join(stage, strconv.Itoa(i))
		if err := os.Mkdir(staged[i], 0o700); err != nil {
			return fmt.Errorf("stage cgroups: %w", err)
		}
		if err := bindFD(fd, staged[i], true); err != nil {
			return err
		}
	}
	if err := unix.Unmount(root, unix.MNT_DETACH); err != nil && err != unix.EINVAL {
		return fmt.Errorf("detach %s: %w", root, err)
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return fmt.Errorf("cover %s: %w", root, err)
	}
	for i, dir := range s.CgroupDirs {
		target := root
		if s.CgroupVersion == 1 {
			rel, err := filepath.Rel(root, dir)
			if err != nil {
				return fmt.Errorf("cgroup %s: %w", dir, err)
			}
			controller, _, _ := strings.Cut(rel, string(filepath.Separator))
			target = filepath.Join(root, controller)
			if err := os.Mkdir(target, 0o755); err != nil {
				return fmt.Errorf("cgroup mount point: %w", err)
			}
		}
		if err := unix.Mount(staged[i], target, "", unix.MS_MOVE, ""); err != nil {
			return fmt.Errorf("move cgroup %s: %w", target, err)
		}
	}
	if s.CgroupVersion == 1 {
		if err := unix.Mount("", root, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755"); err != nil {
			return fmt.Errorf("make %s read-only: %w", root, err)
		}
	}
	return nil
}

// mountSecrets puts the task's secret files on a tmpfs only its user can
// read: they never touch a disk.
func mountSecrets(s *spec) error {
	dir := filepath.Join(s.SandboxDir, secretsName)
	opts := fmt.Sprintf("mode=0500,uid=%d,gid=%d,size=4m", s.UID, s.GID)
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, opts); err != nil {
		return fmt.Errorf("mount secrets: %w", err)
	}
	for _, sec := range s.Secrets {
		if sec.Name == "" || filepath.Base(sec.Name) != sec.Name || sec.Name == "." || sec.Name == ".." {
			return fmt.Errorf("secret name %q is not a file name", sec.Name)
		}
		path := filepath.Join(dir, sec.Name)
		if err := os.WriteFile(path, []byte(sec.Value), 0o400); err != nil {
			return fmt.Errorf("write secret %s: %w", sec.Name, err)
		}
		if err := os.Chown(path, s.UID, s.GID); err != nil {
			return fmt.Errorf("own secret %s: %w", sec.Name, err)
		}
	}
	return nil
}

// bindFD binds the directory held by fd onto target, read-only if asked.
func bindFD(fd int, target string, readOnly bool) error {
	src := fmt.Sprintf("/proc/self/fd/%d", fd)
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s: %w", target, err)
	}
	if readOnly {
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", target, err)
		}
	}
	return nil
}

// bindReadOnly binds src onto target read-only.
func bindReadOnly(src, target string) error {
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s: %w", target, err)
	}
	if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", target, err)
	}
	return nil
}

// underAny reports whether path is one of dirs or below one.
func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// bindExecutable binds the file held by fd at path (created empty),
// read-only and nosuid but executable.
func bindExecutable(fd int, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("executable mount point: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o555)
	if err != nil {
		return fmt.Errorf("executable mount point: %w", err)
	}
	f.Close()
	src := fmt.Sprintf("/proc/self/fd/%d", fd)
	if err := unix.Mount(src, path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s: %w", path, err)
	}
	if err := unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", path, err)
	}
	return nil
}

// detachBelow detaches, deepest first, every mount of this namespace
// strictly below one of dirs, but for those holding a path of keep.
func detachBelow(dirs, keep []string) error {
	mounts, err := readMountInfo("self")
	if err != nil {
		return fmt.Errorf("list mounts: %w", err)
	}
	var points []string
	for _, m := range mounts {
		if underAny(m.Point, dirs) && !contains(dirs, m.Point) && !holdsAny(m.Point, keep) {
			points = append(points, m.Point)
		}
	}
	// Deepest first; a mount point stacked twice is detached twice.
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
			return fmt.Errorf("detach %s: %w", p, err)
		}
	}
	return nil
}

// holdsAny reports whether one of paths is dir or below it.
func holdsAny(dir string, paths []string) bool {
	for _, p := range paths {
		if underAny(p, []string{dir}) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
