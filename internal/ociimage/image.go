package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	_ "crypto/sha256" // go-digest hashes with it, once registered
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	digest "github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	v1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// File is one file of the image's layer, at an absolute path.
type File struct {
	Path string // e.g. /usr/bin/strata
	Mode int64  // permission bits, e.g. 0o755
	Data []byte
}

// Image is what to build.
type Image struct {
	Files []File
	// Dirs are directories to create empty (a data dir), besides the
	// parents of Files.
	Dirs []string
	// Created stamps the image, its history and every file of its layer.
	Created      time.Time
	Entrypoint   []string
	Cmd          []string
	Env          []string
	ExposedPorts []string // e.g. 4680/tcp
	Volumes      []string
	Labels       map[string]string
	OS, Arch     string // default linux, amd64
	// RefName names the image in the layout's index
	// (org.opencontainers.image.ref.name), e.g. the version.
	RefName string
}

// Layout is an OCI image layout: its files by relative path.
type Layout struct {
	Files map[string][]byte
	// Manifest is the digest of the image's manifest.
	Manifest digest.Digest
}

// Build makes img's layout.
func Build(img Image) (*Layout, error) {
	if img.OS == "" {
		img.OS = "linux"
	}
	if img.Arch == "" {
		img.Arch = "amd64"
	}
	created := img.Created.UTC()
	layerTar, err := layer(img.Files, img.Dirs, created)
	if err != nil {
		return nil, err
	}
	gz, err := gzipped(layerTar)
	if err != nil {
		return nil, err
	}
	l := &Layout{Files: map[string][]byte{}}
	layerDesc := l.blob(v1.MediaTypeImageLayerGzip, gz)
	cfg := v1.Image{
		Created:  &created,
		Platform: v1.Platform{OS: img.OS, Architecture: img.Arch},
		Config: v1.ImageConfig{Entrypoint: img.Entrypoint, Cmd: img.Cmd, Env: img.Env, Labels: img.Labels,
			ExposedPorts: set(img.ExposedPorts), Volumes: set(img.Volumes)},
		RootFS:  v1.RootFS{Type: "layers", DiffIDs: []digest.Digest{digest.FromBytes(layerTar)}},
		History: []v1.History{{Created: &created, CreatedBy: "strata-image (internal/ociimage)"}},
	}
	cfgJSON, err := canonical(cfg)
	if err != nil {
		return nil, err
	}
	cfgDesc := l.blob(v1.MediaTypeImageConfig, cfgJSON)
	manifest, err := canonical(v1.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: v1.MediaTypeImageManifest,
		Config: cfgDesc, Layers: []v1.Descriptor{layerDesc}, Annotations: map[string]string{v1.AnnotationCreated: created.Format(time.RFC3339)}})
	if err != nil {
		return nil, err
	}
	manDesc := l.blob(v1.MediaTypeImageManifest, manifest)
	l.Manifest = manDesc.Digest
	manDesc.Platform = &v1.Platform{OS: img.OS, Architecture: img.Arch}
	if img.RefName != "" {
		manDesc.Annotations = map[string]string{v1.AnnotationRefName: img.RefName}
	}
	index, err := canonical(v1.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: v1.MediaTypeImageIndex, Manifests: []v1.Descriptor{manDesc}})
	if err != nil {
		return nil, err
	}
	l.Files["index.json"] = index
	l.Files[v1.ImageLayoutFile], _ = canonical(v1.ImageLayout{Version: v1.ImageLayoutVersion})
	return l, nil
}

// blob adds data as a blob and returns its descriptor.
func (l *Layout) blob(mediaType string, data []byte) v1.Descriptor {
	d := digest.FromBytes(data)
	l.Files[path.Join("blobs", d.Algorithm().String(), d.Encoded())] = data
	return v1.Descriptor{MediaType: mediaType, Digest: d, Size: int64(len(data))}
}

func set(list []string) map[string]struct{} {
	if len(list) == 0 {
		return nil
	}
	out := make(map[string]struct{}, len(list))
	for _, s := range list {
		out[s] = struct{}{}
	}
	return out
}

// canonical is JSON in one fixed form (encoding/json sorts map keys).
func canonical(v any) ([]byte, error) {
	return json.Marshal(v)
}

// layer is the tar of files and dirs and every parent directory, sorted,
// each entry owned by root and stamped at created.
func layer(files []File, dirs []string, created time.Time) ([]byte, error) {
	type entry struct {
		name string
		file *File
	}
	entries := map[string]entry{}
	addDir := func(p string) {
		for d := path.Clean(p); d != "/" && d != "."; d = path.Dir(d) {
			entries[strings.TrimPrefix(d, "/")+"/"] = entry{name: strings.TrimPrefix(d, "/") + "/"}
		}
	}
	for _, d := range dirs {
		if !path.IsAbs(d) {
			return nil, fmt.Errorf("directory %q: want an absolute path", d)
		}
		addDir(d)
	}
	for i := range files {
		f := &files[i]
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path {
			return nil, fmt.Errorf("file %q: want a clean absolute path", f.Path)
		}
		addDir(path.Dir(f.Path))
		name := strings.TrimPrefix(f.Path, "/")
		if _, dup := entries[name]; dup {
			return nil, fmt.Errorf("file %q given twice", f.Path)
		}
		entries[name] = entry{name: name, file: f}
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := entries[n]
		h := &tar.Header{Name: n, ModTime: created, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if e.file == nil {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		} else {
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, e.file.Mode, int64(len(e.file.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if e.file != nil {
			if _, err := tw.Write(e.file.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gzipped compresses data with no name and no time in the header.
func gzipped(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sortedNames are the layout's paths in order.
func (l *Layout) sortedNames() []string {
	names := make([]string, 0, len(l.Files))
	for n := range l.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// WriteDir writes the layout into dir (created if need be).
func (l *Layout) WriteDir(dir string) error {
	for _, n := range l.sortedNames() {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, l.Files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Archive is the layout as one tar (oci-archive), stamped at created.
func (l *Layout) Archive(created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, n := range l.sortedNames() {
		for d := path.Dir(n); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var all []string
	for d := range dirs {
		all = append(all, d+"/")
	}
	all = append(all, l.sortedNames()...)
	sort.Strings(all)
	for _, n := range all {
		h := &tar.Header{Name: n, ModTime: created.UTC(), Uname: "root", Gname: "root", Format: tar.FormatPAX}
		data, isFile := l.Files[n]
		if isFile {
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(data))
		} else {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if isFile {
			if _, err := tw.Write(data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
