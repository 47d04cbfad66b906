package microvm

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Image reference schemes the driver reads without a registry or daemon.
const (
	schemeOCIArchive = "oci-archive:" // a tar of an OCI image layout
	schemeOCIDir     = "oci:"         // an OCI image layout directory
)

// ErrUnsupportedImage is wrapped when an image reference names a source the
// driver cannot read (a registry reference, say).
var ErrUnsupportedImage = errors.New("unsupported image reference")

// OCI media types the driver understands: the image-spec's, and
// Docker's schema 2 ones that registries still serve.
const (
	mediaIndex        = ocispec.MediaTypeImageIndex
	mediaManifest     = ocispec.MediaTypeImageManifest
	mediaDockerList   = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaDockerManif  = "application/vnd.docker.distribution.manifest.v2+json"
	mediaLayerTar     = ocispec.MediaTypeImageLayer
	mediaLayerGzip    = ocispec.MediaTypeImageLayerGzip
	mediaDockerLayer  = "application/vnd.docker.image.rootfs.diff.tar.gzip"
	maxJSONBlobBytes  = 4 << 20
	maxLayerCount     = 128
	digestAlgoSHA256  = "sha256:"
	annotationRefName = ocispec.AnnotationRefName
)

// The layout's documents are the image-spec's types
// (github.com/opencontainers/image-spec/specs-go/v1).
type (
	descriptor   = ocispec.Descriptor
	indexJSON    = ocispec.Index
	manifestJSON = ocispec.Manifest
	configJSON   = ocispec.Image
)

// ImageConfig is the part of an OCI image config the guest init uses.
type ImageConfig struct {
	Entrypoint []string `json:"Entrypoint"`
	Cmd        []string `json:"Cmd"`
	Env        []string `json:"Env"`
	WorkingDir string   `json:"WorkingDir"`
}

// imageConfigOf keeps what the guest init uses of an image's config.
func imageConfigOf(c ocispec.ImageConfig) ImageConfig {
	return ImageConfig{Entrypoint: c.Entrypoint, Cmd: c.Cmd, Env: c.Env, WorkingDir: c.WorkingDir}
}

// blobStore opens the blobs of one OCI image layout.
type blobStore interface {
	// open returns the blob's content; it fails when the blob is absent.
	open(digest string) (io.ReadCloser, error)
	Close() error
}

// image is one resolved image: its config and its layers, bottom first.
type image struct {
	ref    string
	store  blobStore
	config ImageConfig
	layers []descriptor
}

// openImage resolves ref (oci-archive:PATH or oci:DIR) to the linux/amd64
// manifest of the layout and reads its config. The caller closes it.
func openImage(ref string) (*image, error) {
	var store blobStore
	var err error
	switch {
	case strings.HasPrefix(ref, schemeOCIArchive):
		store, err = openArchiveStore(strings.TrimPrefix(ref, schemeOCIArchive))
	case strings.HasPrefix(ref, schemeOCIDir):
		store, err = openDirStore(strings.TrimPrefix(ref, schemeOCIDir))
	default:
		return nil, fmt.Errorf("image %q: %w: the microvm driver reads %sPATH (a tar of an OCI image layout) and %sDIR (an OCI image layout directory), not registry references", ref, ErrUnsupportedImage, schemeOCIArchive, schemeOCIDir)
	}
	if err != nil {
		return nil, fmt.Errorf("image %q: %w", ref, err)
	}
	img, err := resolve(ref, store)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("image %q: %w", ref, err)
	}
	return img, nil
}

func (i *image) Close() error { return i.store.Close() }

// openLayer returns the uncompressed tar stream of layer n; digests are
// checked when the stream reaches its end.
func (i *image) openLayer(n int) (io.ReadCloser, error) {
	d := i.layers[n]
	rc, err := openVerified(i.store, d)
	if err != nil {
		return nil, err
	}
	return decompress(rc, d.MediaType)
}

func resolve(ref string, store blobStore) (*image, error) {
	var idx indexJSON
	if err := readJSONBlob(store, "index.json", &idx); err != nil {
		return nil, err
	}
	desc, err := pickManifest(store, idx, 0)
	if err != nil {
		return nil, err
	}
	var m manifestJSON
	if err := readVerifiedJSON(store, desc, &m); err != nil {
		return nil, err
	}
	if len(m.Layers) > maxLayerCount {
		return nil, fmt.Errorf("manifest %s: %d layers, at most %d are read", desc.Digest, len(m.Layers), maxLayerCount)
	}
	for _, l := range m.Layers {
		if _, err := layerCompression(l.MediaType); err != nil {
			return nil, fmt.Errorf("layer %s: %w", l.Digest, err)
		}
	}
	var cfg configJSON
	if err := readVerifiedJSON(store, m.Config, &cfg); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if cfg.Architecture != "" && cfg.Architecture != "amd64" {
		return nil, fmt.Errorf("image is for architecture %q; the microvm driver boots amd64 guests", cfg.Architecture)
	}
	return &image{ref: ref, store: store, config: imageConfigOf(cfg.Config), layers: m.Layers}, nil
}

