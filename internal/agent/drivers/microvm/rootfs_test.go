package microvm

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/internal/agent/drivers/microvm/ocitest"
)

func file(name, data string) ocitest.File { return ocitest.File{Name: name, Data: []byte(data)} }
func dir(name string) ocitest.File        { return ocitest.File{Name: name, Type: tar.TypeDir, Mode: 0o755} }
func symlink(name, target string) ocitest.File {
	return ocitest.File{Name: name, Type: tar.TypeSymlink, Linkname: target}
}
func hardlink(name, target string) ocitest.File {
	return ocitest.File{Name: name, Type: tar.TypeLink, Linkname: target}
}

// flatten writes img as an archive or a layout, opens it like the driver
// and returns the flattened root file system.
func flatten(t *testing.T, img ocitest.Image, archive bool) ([]parsedEntry, error) {
	t.Helper()
	ref := "oci:" + t.TempDir()
	if archive {
		p := filepath.Join(t.TempDir(), "image.tar")
		ref = "oci-archive:" + p
		if err := ocitest.WriteArchive(p, img); err != nil {
			t.Fatal(err)
		}
	} else if err := ocitest.WriteLayout(strings.TrimPrefix(ref, "oci:"), img); err != nil {
		t.Fatal(err)
	}
	im, err := openImage(ref)
	if err != nil {
		return nil, err
	}
	defer im.Close()
	var buf bytes.Buffer
	if err := writeRootfs(im, &buf); err != nil {
		return nil, err
	}
	return parseCPIO(t, buf.Bytes()), nil
}

// checkParentsFirst fails when an entry comes before its parent directory.
func checkParentsFirst(t interface{ Fatalf(string, ...any) }, entries []parsedEntry) {
	seen := map[string]bool{}
	for _, e := range entries {
		if p := path.Dir(e.Name); p != "." && !seen[p] {
			t.Fatalf("%s comes before its parent %s: %v", e.Name, p, entries)
		}
		if seen[e.Name] {
			t.Fatalf("%s written twice: %v", e.Name, entries)
		}
		seen[e.Name] = true
	}
}

func TestWriteRootfsAppliesLayers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layers []ocitest.Layer
		want   map[string]string // path -> data ("" for non-files)
		absent []string
	}{
		{
			name:   "files, directories and symlinks",
			layers: []ocitest.Layer{{Files: []ocitest.File{dir("etc/"), file("etc/motd", "hi"), symlink("bin/sh", "busybox")}}},
			want:   map[string]string{"etc": "", "etc/motd": "hi", "bin": "", "bin/sh": "busybox"},
		},
		{
			name: "whiteouts hide lower layers only",
			layers: []ocitest.Layer{
				{Files: []ocitest.File{file("etc/a", "a"), file("etc/b", "b"), file("opt/x/y", "y"), file("f", "old")}},
				{Gzip: true, Files: []ocitest.File{file("etc/.wh.a", ""), file("opt/.wh..wh..opq", ""), file("opt/new", "n"), file(".wh.f", ""), file("f", "new")}},
			},
			want:   map[string]string{"etc/b": "b", "opt/new": "n", "f": "new"},
			absent: []string{"etc/a", "opt/x", "opt/x/y", "etc/.wh.a", "opt/.wh..wh..opq", ".wh.f"},
		},
		{
			name: "a file replaces a directory and its contents",
			layers: []ocitest.Layer{
				{Files: []ocitest.File{dir("d/"), file("d/child", "c")}},
				{Files: []ocitest.File{file("d", "now a file")}},
			},
			want:   map[string]string{"d": "now a file"},
			absent: []string{"d/child"},
		},
		{
			name:   "names that climb out stay inside the root",
			layers: []ocitest.Layer{{Files: []ocitest.File{file("../../etc/evil", "e"), file("./a/./b", "b")}}},
			want:   map[string]string{"etc/evil": "e", "a/b": "b"},
		},
		{
			name:   "later layers overwrite earlier files",
			layers: []ocitest.Layer{{Files: []ocitest.File{file("v", "1")}}, {Files: []ocitest.File{file("v", "2")}}},
			want:   map[string]string{"v": "2"},
		},
	} {
		for _, archive := range []bool{false, true} {
			name := tc.name + map[bool]string{false: " (layout)", true: " (archive)"}[archive]
			t.Run(name, func(t *testing.T) {
				entries, err := flatten(t, ocitest.Image{Layers: tc.layers}, archive)
				if err != nil {
					t.Fatal(err)
				}
				checkParentsFirst(t, entries)
				got := map[string]parsedEntry{}
				for _, e := range entries {
					got[e.Name] = e
				}
				for p, data := range tc.want {
					e, ok := got[p]
					if !ok {
						t.Errorf("%s missing from %v", p, entries)
						continue
					}
					if e.Data != data {
						t.Errorf("%s: %q, want %q", p, e.Data, data)
					}
				}
				for _, p := range tc.absent {
					if _, ok := got[p]; ok {
						t.Errorf("%s should be gone: %v", p, entries)
					}
				}
			})
		}
	}
}

