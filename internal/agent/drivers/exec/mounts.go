package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// setupMounts builds the task's view of the file system in the init's
// fresh mount namespace (nothing here propagates back to the host):
//
//   - every path of HidePaths (the agent's allocation directories, /tmp)
//     is covered by an empty tmpfs: the task sees no other task's files
//     or logs, and gets a private /tmp;
//   - its own directory (SandboxDir) is bound back at the same path;
//   - its secrets go on a tmpfs at SandboxDir/secrets, 0400, its user's;
//   - the cgroup file system shows only the task's own cgroups, read-only;
//   - /proc is a new proc for the task's pid namespace (no other process
//     is visible), with /proc/sys and /proc/sysrq-trigger read-only.
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
	for _, p := range s.HidePaths {
		if _, err := os.Stat(p); err != nil {
			continue // already covered by an earlier one, or absent
		}
		mode := "0755"
		if p == "/tmp" {
			mode = "1777"
		}
		if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode="+mode); err != nil {
			return fmt.Errorf("cover %s: %w", p, err)
		}
	}
	if err := os.MkdirAll(s.SandboxDir, 0o755); err != nil {
		return fmt.Errorf("task directory mount point: %w", err)
	}
	if err := bindFD(sandbox, s.SandboxDir, false); err != nil {
		return err
	}
	if len(s.Secrets) > 0 {
		if err := mountSecrets(s); err != nil {
			return err
		}
	}
	if err := mountCgroups(s, cgroupFDs); err != nil {
		return err
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

// mountCgroups covers the cgroup root with a tmpfs holding, read-only,
// the task's own cgroup directories only (one per controller on v1, the
// single one on v2): a task can read its limits and usage but cannot move
// a process into another cgroup or change a limit.
func mountCgroups(s *spec, fds []int) error {
	root := s.CgroupRoot
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
		if err := bindFD(fds[i], target, true); err != nil {
			return err
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
