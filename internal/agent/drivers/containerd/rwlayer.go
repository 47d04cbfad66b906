package containerd

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A container's writable layer moves with its checkpoint: a process may
// hold files open there (a log in /tmp, a socket's path), and criu restores
// them by path, size and content. With the overlayfs snapshotter the layer
// is one directory, the snapshot's upperdir, holding exactly what the
// container changed: new and changed files, whiteouts (character devices
// 0/0) for what it removed, and opaque directories (trusted.overlay.opaque).
// The source tars that directory into the image while the container is
// frozen (so it matches the memory), and the target unpacks it into the
// upperdir of the new container's snapshot before criu runs.

// Why not containerd's archive package (archive.WriteDiff, archive.Apply
// with OverlayConvertWhiteout), which does this for image layers: the
// layer comes from another node and is unpacked as root into a snapshot
// the restored task runs on, so it is treated as untrusted with rules that
// package does not have (it restores any device node and any extended
// attribute, and has no bound on entries or bytes): every name once and
// created exclusively, only whiteout devices, only overlay and user
// attributes, bounds on entries and size on both sides (readRWLayer). And
// the source tars the upperdir as overlay keeps it (whiteout devices, the
// opaque attribute), which WriteDiff would rediff against the image.

// rwLayerFile is the writable layer's tar in a checkpoint image.
const rwLayerFile = "rootfs-diff.tar"

// maxRWLayerBytes bounds what a target unpacks from one layer.
const maxRWLayerBytes = 8 << 30

// xattrPrefix is how archive/tar names extended attributes in PAX records.
const xattrPrefix = "SCHILY.xattr."

// upperDir returns the overlay upper directory of the container's root
// filesystem snapshot, or "" when the snapshotter keeps no such directory
// (the native snapshotter copies the whole image).
func (d *Driver) upperDir(ctx context.Context, containerID string) (string, error) {
	c, err := d.client.LoadContainer(ctx, containerID)
	if err != nil {
		return "", err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return "", err
	}
	mounts, err := d.client.SnapshotService(info.Snapshotter).Mounts(ctx, info.SnapshotKey)
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", info.SnapshotKey, err)
	}
	for _, m := range mounts {
		if m.Type != "overlay" {
			continue
		}
		for _, o := range m.Options {
			if v, ok := strings.CutPrefix(o, "upperdir="); ok {
				return v, nil
			}
		}
	}
	return "", nil
}

// writeLayer writes the tree under dir to w as a tar: regular files,
// directories, symbolic links, hard links, fifos and character devices
// (overlay whiteouts), with owner, mode, times and the extended attributes
// carriedXattr allows (overlay's opaque marks). Unix sockets are left out:
// criu binds a listening socket's path again when it restores it. A layer
// of more than maxRWLayerBytes fails: the target would refuse it.
func writeLayer(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	var written int64
	links := map[[2]uint64]string{} // (dev, ino) of a file with several links -> first name
	err := filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSocket != 0 {
			return nil // criu binds a listening socket's path again itself
		}
		if fi.Mode().IsRegular() {
			if written += fi.Size(); written > maxRWLayerBytes {
				return fmt.Errorf("larger than %d bytes: not carried", int64(maxRWLayerBytes))
			}
		}
		target := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if target, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(fi, target)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		hdr.Name = filepath.ToSlash(rel)
		hdr.Uname, hdr.Gname = "", ""
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
			if fi.Mode().IsRegular() && st.Nlink > 1 {
				key := [2]uint64{uint64(st.Dev), st.Ino}
				if first, ok := links[key]; ok {
					hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
				} else {
					links[key] = hdr.Name
				}
			}
		}
		if x, err := readXattrs(path); err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		} else if len(x) > 0 {
			hdr.PAXRecords = map[string]string{}
			for k, v := range x {
				hdr.PAXRecords[xattrPrefix+k] = v
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, hdr.Size)
		return err
	})
	if err != nil {
		return fmt.Errorf("writable layer %s: %w", dir, err)
	}
	return tw.Close()
}

