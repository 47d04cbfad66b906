package ctrtest

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Busybox is where Debian's busybox-static installs the binary.
const Busybox = "/bin/busybox"

// applets are the busybox commands the test images link in /bin.
var applets = []string{"sh", "echo", "cat", "sleep", "head", "tail", "ls", "env", "true", "false", "yes", "dd", "seq", "grep", "kill", "wc", "nproc", "id", "readlink"}

// ImageOptions shape the test image's configuration.
type ImageOptions struct {
	Cmd  []string // default ["/bin/sh"]
	User string   // the image's user, e.g. "65534:65534"; default root
	// Architecture is the config's architecture (GOARCH names, e.g.
	// arm64); default the host's, as umoci writes it.
	Architecture string
}

// BusyboxArchive builds, with umoci, an OCI archive of a one-layer image
// holding the static busybox and its applets in /bin (cmd: sh, user root),
// and returns its path. Nothing is downloaded.
func BusyboxArchive(t testing.TB) string {
	return BusyboxArchiveWith(t, ImageOptions{})
}

// BusyboxArchiveWith is BusyboxArchive with another cmd or user.
func BusyboxArchiveWith(t testing.TB, o ImageOptions) string {
	t.Helper()
	RequireRoot(t, "umoci")
	if err := checkStatic(Busybox); err != nil {
		t.Skipf("%s: %v (apt-get install busybox-static)", Busybox, err)
	}
	dir := t.TempDir()
	path, err := BuildBusyboxArchive(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// BuildBusyboxArchive writes dir/busybox.tar (see BusyboxArchive).
func BuildBusyboxArchive(dir string, o ImageOptions) (string, error) {
	if len(o.Cmd) == 0 {
		o.Cmd = []string{"/bin/sh"}
	}
	layout, rootfs := filepath.Join(dir, "layout"), filepath.Join(dir, "rootfs")
	for _, d := range []string{"bin", "tmp", "proc", "dev", "sys", "etc"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			return "", err
		}
	}
	data, err := os.ReadFile(Busybox)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(rootfs, "bin", "busybox"), data, 0o755); err != nil {
		return "", err
	}
	for _, a := range applets {
		if err := os.Symlink("busybox", filepath.Join(rootfs, "bin", a)); err != nil {
			return "", err
		}
	}
	img := layout + ":latest"
	config := []string{"config", "--image", img, "--config.env", "PATH=/bin", "--config.workingdir", "/"}
	for _, arg := range o.Cmd {
		config = append(config, "--config.cmd", arg)
	}
	if o.User != "" {
		config = append(config, "--config.user", o.User)
	}
	if o.Architecture != "" {
		config = append(config, "--architecture", o.Architecture)
	}
	for _, args := range [][]string{
		{"init", "--layout", layout},
		{"new", "--image", img},
		{"insert", "--image", img, rootfs, "/"},
		config,
	} {
		if out, err := exec.Command("umoci", args...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("umoci %v: %v: %s", args, err, out)
		}
	}
	archive := filepath.Join(dir, "busybox.tar")
	if out, err := exec.Command("tar", "-C", layout, "-cf", archive, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("tar: %v: %s", err, out)
	}
	return archive, nil
}

// checkStatic refuses a dynamically linked binary: the image has no libc.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("dynamically linked, the image would have no libc")
		}
	}
	return nil
}