func TestWriteRootfsHardLinksShareAnInode(t *testing.T) {
	entries, err := flatten(t, ocitest.Image{Layers: []ocitest.Layer{{Files: []ocitest.File{
		file("bin/busybox", "ELF"), hardlink("bin/ls", "bin/busybox"), hardlink("bin/cat", "/bin/busybox"),
	}}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]parsedEntry{}
	for i, e := range entries {
		e.trailerOffset = i
		got[e.Name] = e
	}
	target := got["bin/busybox"]
	if target.NLink != 3 || target.Data != "ELF" {
		t.Fatalf("target %+v: want nlink 3 and its data", target)
	}
	for _, l := range []string{"bin/ls", "bin/cat"} {
		e := got[l]
		if e.Ino != target.Ino || e.NLink != 3 || e.Data != "" || e.Mode != target.Mode {
			t.Errorf("%s: %+v, want inode %d, nlink 3, no data", l, e, target.Ino)
		}
		if e.trailerOffset < target.trailerOffset {
			t.Errorf("%s comes before its target: the kernel would create an empty file", l)
		}
	}
}

func TestOpenImageRejectsBadInput(t *testing.T) {
	tmp := t.TempDir()
	garbage := filepath.Join(tmp, "garbage.tar")
	os.WriteFile(garbage, bytes.Repeat([]byte{0x5a}, 4096), 0o644)
	emptyTar := filepath.Join(tmp, "empty.tar")
	ocitestEmptyTar(t, emptyTar)
	for _, tc := range []struct {
		name, ref, want string
		is              error
	}{
		{name: "registry reference", ref: "docker.io/library/busybox:latest", want: "not registry references", is: ErrUnsupportedImage},
		{name: "missing archive", ref: "oci-archive:" + filepath.Join(tmp, "nope.tar"), want: "no such file"},
		{name: "not a tar", ref: "oci-archive:" + garbage, want: "corrupt or not a tar"},
		{name: "tar without a layout", ref: "oci-archive:" + emptyTar, want: "no oci-layout"},
		{name: "directory without a layout", ref: "oci:" + tmp, want: "not an OCI image layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := openImage(tc.ref)
			if err == nil {
				img.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}
}

func ocitestEmptyTar(t *testing.T, p string) {
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	tw.WriteHeader(&tar.Header{Name: "hello", Typeflag: tar.TypeReg, Size: 2, Mode: 0o644})
	tw.Write([]byte("hi"))
	tw.Close()
	f.Close()
}

func TestWriteRootfsRejectsCorruptImages(t *testing.T) {
	for _, tc := range []struct {
		name string
		img  ocitest.Image
		want string
	}{
		{
			name: "layer does not match its digest",
			img:  ocitest.Image{Layers: []ocitest.Layer{{Files: []ocitest.File{file("a", strings.Repeat("x", 4096))}}}, CorruptLayer: 1},
			want: "corrupt image",
		},
		{
			name: "hard link to a file the image lacks",
			img:  ocitest.Image{Layers: []ocitest.Layer{{Files: []ocitest.File{hardlink("b", "missing")}}}},
			want: `hard link to "missing"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := flatten(t, tc.img, true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// Whatever the layers, the archive lists each path once, parents first,
// and never a whiteout file.
func TestWriteRootfsProperties(t *testing.T) {
	names := []string{"a", "b", "a/x", "a/y", "b/x", "a/x/deep", ".wh.a", "a/.wh.x", "a/.wh..wh..opq", ".wh.b"}
	rapid.Check(t, func(rt *rapid.T) {
		var layers []ocitest.Layer
		for range rapid.IntRange(1, 4).Draw(rt, "layers") {
			var l ocitest.Layer
			seen := map[string]bool{}
			for range rapid.IntRange(0, 6).Draw(rt, "files") {
				n := rapid.SampledFrom(names).Draw(rt, "name")
				if seen[n] {
					continue
				}
				seen[n] = true
				if rapid.Bool().Draw(rt, "dir") && !strings.Contains(path.Base(n), ".wh.") {
					l.Files = append(l.Files, dir(n+"/"))
				} else {
					l.Files = append(l.Files, file(n, n))
				}
			}
			layers = append(layers, l)
		}
		dirPath, err := os.MkdirTemp("", "rootfs-prop-")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dirPath)
		if err := ocitest.WriteLayout(dirPath, ocitest.Image{Layers: layers}); err != nil {
			rt.Fatal(err)
		}
		im, err := openImage("oci:" + dirPath)
		if err != nil {
			rt.Fatal(err)
		}
		defer im.Close()
		var buf bytes.Buffer
		if err := writeRootfs(im, &buf); err != nil {
			rt.Fatal(err)
		}
		entries := parseCPIO(t, buf.Bytes())
		checkParentsFirst(rt, entries)
		for _, e := range entries {
			if strings.HasPrefix(path.Base(e.Name), whiteoutPrefix) {
				rt.Fatalf("whiteout %s in the root file system", e.Name)
			}
		}
	})
}