// readXattrs returns the extended attributes of path that a layer carries
// (carriedXattr), not following a symbolic link.
func readXattrs(path string) (map[string]string, error) {
	size, err := unix.Llistxattr(path, nil)
	if errors.Is(err, unix.ENOTSUP) {
		return nil, nil
	}
	if err != nil || size == 0 {
		return nil, err
	}
	buf := make([]byte, size)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if !carriedXattr(name) {
			continue
		}
		vs, err := unix.Lgetxattr(path, name, nil)
		if err != nil {
			return nil, fmt.Errorf("xattr %s: %w", name, err)
		}
		val := make([]byte, vs)
		m, err := unix.Lgetxattr(path, name, val)
		if err != nil {
			return nil, fmt.Errorf("xattr %s: %w", name, err)
		}
		out[name] = string(val[:m])
	}
	return out, nil
}

// readLayer unpacks a tar written by writeLayer into dir, the upper
// directory of a new snapshot (empty). The tar comes from another node and
// is treated as untrusted: names must stay inside dir (no absolute paths,
// no "..", nothing below a symbolic link), every name appears once and is
// created exclusively (so nothing the tar made earlier is followed), hard
// links point at regular files of the layer, the only devices are
// overlay's whiteouts (character devices 0/0), the only extended
// attributes overlay's own (trusted.overlay.*) and user.*, and times are
// set without following links.
func readLayer(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	var total int64
	seen := map[string]byte{} // cleaned name -> entry type
	type dirTimes struct {
		path string
		hdr  *tar.Header
	}
	var dirs []dirTimes // directory times are set last: their entries change them
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("writable layer: %w", err)
		}
		path, err := layerPath(dir, hdr.Name)
		if err != nil {
			return err
		}
		if _, dup := seen[path]; dup {
			return fmt.Errorf("writable layer: entry %q appears twice", hdr.Name)
		}
		if len(seen) >= maxRWLayerEntries {
			return fmt.Errorf("writable layer: more than %d entries", maxRWLayerEntries)
		}
		seen[path] = hdr.Typeflag
		total += hdr.Size
		if total > maxRWLayerBytes {
			return fmt.Errorf("writable layer: larger than %d bytes", int64(maxRWLayerBytes))
		}
		mode := uint32(hdr.Mode) & 0o7777
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(path, 0o700); err != nil {
				return fmt.Errorf("writable layer: %w", err)
			}
		case tar.TypeReg:
			if err := writeLayerFile(path, tr, hdr.Size); err != nil {
				return fmt.Errorf("writable layer: %w", err)
			}
		case tar.TypeSymlink:
			if err := os.Symlink(hdr.Linkname, path); err != nil {
				return fmt.Errorf("writable layer: %w", err)
			}
		case tar.TypeLink:
			first, err := layerPath(dir, hdr.Linkname)
			if err != nil {
				return err
			}
			if seen[first] != tar.TypeReg {
				return fmt.Errorf("writable layer: hard link %q to %q, not a file of the layer", hdr.Name, hdr.Linkname)
			}
			if err := os.Link(first, path); err != nil {
				return fmt.Errorf("writable layer: %w", err)
			}
			continue // the first name carries owner, mode and attributes
		case tar.TypeChar:
			if hdr.Devmajor != 0 || hdr.Devminor != 0 {
				return fmt.Errorf("writable layer: %s: device %d:%d (only whiteouts, 0:0, are carried)", hdr.Name, hdr.Devmajor, hdr.Devminor)
			}
			if err := unix.Mknod(path, unix.S_IFCHR|mode&0o777, 0); err != nil {
				return fmt.Errorf("writable layer: %s: %w", hdr.Name, err)
			}
		case tar.TypeFifo:
			if err := unix.Mknod(path, unix.S_IFIFO|mode&0o777, 0); err != nil {
				return fmt.Errorf("writable layer: %s: %w", hdr.Name, err)
			}
		default:
			return fmt.Errorf("writable layer: %s: unsupported entry type %q", hdr.Name, hdr.Typeflag)
		}
		if err := os.Lchown(path, hdr.Uid, hdr.Gid); err != nil {
			return err
		}
		for k, v := range hdr.PAXRecords {
			name, ok := strings.CutPrefix(k, xattrPrefix)
			if !ok {
				continue
			}
			if !carriedXattr(name) {
				return fmt.Errorf("writable layer: %s: extended attribute %s is not carried", hdr.Name, name)
			}
			if err := unix.Lsetxattr(path, name, []byte(v), 0); err != nil {
				return fmt.Errorf("writable layer: %s: xattr %s: %w", hdr.Name, name, err)
			}
		}
		if hdr.Typeflag != tar.TypeSymlink {
			// The object at path is the one made above (exclusively, under
			// parents that are not links): chmod does not leave the layer.
			if err := os.Chmod(path, fs.FileMode(mode&0o777)|modeBits(mode)); err != nil {
				return err
			}
		}
		if hdr.Typeflag == tar.TypeDir {
			dirs = append(dirs, dirTimes{path, hdr})
			continue
		}
		if err := setTimes(path, hdr); err != nil {
			return err
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := setTimes(dirs[i].path, dirs[i].hdr); err != nil {
			return err
		}
	}
	return nil
}

