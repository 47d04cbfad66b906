package containerd

import (
	"archive/tar"
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
)

// TestLayerRoundTrip: what an overlay upper directory holds (files,
// directories, links, whiteouts, opaque marks, owners and modes) comes
// out of writeLayer and readLayer as it went in.
func TestLayerRoundTrip(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("whiteouts (device nodes), owners and trusted.* attributes need root")
	}
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "tmp", "deep"), 0o755))
	must(os.Chmod(filepath.Join(src, "tmp"), 0o777|os.ModeSticky))
	must(os.WriteFile(filepath.Join(src, "tmp", "deep", "state"), []byte("count=42\n"), 0o640))
	must(os.Chown(filepath.Join(src, "tmp", "deep", "state"), 65534, 65534))
	must(os.Link(filepath.Join(src, "tmp", "deep", "state"), filepath.Join(src, "tmp", "hard")))
	must(os.Symlink("deep/state", filepath.Join(src, "tmp", "soft")))
	must(os.MkdirAll(filepath.Join(src, "bin"), 0o755))
	must(unix.Mknod(filepath.Join(src, "bin", "true"), unix.S_IFCHR, 0)) // a whiteout
	must(os.MkdirAll(filepath.Join(src, "etc", "opaque"), 0o755))
	if err := unix.Lsetxattr(filepath.Join(src, "etc", "opaque"), "trusted.overlay.opaque", []byte("y"), 0); err != nil {
		t.Skipf("trusted xattrs on %s: %v", src, err)
	}

	var buf bytes.Buffer
	must(writeLayer(&buf, src))
	dst := t.TempDir()
	must(readLayer(bytes.NewReader(buf.Bytes()), dst))

	data, err := os.ReadFile(filepath.Join(dst, "tmp", "deep", "state"))
	if err != nil || string(data) != "count=42\n" {
		t.Fatalf("file: %q, %v", data, err)
	}
	var st, hard unix.Stat_t
	must(unix.Lstat(filepath.Join(dst, "tmp", "deep", "state"), &st))
	must(unix.Lstat(filepath.Join(dst, "tmp", "hard"), &hard))
	if st.Uid != 65534 || st.Mode&0o777 != 0o640 || st.Ino != hard.Ino {
		t.Fatalf("file uid %d mode %o ino %d, hard link ino %d", st.Uid, st.Mode&0o777, st.Ino, hard.Ino)
	}
	if target, err := os.Readlink(filepath.Join(dst, "tmp", "soft")); err != nil || target != "deep/state" {
		t.Fatalf("symlink: %q, %v", target, err)
	}
	var dir unix.Stat_t
	must(unix.Lstat(filepath.Join(dst, "tmp"), &dir))
	if dir.Mode&0o7777 != 0o1777 {
		t.Fatalf("/tmp mode %o, want 1777", dir.Mode&0o7777)
	}
	var wh unix.Stat_t
	must(unix.Lstat(filepath.Join(dst, "bin", "true"), &wh))
	if wh.Mode&unix.S_IFMT != unix.S_IFCHR || wh.Rdev != 0 {
		t.Fatalf("whiteout: mode %o rdev %d, want a character device 0/0", wh.Mode, wh.Rdev)
	}
	val := make([]byte, 8)
	n, err := unix.Lgetxattr(filepath.Join(dst, "etc", "opaque"), "trusted.overlay.opaque", val)
	if err != nil || string(val[:n]) != "y" {
		t.Fatalf("opaque mark: %q, %v", val[:n], err)
	}
}

// TestLayerRefusesWhatItMustNotUnpack: a layer comes from another node;
// no entry may reach outside the layer (by name, through a link the tar
// made first, or by chmod through a link of the same name), and devices
// other than whiteouts and attributes other than overlay's and user.* are
// refused.
func TestLayerRefusesWhatItMustNotUnpack(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("device nodes and owners need root")
	}
	tests := []struct {
		name    string
		entries func(parent string) []tar.Header
		want    string
	}{
		{"dot-dot", func(string) []tar.Header {
			return []tar.Header{{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644}}
		}, "leaves the layer"},
		{"absolute", func(string) []tar.Header {
			return []tar.Header{{Name: "/escape", Typeflag: tar.TypeReg, Mode: 0o644}}
		}, "leaves the layer"},
		{"through a symlink", func(parent string) []tar.Header {
			return []tar.Header{
				{Name: "link", Typeflag: tar.TypeSymlink, Linkname: parent, Mode: 0o777},
				{Name: "link/escape", Typeflag: tar.TypeReg, Mode: 0o644},
			}
		}, "below a symbolic link"},
		{"chmod through a symlink of the same name", func(parent string) []tar.Header {
			return []tar.Header{
				{Name: "x", Typeflag: tar.TypeSymlink, Linkname: filepath.Join(parent, "victim"), Mode: 0o777},
				{Name: "x", Typeflag: tar.TypeDir, Mode: 0o4777},
			}
		}, "appears twice"},
		{"hard link to outside", func(string) []tar.Header {
			return []tar.Header{{Name: "h", Typeflag: tar.TypeLink, Linkname: "../../etc/passwd"}}
		}, "leaves the layer"},
		{"hard link to a name the layer has not", func(string) []tar.Header {
			return []tar.Header{{Name: "h", Typeflag: tar.TypeLink, Linkname: "victim"}}
		}, "not a file of the layer"},
		{"block device", func(string) []tar.Header {
			return []tar.Header{{Name: "sda", Typeflag: tar.TypeBlock, Devmajor: 8, Mode: 0o600}}
		}, "unsupported entry type"},
		{"character device other than a whiteout", func(string) []tar.Header {
			return []tar.Header{{Name: "mem", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 1, Mode: 0o600}}
		}, "only whiteouts"},
		{"file capabilities", func(string) []tar.Header {
			return []tar.Header{{Name: "sh", Typeflag: tar.TypeReg, Mode: 0o755,
				PAXRecords: map[string]string{xattrPrefix + "security.capability": "\x01"}}}
		}, "is not carried"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			victim := filepath.Join(parent, "victim")
			if err := os.WriteFile(victim, []byte("outside"), 0o600); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, h := range tt.entries(parent) {
				h := h
				if err := tw.WriteHeader(&h); err != nil {
					t.Fatal(err)
				}
			}
			tw.Close()
			dst := filepath.Join(parent, "layer")
			os.Mkdir(dst, 0o755)
			err := readLayer(&buf, dst)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("readLayer: %v, want a refusal saying %q", err, tt.want)
			}
			if _, err := os.Lstat(filepath.Join(parent, "escape")); !os.IsNotExist(err) {
				t.Fatalf("an entry escaped the layer (%v)", err)
			}
			if fi, err := os.Stat(victim); err != nil || fi.Mode() != 0o600 {
				t.Fatalf("the file outside the layer changed: %v, %v", fi.Mode(), err)
			}
		})
	}
}

