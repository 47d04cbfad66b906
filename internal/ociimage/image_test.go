package ociimage

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"
	"time"

	digest "github.com/opencontainers/go-digest"
	v1 "github.com/opencontainers/image-spec/specs-go/v1"
)

func testImage(created time.Time) Image {
	return Image{
		Files:        []File{{Path: "/usr/bin/strata", Mode: 0o755, Data: []byte("#!/bin/sh\necho strata\n")}, {Path: "/etc/strata/server.yaml", Mode: 0o644, Data: []byte("data-dir: /var/lib/strata/server\n")}},
		Dirs:         []string{"/var/lib/strata"},
		Created:      created,
		Entrypoint:   []string{"/usr/bin/strata"},
		Cmd:          []string{"server", "--config", "/etc/strata/server.yaml"},
		Labels:       map[string]string{v1.AnnotationVersion: "0.1.0", v1.AnnotationRevision: "abc"},
		ExposedPorts: []string{"4680/tcp", "4681/tcp"},
		Volumes:      []string{"/var/lib/strata"},
		RefName:      "0.1.0",
	}
}

// TestBuildIsReproducible: the same input gives the same bytes, whatever
// the time of the build; another Created gives other bytes.
func TestBuildIsReproducible(t *testing.T) {
	at := time.Unix(1765000000, 0)
	a, err := Build(testImage(at))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // a build that leaked the clock would now differ
	b, err := Build(testImage(at))
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := a.Archive(at)
	rb, _ := b.Archive(at)
	if !bytes.Equal(ra, rb) || a.Manifest != b.Manifest {
		t.Fatalf("two builds differ: %s, %s", a.Manifest, b.Manifest)
	}
	c, _ := Build(testImage(at.Add(time.Second)))
	if c.Manifest == a.Manifest {
		t.Fatal("another Created time gave the same manifest")
	}
}

// TestLayoutIsConsistent: every descriptor names a blob of that digest and
// size; the config's diff id is the uncompressed layer's digest.
func TestLayoutIsConsistent(t *testing.T) {
	l, err := Build(testImage(time.Unix(1765000000, 0)))
	if err != nil {
		t.Fatal(err)
	}
	blob := func(d v1.Descriptor) []byte {
		t.Helper()
		data, ok := l.Files[path.Join("blobs", d.Digest.Algorithm().String(), d.Digest.Encoded())]
		if !ok || int64(len(data)) != d.Size || digest.FromBytes(data) != d.Digest {
			t.Fatalf("descriptor %+v does not match its blob", d)
		}
		return data
	}
	var index v1.Index
	if err := json.Unmarshal(l.Files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index: %v", err)
	}
	if index.Manifests[0].Annotations[v1.AnnotationRefName] != "0.1.0" {
		t.Fatalf("ref name: %+v", index.Manifests[0])
	}
	var m v1.Manifest
	json.Unmarshal(blob(index.Manifests[0]), &m)
	var cfg v1.Image
	json.Unmarshal(blob(m.Config), &cfg)
	if len(m.Layers) != 1 || len(cfg.RootFS.DiffIDs) != 1 || cfg.Config.Entrypoint[0] != "/usr/bin/strata" || cfg.Created.Unix() != 1765000000 {
		t.Fatalf("manifest %+v config %+v", m, cfg)
	}
	blob(m.Layers[0])
	if _, err := Build(Image{Files: []File{{Path: "relative/x"}}}); err == nil {
		t.Fatal("a relative path was accepted")
	}
}

// TestUmociUnpacks: the layout is one umoci (an independent OCI tool)
// reads, with the files, modes and times it was given.
func TestUmociUnpacks(t *testing.T) {
	umoci, err := exec.LookPath("umoci")
	if err != nil {
		t.Skip("umoci not installed")
	}
	at := time.Unix(1765000000, 0)
	l, err := Build(testImage(at))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := l.WriteDir(filepath.Join(dir, "layout")); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(umoci, "unpack", "--rootless", "--image", filepath.Join(dir, "layout")+":0.1.0", filepath.Join(dir, "bundle")).CombinedOutput()
	if err != nil {
		t.Fatalf("umoci unpack: %v\n%s", err, out)
	}
	st, err := os.Stat(filepath.Join(dir, "bundle", "rootfs", "usr", "bin", "strata"))
	if err != nil || st.Mode().Perm() != 0o755 || !st.ModTime().Equal(at) {
		t.Fatalf("unpacked binary: %v %v", st, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "bundle", "rootfs", "var", "lib", "strata")); err != nil || !st.IsDir() {
		t.Fatalf("data dir: %v", err)
	}
}