// pickManifest follows nested indexes to the first linux/amd64 (or
// platform-less) image manifest.
func pickManifest(store blobStore, idx indexJSON, depth int) (descriptor, error) {
	if depth > 4 {
		return descriptor{}, errors.New("image indexes nested more than 4 deep")
	}
	for _, d := range idx.Manifests {
		if p := d.Platform; p != nil && (p.OS != "linux" || p.Architecture != "amd64") {
			continue
		}
		switch d.MediaType {
		case mediaManifest, mediaDockerManif, "":
			return d, nil
		case mediaIndex, mediaDockerList:
			var sub indexJSON
			if err := readVerifiedJSON(store, d, &sub); err != nil {
				return descriptor{}, err
			}
			return pickManifest(store, sub, depth+1)
		}
	}
	return descriptor{}, errors.New("index.json names no linux/amd64 image manifest")
}

func readJSONBlob(store blobStore, name string, v any) error {
	rc, err := store.open(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxJSONBlobBytes+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > maxJSONBlobBytes {
		return fmt.Errorf("%s is larger than %d bytes", name, maxJSONBlobBytes)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	return nil
}

func readVerifiedJSON(store blobStore, d descriptor, v any) error {
	if d.Size > maxJSONBlobBytes {
		return fmt.Errorf("blob %s: %d bytes is larger than %d", d.Digest, d.Size, maxJSONBlobBytes)
	}
	rc, err := openVerified(store, d)
	if err != nil {
		return err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode blob %s: %w", d.Digest, err)
	}
	return nil
}

// blobPath is where a digest lives in a layout: blobs/<algo>/<hex>.
func blobPath(digest string) (string, error) {
	hexPart, ok := strings.CutPrefix(digest, digestAlgoSHA256)
	if !ok || len(hexPart) != 64 {
		return "", fmt.Errorf("digest %q: want sha256:<64 hex digits>", digest)
	}
	if _, err := hex.DecodeString(hexPart); err != nil {
		return "", fmt.Errorf("digest %q: %w", digest, err)
	}
	return path.Join("blobs", "sha256", hexPart), nil
}

// openVerified opens a blob whose size and sha256 are checked as it is read:
// the final Read reports a mismatch instead of io.EOF.
func openVerified(store blobStore, d descriptor) (io.ReadCloser, error) {
	p, err := blobPath(string(d.Digest))
	if err != nil {
		return nil, err
	}
	rc, err := store.open(p)
	if err != nil {
		return nil, err
	}
	return &verifiedReader{rc: rc, want: d, h: sha256.New()}, nil
}

type verifiedReader struct {
	rc   io.ReadCloser
	want descriptor
	h    hash.Hash
	n    int64
}

func (v *verifiedReader) Read(p []byte) (int, error) {
	n, err := v.rc.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.want.Size > 0 && v.n > v.want.Size {
		return n, fmt.Errorf("blob %s: longer than its %d bytes", v.want.Digest, v.want.Size)
	}
	if err == io.EOF {
		if v.want.Size > 0 && v.n != v.want.Size {
			return n, fmt.Errorf("blob %s: %d bytes, the manifest says %d", v.want.Digest, v.n, v.want.Size)
		}
		if got := digestAlgoSHA256 + hex.EncodeToString(v.h.Sum(nil)); got != string(v.want.Digest) {
			return n, fmt.Errorf("blob %s: content has digest %s (corrupt image)", v.want.Digest, got)
		}
	}
	return n, err
}

func (v *verifiedReader) Close() error { return v.rc.Close() }

// dirStore is an OCI layout directory.
type dirStore struct{ root string }

func openDirStore(dir string) (*dirStore, error) {
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
		return nil, fmt.Errorf("not an OCI image layout: %w", err)
	}
	return &dirStore{root: dir}, nil
}

func (s *dirStore) open(name string) (io.ReadCloser, error) {
	f, err := os.Open(filepath.Join(s.root, filepath.FromSlash(name)))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return f, nil
}

func (s *dirStore) Close() error { return nil }

// archiveStore is a tar of an OCI layout, read in place: one pass finds
// where each member's data lies.
type archiveStore struct {
	f       *os.File
	members map[string]archiveMember
}

type archiveMember struct{ offset, size int64 }

// countingReader counts what has been read through it, so the tar
// reader's position in the file is known after each header.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func openArchiveStore(file string) (*archiveStore, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	cr := &countingReader{r: f}
	tr := tar.NewReader(cr)
	members := map[string]archiveMember{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("read archive %s: %w (corrupt or not a tar)", file, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		// After Next the data of a plain member starts at the position
		// reached; sparse members are not part of OCI layouts.
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		members[name] = archiveMember{offset: cr.n, size: h.Size}
	}
	if _, ok := members["oci-layout"]; !ok {
		f.Close()
		return nil, fmt.Errorf("archive %s has no oci-layout file: not an OCI image layout", file)
	}
	return &archiveStore{f: f, members: members}, nil
}

func (s *archiveStore) open(name string) (io.ReadCloser, error) {
	m, ok := s.members[name]
	if !ok {
		return nil, fmt.Errorf("archive has no %s", name)
	}
	return io.NopCloser(io.NewSectionReader(s.f, m.offset, m.size)), nil
}

func (s *archiveStore) Close() error { return s.f.Close() }
