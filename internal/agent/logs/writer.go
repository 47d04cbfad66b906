package logs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Defaults for a task's log files.
const (
	DefaultMaxBytes = 10 << 20
	DefaultMaxFiles = 3
	// DefaultKeepFree is what a writer leaves free on its file system:
	// below it, log lines are dropped, so that logs alone never fill the
	// node's disk and a restart's spec, the shims' exit files and the
	// agent's database still have room (issue 18 defect 9).
	DefaultKeepFree = 64 << 20
)

// retryFull is how often a writer looks at its file system's free space,
// and how long one that is dropping waits before it tries again.
const retryFull = time.Second

// FileName is the live file of a stream in dir; rotated files add ".1", ".2", …
func FileName(dir, stream string) string {
	return filepath.Join(dir, stream+".log")
}

func rotatedName(dir, stream string, i int) string {
	if i == 0 {
		return FileName(dir, stream)
	}
	return fmt.Sprintf("%s.%d", FileName(dir, stream), i)
}

// Writer appends to a stream's live file and rotates it when it reaches
// maxBytes, keeping maxFiles files in all. It is safe for concurrent use.
//
// A log never stops its task: Write always takes all of p. When the file
// system is full (a write fails) or has less free than KeepFree, what
// cannot be written is dropped and counted; the writer looks again every
// second, and once there is room it writes a line that says how much it
// dropped and why, then goes on. The task's pipe stays open, so the task
// never meets EPIPE or SIGPIPE because of its log.
type Writer struct {
	dir, stream string
	maxBytes    int64
	maxFiles    int

	mu   sync.Mutex
	file *os.File // nil after a rotation that could not open the new file
	size int64

	keepFree int64
	free     func() (int64, error) // free bytes of dir's file system
	now      func() time.Time
	nextLook time.Time
	dropped  int64  // since the last note
	total    int64  // ever
	why      string // why the bytes since the last note were dropped
	lastByte byte   // of what was written last, so a note starts a line
}

// NewWriter opens (appending to) the live file of stream in dir. Values <= 0
// take the defaults; it keeps DefaultKeepFree free (KeepFree changes it).
func NewWriter(dir, stream string, maxBytes int64, maxFiles int) (*Writer, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxFiles <= 0 {
		maxFiles = DefaultMaxFiles
	}
	w := &Writer{dir: dir, stream: stream, maxBytes: maxBytes, maxFiles: maxFiles,
		keepFree: DefaultKeepFree, now: time.Now, lastByte: '\n'}
	w.free = func() (int64, error) { return freeBytes(dir) }
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

// KeepFree sets the free bytes the writer leaves on its file system (0:
// it writes until a write fails).
func (w *Writer) KeepFree(bytes int64) {
	w.mu.Lock()
	w.keepFree = bytes
	w.mu.Unlock()
}

// Dropped is how many bytes the writer dropped, ever.
func (w *Writer) Dropped() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

// freeBytes is the space an unprivileged writer has on dir's file system
// (root may use a few reserved blocks more).
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

func (w *Writer) open() error {
	f, err := os.OpenFile(FileName(w.dir, w.stream), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat log: %w", err)
	}
	w.file, w.size = f, st.Size()
	return nil
}

// Write writes p, splitting it across files so that no file exceeds
// maxBytes. It always reports all of p written: what the file system did
// not take is dropped (see Writer).
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.room() {
		w.drop(int64(len(p)))
		return len(p), nil
	}
	if n, err := w.write(p); err != nil {
		w.why = reason(err)
		w.nextLook = w.now().Add(retryFull)
		w.drop(int64(len(p) - n))
	}
	return len(p), nil
}

func (w *Writer) drop(n int64) {
	w.dropped += n
	w.total += n
}

// reason says why a write failed, in the log's words.
func reason(err error) string {
	if errors.Is(err, syscall.ENOSPC) {
		return "no space left on device"
	}
	if errors.Is(err, syscall.EDQUOT) {
		return "disk quota exceeded"
	}
	return err.Error()
}

// room reports whether to write now. It looks at the file system at most
// every retryFull: below KeepFree it drops; with room again after drops,
// it first writes the note that says what was dropped.
func (w *Writer) room() bool {
	now := w.now()
	if now.Before(w.nextLook) {
		return w.dropped == 0
	}
	w.nextLook = now.Add(retryFull)
	if w.keepFree > 0 {
		if free, err := w.free(); err == nil && free < w.keepFree {
			if w.dropped == 0 {
				w.why = fmt.Sprintf("the file system has %s free, below the %s kept for the node", mib(free), mib(w.keepFree))
			}
			return false
		}
	}
	return w.note()
}

// note writes the line that says what was dropped since the last one, if
// anything was; it reports whether it had nothing to say or said it.
func (w *Writer) note() bool {
	if w.dropped == 0 {
		return true
	}
	note := fmt.Sprintf("[strata: dropped %d bytes of this log: %s]\n", w.dropped, w.why)
	if w.lastByte != '\n' {
		note = "\n" + note
	}
	if _, err := w.write([]byte(note)); err != nil {
		w.why = reason(err)
		return false
	}
	w.dropped = 0
	return true
}

func mib(n int64) string { return fmt.Sprintf("%dMiB", n>>20) }

// write writes p across rotations; it returns what it wrote.
func (w *Writer) write(p []byte) (int, error) {
	if w.file == nil {
		if err := w.open(); err != nil {
			return 0, err
		}
	}
	written := 0
	for len(p) > 0 {
		if w.size >= w.maxBytes {
			if err := w.rotate(); err != nil {
				return written, err
			}
		}
		chunk := p
		if room := w.maxBytes - w.size; int64(len(chunk)) > room {
			chunk = chunk[:room]
		}
		n, err := w.file.Write(chunk)
		written += n
		w.size += int64(n)
		if n > 0 {
			w.lastByte = chunk[n-1]
		}
		if err != nil {
			return written, fmt.Errorf("write log: %w", err)
		}
		p = p[n:]
	}
	return written, nil
}

// rotate shifts every file one number up, dropping the oldest, and opens a
// fresh live file. When the new file cannot be opened the writer has none
// until a later write opens it.
func (w *Writer) rotate() error {
	err := w.file.Close()
	w.file = nil
	if err != nil {
		return fmt.Errorf("close log: %w", err)
	}
	if w.maxFiles == 1 {
		if err := os.Truncate(FileName(w.dir, w.stream), 0); err != nil {
			return fmt.Errorf("truncate log: %w", err)
		}
		return w.open()
	}
	if err := os.Remove(rotatedName(w.dir, w.stream, w.maxFiles-1)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("rotate log: %w", err)
	}
	for i := w.maxFiles - 2; i >= 0; i-- {
		err := os.Rename(rotatedName(w.dir, w.stream, i), rotatedName(w.dir, w.stream, i+1))
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("rotate log: %w", err)
		}
	}
	return w.open()
}

// Close says what was dropped since the last note, in the reserve too (a
// line), when the file system takes it, and closes the live file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.note()
	if w.file == nil {
		return nil
	}
	return w.file.Close()
}
