package microvm

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Why not containerd's archive package (archive.Apply): it unpacks a layer
// into a directory on the host, as root, to be mounted; a micro-VM's root
// file system is a cpio archive streamed into the guest's initramfs, never
// written out on the host. The layers are flattened here from their
// headers (flatTree) and their files copied straight into the cpio.

// Whiteout names of the OCI layer format: ".wh.NAME" removes NAME of the
// layers below; ".wh..wh..opq" in a directory hides everything the layers
// below put in it.
const (
	whiteoutPrefix = ".wh."
	whiteoutOpaque = ".wh..wh..opq"
)

// layerCompression says how a layer's media type is compressed.
func layerCompression(mediaType string) (string, error) {
	switch mediaType {
	case mediaLayerTar, "application/vnd.docker.image.rootfs.diff.tar":
		return "", nil
	case mediaLayerGzip, mediaDockerLayer:
		return "gzip", nil
	}
	return "", fmt.Errorf("layer media type %q is not supported (want an uncompressed or gzip tar layer)", mediaType)
}

// decompress wraps a layer blob in the decompressor its media type names.
func decompress(rc io.ReadCloser, mediaType string) (io.ReadCloser, error) {
	kind, err := layerCompression(mediaType)
	if err != nil {
		rc.Close()
		return nil, err
	}
	if kind == "" {
		return rc, nil
	}
	br := bufio.NewReaderSize(rc, 64<<10)
	zr, err := gzip.NewReader(br)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("gzip layer: %w", err)
	}
	return &gzipLayer{zr: zr, raw: rc}, nil
}

type gzipLayer struct {
	zr  *gzip.Reader
	raw io.ReadCloser
}

func (g *gzipLayer) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err == io.EOF {
		// Drain the blob so its digest is checked.
		if _, derr := io.Copy(io.Discard, g.raw); derr != nil {
			return n, derr
		}
	}
	return n, err
}

func (g *gzipLayer) Close() error {
	g.zr.Close()
	return g.raw.Close()
}

// fsEntry is the surviving version of one path of the flattened image.
type fsEntry struct {
	hdr   *tar.Header
	layer int
	seq   int    // ordinal of the member in its layer
	ino   uint32 // regular files that are hard-link targets
	links uint32
}

// flatTree is the image's file system after applying every layer, keyed
// by clean relative path.
type flatTree map[string]*fsEntry

// cleanMember turns a tar member name into a clean relative path; ok is
// false for the root itself and for names that climb out of it.
func cleanMember(name string) (string, bool) {
	p := path.Clean("/" + name)
	if p == "/" {
		return "", false
	}
	return p[1:], true
}

// removeTree deletes p and everything below it.
func (t flatTree) removeTree(p string) {
	delete(t, p)
	t.removeChildren(p)
}

func (t flatTree) removeChildren(dir string) {
	prefix := dir + "/"
	for k := range t {
		if strings.HasPrefix(k, prefix) {
			delete(t, k)
		}
	}
}

// addLayer applies one layer's members (headers only) onto the tree:
// whiteouts first, since they hide only what lies below the layer.
func (t flatTree) addLayer(layer int, hdrs []*tar.Header) {
	for _, h := range hdrs {
		p, ok := cleanMember(h.Name)
		if !ok {
			continue
		}
		dir, base := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		switch {
		case base == whiteoutOpaque:
			if dir != "" {
				t.removeChildren(dir)
			} else {
				for k := range t {
					delete(t, k)
				}
			}
		case strings.HasPrefix(base, whiteoutPrefix):
			t.removeTree(path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix)))
		}
	}
	for seq, h := range hdrs {
		p, ok := cleanMember(h.Name)
		if !ok || strings.HasPrefix(path.Base(p), whiteoutPrefix) {
			continue
		}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeRegA, tar.TypeDir, tar.TypeSymlink, tar.TypeLink,
			tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		default:
			continue // PAX globals, GNU volume headers and the like carry no file
		}
		if h.Typeflag != tar.TypeDir {
			t.removeChildren(p) // a non-directory replaces a directory and all in it
		}
		// A member beneath a non-directory replaces that with a directory.
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if e, ok := t[d]; ok && e.hdr.Typeflag != tar.TypeDir {
				delete(t, d)
			}
		}
		t[p] = &fsEntry{hdr: h, layer: layer, seq: seq}
	}
}

// readHeaders lists a layer's members without keeping their data.
func readHeaders(r io.Reader) ([]*tar.Header, error) {
	tr := tar.NewReader(r)
	var hdrs []*tar.Header
	for {
		h, err := tr.Next()
		if err == io.EOF {
			// Read what follows the end-of-archive blocks: the digest
			// check runs when the blob reaches EOF.
			if _, err := io.Copy(io.Discard, r); err != nil {
				return nil, err
			}
			return hdrs, nil
		}
		if err != nil {
			return nil, err
		}
		hdrs = append(hdrs, h)
	}
}

