package migrate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeStatfs answers statfs for the paths it knows: a filesystem type and
// the bytes free; other paths fail.
type fakeStatfs map[string]struct {
	fsType int64
	free   int64
}

func (f fakeStatfs) statfs(path string, st *unix.Statfs_t) error {
	fs, ok := f[path]
	if !ok {
		return errors.New("no such file or directory")
	}
	*st = unix.Statfs_t{Type: fs.fsType, Bsize: 4096, Bavail: uint64(fs.free / 4096)}
	return nil
}

func withStatfs(t *testing.T, f fakeStatfs) {
	t.Helper()
	old := statfsFunc
	statfsFunc = f.statfs
	t.Cleanup(func() { statfsFunc = old })
}

const ext4Magic = 0xef53

func TestPickImageStore(t *testing.T) {
	const GiB = int64(1) << 30
	tmp := t.TempDir()
	cases := []struct {
		name     string
		dir      string // Config.MigrateImageDir
		fs       fakeStatfs
		need     int64
		wantRoot string // base the root must sit in; "" for disk
		wantKind string // prefix of kind
	}{
		{name: "the data dir by default", dir: "",
			fs:   fakeStatfs{"/dev/shm": {unix.TMPFS_MAGIC, 8 * GiB}},
			need: 100 << 20, wantKind: "disk"},
		{name: "disk when asked", dir: ImageDirDisk,
			fs:   fakeStatfs{"/dev/shm": {unix.TMPFS_MAGIC, 8 * GiB}},
			need: 100 << 20, wantKind: "disk"},
		{name: "a roomy /dev/shm", dir: "/dev/shm",
			fs:   fakeStatfs{"/dev/shm": {unix.TMPFS_MAGIC, 8 * GiB}},
			need: 100 << 20, wantRoot: "/dev/shm", wantKind: "tmpfs"},
		{name: "a given tmpfs", dir: tmp,
			fs:   fakeStatfs{tmp: {unix.TMPFS_MAGIC, GiB}},
			need: 100 << 20, wantRoot: tmp, wantKind: "tmpfs"},
		{name: "not a tmpfs", dir: tmp,
			fs:   fakeStatfs{tmp: {ext4Magic, 8 * GiB}},
			need: 100 << 20, wantKind: "disk: image dir " + tmp + " is not a tmpfs"},
		{name: "no room: the image and the headroom do not fit", dir: "/dev/shm",
			fs:   fakeStatfs{"/dev/shm": {unix.TMPFS_MAGIC, 150 << 20}},
			need: 100 << 20, wantKind: "disk: tmpfs /dev/shm has 150 MiB free, the image needs up to 164 MiB"},
		{name: "just room", dir: "/dev/shm",
			fs:   fakeStatfs{"/dev/shm": {unix.TMPFS_MAGIC, 164 << 20}},
			need: 100 << 20, wantRoot: "/dev/shm", wantKind: "tmpfs"},
		{name: "no such dir", dir: "/dev/shm",
			fs:   fakeStatfs{},
			need: 1, wantKind: "disk: image dir /dev/shm: no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			withStatfs(t, tc.fs)
			a := Images{DataDir: "/var/lib/strata/agent", Dir: tc.dir}
			s := a.pickImageStore(tc.need)
			if !strings.HasPrefix(s.kind, tc.wantKind) || (tc.wantKind == "disk" && s.kind != "disk") {
				t.Errorf("kind %q, want %q...", s.kind, tc.wantKind)
			}
			switch {
			case tc.wantRoot == "" && s.root != "":
				t.Errorf("root %q, want the data dir", s.root)
			case tc.wantRoot != "" && filepath.Dir(s.root) != tc.wantRoot:
				t.Errorf("root %q, want a folder in %s", s.root, tc.wantRoot)
			}
		})
	}
}

func TestImageStoreKeepsAgentsApart(t *testing.T) {
	withStatfs(t, fakeStatfs{"/dev/shm": {unix.TMPFS_MAGIC, 1 << 40}})
	a1 := Images{DataDir: "/d/n1", Dir: "/dev/shm"}
	a2 := Images{DataDir: "/d/n2", Dir: "/dev/shm"}
	s1, s2 := a1.pickImageStore(1), a2.pickImageStore(1)
	if s1.root == "" || s1.root == s2.root {
		t.Fatalf("two agents share the image folder %q", s1.root)
	}
	if got, want := s1.sourceDir("al", "web", "/d/n1/allocs/al/web", "m1"), filepath.Join(s1.root, "al", "web", "migrate-m1"); got != want {
		t.Errorf("source dir %s, want %s", got, want)
	}
	if got, want := s1.incomingDir("al", "/d/n1/allocs/al", "m1"), filepath.Join(s1.root, "al", "incoming-m1"); got != want {
		t.Errorf("incoming dir %s, want %s", got, want)
	}
	disk := imageStore{}
	if got, want := disk.sourceDir("al", "web", "/d/n1/allocs/al/web", "m1"), "/d/n1/allocs/al/web/migrate-m1"; got != want {
		t.Errorf("disk source dir %s, want %s", got, want)
	}
	if got, want := disk.incomingDir("al", "/d/n1/allocs/al", "m1"), "/d/n1/allocs/al/incoming-m1"; got != want {
		t.Errorf("disk incoming dir %s, want %s", got, want)
	}
	// After a restart, the source looks on the tmpfs first, then on disk.
	dirs := a1.sourceImageDirs("al", "web", "/d/n1/allocs/al/web", "m1")
	if len(dirs) != 2 || dirs[0] != filepath.Join(s1.root, "al", "web", "migrate-m1") || dirs[1] != "/d/n1/allocs/al/web/migrate-m1" {
		t.Errorf("source image dirs %v", dirs)
	}
}

func TestSweepImages(t *testing.T) {
	base := t.TempDir()
	withStatfs(t, fakeStatfs{base: {unix.TMPFS_MAGIC, 1 << 40}})
	a := Images{DataDir: "/d/n1", Dir: base}
	root, why := a.imageTmpfsRoot()
	if root == "" {
		t.Fatal(why)
	}
	write := func(rel string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("img"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("kept/web/migrate-m1/inventory.img")  // a source image: may be restored
	write("kept/incoming-m2/web/inventory.img") // received, never resumed after a restart
	write("gone/web/migrate-m3/inventory.img")  // an allocation the agent no longer has
	write("gone/incoming-m4/web/inventory.img")
	a.Sweep(map[string]bool{"kept": true})
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, rel))
		return err == nil
	}
	if !exists("kept/web/migrate-m1/inventory.img") {
		t.Error("the source image of a kept allocation was removed")
	}
	for _, rel := range []string{"kept/incoming-m2", "gone"} {
		if exists(rel) {
			t.Errorf("%s is left", rel)
		}
	}
	a.Remove("kept")
	if exists("") {
		t.Error("the agent's empty image folder is left")
	}
	a.Sweep(nil) // nothing there: no error, nothing created
	if exists("") {
		t.Error("sweep created the image folder")
	}
}