// maxRWLayerEntries bounds how many entries a target unpacks.
const maxRWLayerEntries = 1 << 20

// carriedXattr says whether an extended attribute moves with a layer:
// overlay's own marks and user attributes; never security.* (file
// capabilities, labels) or other trusted.* names.
func carriedXattr(name string) bool {
	return strings.HasPrefix(name, "trusted.overlay.") || strings.HasPrefix(name, "user.")
}

// setTimes sets path's access and modification times from hdr without
// following a symbolic link.
func setTimes(path string, hdr *tar.Header) error {
	ts := []unix.Timespec{unix.NsecToTimespec(hdr.AccessTime.UnixNano()), unix.NsecToTimespec(hdr.ModTime.UnixNano())}
	if hdr.AccessTime.IsZero() {
		ts[0] = ts[1]
	}
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
}

// modeBits turns setuid, setgid and sticky bits of a tar mode into Go's.
func modeBits(mode uint32) fs.FileMode {
	var m fs.FileMode
	if mode&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if mode&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

func writeLayerFile(path string, r io.Reader, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, r, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// layerPath is name inside dir, refused when it would leave dir or pass
// through a symbolic link.
func layerPath(dir, name string) (string, error) {
	clean := filepath.Clean("/" + name)
	if name == "" || filepath.IsAbs(name) || strings.Contains("/"+name+"/", "/../") || clean == "/" {
		return "", fmt.Errorf("writable layer: entry %q leaves the layer", name)
	}
	path := filepath.Join(dir, clean)
	for p := filepath.Dir(path); len(p) > len(dir); p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("writable layer: entry %q is below a symbolic link", name)
		}
	}
	return path, nil
}

// writeLayerTo writes the layer under upper into the file path.
func writeLayerTo(path, upper string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if err := writeLayer(f, upper); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// unpackLayer puts the writable layer a checkpoint image in dir carries
// into the upper directory of the container's new snapshot. An image
// without one (dumped on a node whose snapshotter keeps no upper
// directory) is fine; a layer this node cannot put anywhere fails the
// restore (the move is aborted): memory restored without the files it
// was using would run on the image's.
func (d *Driver) unpackLayer(ctx context.Context, containerID, dir string) error {
	f, err := os.Open(filepath.Join(dir, rwLayerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	upper, err := d.upperDir(ctx, containerID)
	if err != nil {
		return err
	}
	if upper == "" {
		return fmt.Errorf("the checkpoint carries the container's writable layer, but this node's snapshotter keeps no upper directory to restore it into")
	}
	return readLayer(f, upper)
}