// writeRootfs flattens the image's layers into a newc cpio archive on w: the
// directories, links and device nodes first (sorted, so parents precede
// children), then the regular files in layer order, then hard links, which
// the kernel's unpacker resolves by inode number.
func writeRootfs(img *image, w io.Writer) error {
	tree := flatTree{}
	for i := range img.layers {
		rc, err := img.openLayer(i)
		if err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
		hdrs, err := readHeaders(rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("layer %d (%s): %w", i, img.layers[i].Digest, err)
		}
		tree.addLayer(i, hdrs)
	}
	cw := newCPIOWriter(w)
	links, err := tree.resolveHardLinks(cw)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(tree))
	for p := range tree {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	written := map[string]bool{}
	for _, p := range paths {
		if err := writeParents(cw, tree, written, p); err != nil {
			return err
		}
		e := tree[p]
		if written[p] {
			continue
		}
		switch e.hdr.Typeflag {
		case tar.TypeReg, tar.TypeRegA, tar.TypeLink:
			continue
		}
		if err := cw.WriteHeader(entryFor(p, e)); err != nil {
			return err
		}
		written[p] = true
	}
	for i := range img.layers {
		if err := writeLayerFiles(img, i, tree, cw); err != nil {
			return fmt.Errorf("layer %d (%s): %w", i, img.layers[i].Digest, err)
		}
	}
	for _, p := range links {
		e := tree[p]
		target := tree[e.hdr.Linkname]
		ce := entryFor(p, target)
		ce.Name, ce.Size, ce.Ino, ce.NLink = p, 0, target.ino, target.links
		if err := cw.WriteHeader(ce); err != nil {
			return err
		}
	}
	return cw.Close()
}

// resolveHardLinks gives every hard-link target an inode number and a link
// count, and returns the link paths in order. A link must point at a
// regular file that survives in the image.
func (t flatTree) resolveHardLinks(cw *cpioWriter) ([]string, error) {
	var links []string
	for p, e := range t {
		if e.hdr.Typeflag != tar.TypeLink {
			continue
		}
		target, _ := cleanMember(e.hdr.Linkname)
		te, ok := t[target]
		if !ok || (te.hdr.Typeflag != tar.TypeReg && te.hdr.Typeflag != tar.TypeRegA) {
			return nil, fmt.Errorf("%s: hard link to %q, which is not a regular file of the image", p, e.hdr.Linkname)
		}
		e.hdr.Linkname = target
		if te.ino == 0 {
			te.ino, te.links = cw.allocIno(), 1
		}
		te.links++
		links = append(links, p)
	}
	sort.Strings(links)
	return links, nil
}

// writeParents writes the missing parent directories of p.
func writeParents(cw *cpioWriter, tree flatTree, written map[string]bool, p string) error {
	dir := path.Dir(p)
	if dir == "." || written[dir] {
		return nil
	}
	if err := writeParents(cw, tree, written, dir); err != nil {
		return err
	}
	written[dir] = true
	if e, ok := tree[dir]; ok && e.hdr.Typeflag == tar.TypeDir {
		return cw.WriteHeader(entryFor(dir, e))
	}
	return cw.WriteHeader(&cpioEntry{Name: dir, Mode: fs.ModeDir | 0o755})
}

func entryFor(p string, e *fsEntry) *cpioEntry {
	h := e.hdr
	ce := &cpioEntry{
		Name: p, Mode: h.FileInfo().Mode(), UID: h.Uid, GID: h.Gid, MTime: h.ModTime.Unix(),
		RdevMajor: uint32(h.Devmajor), RdevMinor: uint32(h.Devminor),
		Ino: e.ino, NLink: e.links,
	}
	switch h.Typeflag {
	case tar.TypeSymlink:
		ce.Linkname = h.Linkname
	case tar.TypeReg, tar.TypeRegA:
		ce.Size = h.Size
	}
	return ce
}

// writeLayerFiles copies the regular files of layer i that survive in the
// flattened tree.
func writeLayerFiles(img *image, i int, tree flatTree, cw *cpioWriter) error {
	rc, err := img.openLayer(i)
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for seq := 0; ; seq++ {
		h, err := tr.Next()
		if err == io.EOF {
			_, err = io.Copy(io.Discard, rc)
			return err
		}
		if err != nil {
			return err
		}
		p, ok := cleanMember(h.Name)
		if !ok {
			continue
		}
		e, ok := tree[p]
		if !ok || e.layer != i || e.seq != seq || (h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeRegA) {
			continue
		}
		if err := cw.WriteHeader(entryFor(p, e)); err != nil {
			return err
		}
		if n, err := io.Copy(cw, tr); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		} else if n != h.Size {
			return fmt.Errorf("%s: %d of %d bytes", p, n, h.Size)
		}
	}
}
