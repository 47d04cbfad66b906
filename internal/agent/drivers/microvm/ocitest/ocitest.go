// Package ocitest builds small OCI images for tests: layers from a list of
// files, written as an OCI image layout directory or as an archive of one
// (what `oci:DIR` and `oci-archive:PATH` name). Nothing is downloaded: a
// runnable image is the host's static busybox and its applet links.
//
// It is test support: it must never be imported by production code.
package ocitest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	digest "github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// File is one member of a layer. Type is a tar type flag (default regular
// file); Linkname is the target of a symlink or hard link.
type File struct {
	Name     string
	Type     byte
	Mode     int64
	Data     []byte
	Linkname string
}

// Layer is one image layer.
type Layer struct {
	Files []File
	Gzip  bool
}

// Image is an image to write.
type Image struct {
	Layers     []Layer
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	// CorruptLayer, when >= 1, flips a byte of layer CorruptLayer-1 after
	// its digest was taken (bad-input tests).
	CorruptLayer int
}

// BusyboxLayer is a layer with the static busybox at /bin/busybox and
// links for sh and a few applets, from the host file at busybox.
func BusyboxLayer(busybox string) (Layer, error) {
	data, err := os.ReadFile(busybox)
	if err != nil {
		return Layer{}, err
	}
	l := Layer{Gzip: true, Files: []File{
		{Name: "bin/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "bin/busybox", Mode: 0o755, Data: data},
		{Name: "etc/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "etc/hostname", Mode: 0o644, Data: []byte("image\n")},
	}}
	for _, applet := range []string{"sh", "echo", "cat", "sleep", "ls", "env", "true", "false", "uname", "nproc", "free"} {
		l.Files = append(l.Files, File{Name: "bin/" + applet, Type: tar.TypeSymlink, Linkname: "busybox"})
	}
	return l, nil
}

// blobs maps digests to contents.
type blobs map[digest.Digest][]byte

func (b blobs) add(mediaType string, data []byte) ocispec.Descriptor {
	d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}
	b[d.Digest] = data
	return d
}

func layerTar(l Layer) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range l.Files {
		typ := f.Type
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: f.Name, Typeflag: typ, Mode: mode, Linkname: f.Linkname, ModTime: time.Unix(1700000000, 0)}
		if typ == tar.TypeReg {
			h.Size = int64(len(f.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if !l.Gzip {
		return buf.Bytes(), nil
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(buf.Bytes())
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return z.Bytes(), nil
}

// layout builds the files of an OCI image layout, by relative path, with
// the image-spec's types.
func layout(img Image) (map[string][]byte, error) {
	b := blobs{}
	var layers []ocispec.Descriptor
	var diffIDs []digest.Digest
	for i, l := range img.Layers {
		data, err := layerTar(l)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		mt := ocispec.MediaTypeImageLayer
		if l.Gzip {
			mt = ocispec.MediaTypeImageLayerGzip
		}
		d := b.add(mt, data)
		if img.CorruptLayer == i+1 {
			corrupt := append([]byte(nil), data...)
			corrupt[len(corrupt)/2] ^= 0xff
			b[d.Digest] = corrupt
		}
		layers = append(layers, d)
		diffIDs = append(diffIDs, d.Digest) // not checked by the driver
	}
	amd64 := ocispec.Platform{Architecture: "amd64", OS: "linux"}
	cfg, _ := json.Marshal(ocispec.Image{Platform: amd64,
		Config: ocispec.ImageConfig{Entrypoint: img.Entrypoint, Cmd: img.Cmd, Env: img.Env, WorkingDir: img.WorkingDir},
		RootFS: ocispec.RootFS{Type: "layers", DiffIDs: diffIDs}})
	cd := b.add(ocispec.MediaTypeImageConfig, cfg)
	man, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: cd, Layers: layers})
	md := b.add(ocispec.MediaTypeImageManifest, man)
	md.Platform = &amd64
	idx, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{md}})
	files := map[string][]byte{
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"index.json": idx,
	}
	for dg, data := range b {
		files["blobs/sha256/"+dg.Encoded()] = data
	}
	return files, nil
}

// WriteLayout writes img as an OCI image layout in dir.
func WriteLayout(dir string, img Image) error {
	files, err := layout(img)
	if err != nil {
		return err
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteArchive writes img as a tar of an OCI image layout at path.
func WriteArchive(path string, img Image) error {
	files, err := layout(img)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, n := range names {
		h := &tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: int64(fs.FileMode(0o644)), Size: int64(len(files[n])), ModTime: time.Unix(1700000000, 0)}
		if err := tw.WriteHeader(h); err != nil {
			f.Close()
			return err
		}
		if _, err := tw.Write(files[n]); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
