package logs

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Defaults for a task's log files.
const (
	DefaultMaxBytes = 10 << 20
	DefaultMaxFiles = 3
)

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
type Writer struct {
	dir, stream string
	maxBytes    int64
	maxFiles    int

	mu   sync.Mutex
	file *os.File
	size int64
}

// NewWriter opens (appending to) the live file of stream in dir. Values <= 0
// take the defaults.
func NewWriter(dir, stream string, maxBytes int64, maxFiles int) (*Writer, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxFiles <= 0 {
		maxFiles = DefaultMaxFiles
	}
	w := &Writer{dir: dir, stream: stream, maxBytes: maxBytes, maxFiles: maxFiles}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
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

// Write writes p, splitting it across files so that no file exceeds maxBytes.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
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
		if err != nil {
			return written, fmt.Errorf("write log: %w", err)
		}
		p = p[n:]
	}
	return written, nil
}

// rotate shifts every file one number up, dropping the oldest, and opens a
// fresh live file.
func (w *Writer) rotate() error {
	if err := w.file.Close(); err != nil {
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

// Close closes the live file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.file.Close()
}
