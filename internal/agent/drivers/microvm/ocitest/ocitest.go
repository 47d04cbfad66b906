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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
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

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
}

// blobs maps digests to contents.
type blobs map[string][]byte

func (b blobs) add(mediaType string, data []byte) descriptor {
	sum := sha256.Sum256(data)
	d := descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}
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

// layout builds the files of an OCI image layout, by relative path.
func layout(img Image) (map[string][]byte, error) {
	b := blobs{}
	var layers []descriptor
	var diffIDs []string
	for i, l := range img.Layers {
		data, err := layerTar(l)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		mt := "application/vnd.oci.image.layer.v1.tar"
		if l.Gzip {
			mt += "+gzip"
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
	cfg, _ := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": img.Entrypoint, "Cmd": img.Cmd, "Env": img.Env, "WorkingDir": img.WorkingDir},
		"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs},
	})
	cd := b.add("application/vnd.oci.image.config.v1+json", cfg)
	man, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": cd, "layers": layers})
	md := b.add("application/vnd.oci.image.manifest.v1+json", man)
	idx, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []any{map[string]any{"mediaType": md.MediaType, "digest": md.Digest, "size": md.Size,
			"platform": map[string]string{"architecture": "amd64", "os": "linux"}}}})
	files := map[string][]byte{
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"index.json": idx,
	}
	for dg, data := range b {
		files["blobs/sha256/"+dg[len("sha256:"):]] = data
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