// TestLayerLeavesSocketsOut: a unix socket in the layer (an application's
// under /tmp) does not fail the tar: criu binds its path again.
func TestLayerLeavesSocketsOut(t *testing.T) {
	src := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(src, "app.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.WriteFile(filepath.Join(src, "data"), []byte("x"), 0o644)
	var buf bytes.Buffer
	if err := writeLayer(&buf, src); err != nil {
		t.Fatalf("writeLayer with a socket: %v", err)
	}
	var names []string
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != "data" {
		t.Fatalf("layer entries %v, want only data", names)
	}
}

// TestContainerMovesWithItsWritableLayer: a container that keeps a file
// open in its writable layer (a log at /log: /tmp is a tmpfs) and removed a file of its
// image moves: without the layer criu cannot reopen the file on the
// target; with it the counter goes on, the file holds what it held, and
// the removed file stays removed.
func TestContainerMovesWithItsWritableLayer(t *testing.T) {
	e := newEnv(t).withCriu()
	archive := ctrtest.BusyboxArchive(t)
	src := e.driver()
	if src.cfg.Snapshotter != "" && src.cfg.Snapshotter != "overlayfs" {
		t.Skipf("snapshotter %s keeps no upper directory", src.cfg.Snapshotter)
	}
	script := `exec 3>>/log; rm /bin/true; ` + strings.Replace(counterScript, "echo $i;", "echo $i; echo $i >&3;", 1)
	cfg := newTask(t, ArchivePrefix+archive, "sh", "-c", script).build()
	start(t, src, cfg)
	eventually(t, "the counter to pass 10", func() bool { return lastCount(t, cfg.TaskDir) >= 10 })
	dir := filepath.Join(t.TempDir(), "image")
	if _, err := src.CheckpointTask(context.Background(), cfg.ID, dir, false); err != nil {
		t.Fatalf("CheckpointTask: %v", err)
	}
	wait(t, src, cfg.ID)
	before := lastCount(t, cfg.TaskDir)
	if _, err := os.Stat(filepath.Join(dir, rwLayerFile)); err != nil {
		t.Fatalf("the image does not carry the writable layer: %v", err)
	}

	dst, _ := e.target()
	moved := *cfg
	moved.TaskDir = filepath.Join(t.TempDir(), "main")
	os.MkdirAll(moved.TaskDir, 0o755)
	if _, err := dst.RestoreTask(context.Background(), &moved, dir, false); err != nil {
		t.Fatalf("RestoreTask: %v", err)
	}
	t.Cleanup(func() { dst.StopTask(moved.ID, 0); dst.DestroyTask(moved.ID) })
	eventually(t, "the counter to go on", func() bool { return lastCount(t, moved.TaskDir) >= before+5 })
	if c := counts(t, moved.TaskDir); c[0] <= before-1 || c[0] > before+2 {
		t.Fatalf("the restored counter began at %d after %d", c[0], before)
	}
	upper, err := dst.upperDir(dst.namespaced(context.Background()), containerID(moved.ID))
	if err != nil || upper == "" {
		t.Fatalf("upper dir of the restored container: %q, %v", upper, err)
	}
	log, err := os.ReadFile(filepath.Join(upper, "log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(log))
	if len(lines) < before || lines[0] != "1" {
		t.Fatalf("/log in the restored container holds %d lines from %q; the source had counted to %d", len(lines), lines[0], before)
	}
	var wh unix.Stat_t
	if err := unix.Lstat(filepath.Join(upper, "bin", "true"), &wh); err != nil || wh.Mode&unix.S_IFMT != unix.S_IFCHR {
		t.Fatalf("/bin/true is not whited out in the restored container: %v", err)
	}
}
