package microvm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// cpioEntry is one member of a "newc" (SVR4, no CRC) cpio archive, the
// format the Linux kernel unpacks as an initramfs.
type cpioEntry struct {
	Name  string      // relative path without a leading "/", e.g. "bin/sh"
	Mode  fs.FileMode // type and permission bits (Go's representation)
	UID   int
	GID   int
	MTime int64
	Size  int64 // regular files: bytes of data that follow
	Ino   uint32
	NLink uint32
	// RdevMajor and RdevMinor are the device numbers of device nodes.
	RdevMajor, RdevMinor uint32
	// Linkname is a symlink's target; it is written as the entry's data.
	Linkname string
}

// Unix file type bits, as cpio stores them.
const (
	modeSocket  = 0o140000
	modeSymlink = 0o120000
	modeRegular = 0o100000
	modeBlock   = 0o060000
	modeDir     = 0o040000
	modeChar    = 0o020000
	modeFIFO    = 0o010000
)

// unixMode converts Go's FileMode into the st_mode bits cpio wants.
func unixMode(m fs.FileMode) (uint32, error) {
	bits := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		bits |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		bits |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		bits |= 0o1000
	}
	switch {
	case m.IsRegular():
		return bits | modeRegular, nil
	case m&fs.ModeDir != 0:
		return bits | modeDir, nil
	case m&fs.ModeSymlink != 0:
		return bits | modeSymlink, nil
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0:
		return bits | modeChar, nil
	case m&fs.ModeDevice != 0:
		return bits | modeBlock, nil
	case m&fs.ModeNamedPipe != 0:
		return bits | modeFIFO, nil
	case m&fs.ModeSocket != 0:
		return bits | modeSocket, nil
	}
	return 0, fmt.Errorf("cpio: unsupported file mode %v", m)
}

// cpioWriter writes a newc archive. Entries must come parents first: the
// kernel creates no missing directories.
type cpioWriter struct {
	w       *bufio.Writer
	n       int64 // bytes written, for padding
	remain  int64 // data still owed by the current entry
	nextIno uint32
}

func newCPIOWriter(w io.Writer) *cpioWriter {
	return &cpioWriter{w: bufio.NewWriterSize(w, 64<<10), nextIno: 1 << 20}
}

// errCPIOShortEntry is returned when an entry's data is shorter than its
// header said.
var errCPIOShortEntry = errors.New("cpio: entry data shorter than its size")

// WriteHeader starts an entry. A symlink's target is written with it; a
// regular file's Size bytes must follow through Write. Ino 0 takes a fresh
// inode number.
func (c *cpioWriter) WriteHeader(e *cpioEntry) error {
	if c.remain != 0 {
		return errCPIOShortEntry
	}
	mode, err := unixMode(e.Mode)
	if err != nil {
		return fmt.Errorf("%s: %w", e.Name, err)
	}
	name := strings.TrimLeft(e.Name, "/")
	if name == "" || strings.ContainsRune(name, 0) {
		return fmt.Errorf("cpio: bad entry name %q", e.Name)
	}
	size := e.Size
	if e.Mode&fs.ModeSymlink != 0 {
		size = int64(len(e.Linkname))
	} else if !e.Mode.IsRegular() {
		size = 0
	}
	if size > 0xffffffff {
		return fmt.Errorf("cpio: %s: %d bytes is over the format's 4 GiB limit", name, size)
	}
	ino := e.Ino
	if ino == 0 {
		ino = c.allocIno()
	}
	nlink := e.NLink
	if nlink == 0 {
		nlink = 1
		if e.Mode.IsDir() {
			nlink = 2
		}
	}
	mtime := e.MTime
	if mtime < 0 || mtime > 0xffffffff {
		mtime = 0
	}
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, mode, uint32(e.UID), uint32(e.GID), nlink, uint32(mtime), uint32(size),
		0, 0, e.RdevMajor, e.RdevMinor, len(name)+1, 0)
	if err := c.write([]byte(hdr)); err != nil {
		return err
	}
	if err := c.write(append([]byte(name), 0)); err != nil {
		return err
	}
	if err := c.pad(); err != nil {
		return err
	}
	if e.Mode&fs.ModeSymlink != 0 {
		if err := c.write([]byte(e.Linkname)); err != nil {
			return err
		}
		return c.pad()
	}
	c.remain = size
	return nil
}

func (c *cpioWriter) allocIno() uint32 {
	c.nextIno++
	return c.nextIno
}

// Write writes data of the current regular file.
func (c *cpioWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.remain {
		return 0, fmt.Errorf("cpio: write of %d bytes exceeds the entry's remaining %d", len(p), c.remain)
	}
	if err := c.write(p); err != nil {
		return 0, err
	}
	c.remain -= int64(len(p))
	if c.remain == 0 {
		if err := c.pad(); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// WriteFile writes a whole regular file.
func (c *cpioWriter) WriteFile(e cpioEntry, data []byte) error {
	e.Size = int64(len(data))
	if err := c.WriteHeader(&e); err != nil {
		return err
	}
	_, err := c.Write(data)
	return err
}

// Close writes the trailer and flushes. It does not close the underlying
// writer.
func (c *cpioWriter) Close() error {
	if c.remain != 0 {
		return errCPIOShortEntry
	}
	if err := c.WriteHeader(&cpioEntry{Name: "TRAILER!!!", Mode: 0, Ino: 0, NLink: 1}); err != nil {
		return err
	}
	// The kernel reads the archive in 512-byte blocks only for the
	// compressed case; pad to 512 anyway so archives concatenate cleanly.
	for c.n%512 != 0 {
		if err := c.write([]byte{0}); err != nil {
			return err
		}
	}
	return c.w.Flush()
}

func (c *cpioWriter) write(p []byte) error {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return err
}

func (c *cpioWriter) pad() error {
	for c.n%4 != 0 {
		if err := c.write([]byte{0}); err != nil {
			return err
		}
	}
	return nil
}
