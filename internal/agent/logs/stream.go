package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// StreamOptions says how to read a stream.
type StreamOptions struct {
	Offset int64 // bytes of retained data to skip
	Follow bool  // keep streaming new bytes
	// Done reports whether the writer has finished for good (the task is
	// dead); a following Stream ends once Done is true and all is read.
	Done func() bool
	// Poll is how often a following Stream looks for new bytes (default 100ms).
	Poll time.Duration
	// Flush, when set, is called after each chunk written to the client.
	Flush func()
}

type logFile struct {
	f   *os.File
	ino uint64
}

// Stream copies stream's data in dir to w, oldest rotated file first. It
// returns nil at the end of the data (or, when following, when Done is true
// and everything was read), or ctx's error when ctx ends first.
func Stream(ctx context.Context, w io.Writer, dir, stream string, opts StreamOptions) error {
	if opts.Poll <= 0 {
		opts.Poll = 100 * time.Millisecond
	}
	files, err := openAll(dir, stream)
	if err != nil {
		return err
	}
	defer func() {
		for _, lf := range files {
			lf.f.Close()
		}
	}()
	if err := skip(files, opts.Offset); err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	for {
		for len(files) > 0 {
			if err := copyFile(w, files[0].f, buf, opts.Flush); err != nil {
				return err
			}
			if len(files) == 1 {
				break // the newest file we hold may still grow
			}
			files[0].f.Close()
			files = files[1:]
		}
		if !opts.Follow {
			return nil
		}
		// Done is read before looking for new bytes so that bytes written
		// just before the writer finished are still copied.
		done := opts.Done != nil && opts.Done()
		newer, err := newerFiles(dir, stream, files)
		if err != nil {
			return err
		}
		if len(newer) > 0 {
			files = append(files, newer...)
			continue
		}
		if len(files) > 0 {
			if grew, err := hasMore(files[0].f); err != nil || grew {
				if err != nil {
					return err
				}
				continue
			}
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(opts.Poll):
		}
	}
}

func copyFile(w io.Writer, f *os.File, buf []byte, flush func()) error {
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return fmt.Errorf("write log stream: %w", werr)
			}
			if flush != nil {
				flush()
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read log: %w", err)
		}
	}
}

func hasMore(f *os.File) (bool, error) {
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return false, fmt.Errorf("seek log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("stat log: %w", err)
	}
	return st.Size() > pos, nil
}

// skip advances through files by offset bytes.
func skip(files []logFile, offset int64) error {
	for _, lf := range files {
		if offset <= 0 {
			return nil
		}
		st, err := lf.f.Stat()
		if err != nil {
			return fmt.Errorf("stat log: %w", err)
		}
		n := min(offset, st.Size())
		if _, err := lf.f.Seek(n, io.SeekStart); err != nil {
			return fmt.Errorf("seek log: %w", err)
		}
		offset -= n
	}
	return nil
}

// names lists the stream's files, oldest first.
func names(dir, stream string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list logs: %w", err)
	}
	base := stream + ".log"
	type numbered struct {
		name string
		n    int
	}
	var found []numbered
	for _, e := range entries {
		switch {
		case e.Name() == base:
			found = append(found, numbered{e.Name(), 0})
		case strings.HasPrefix(e.Name(), base+"."):
			if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), base+".")); err == nil && n > 0 {
				found = append(found, numbered{e.Name(), n})
			}
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].n > found[j].n })
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = dir + string(os.PathSeparator) + f.name
	}
	return out, nil
}

// openAll opens the stream's files oldest first. A rotation may rename
// files between listing and opening, so the set is accepted only when the
// names still point at the inodes that were opened.
func openAll(dir, stream string) ([]logFile, error) {
	for attempt := 0; ; attempt++ {
		list, err := names(dir, stream)
		if err != nil {
			return nil, err
		}
		files := make([]logFile, 0, len(list))
		consistent := true
		for _, name := range list {
			f, err := os.Open(name)
			if errors.Is(err, os.ErrNotExist) {
				consistent = false
				break
			}
			if err != nil {
				closeAll(files)
				return nil, fmt.Errorf("open log: %w", err)
			}
			files = append(files, logFile{f: f, ino: inode(f)})
		}
		if consistent {
			again, err := names(dir, stream)
			if err != nil {
				closeAll(files)
				return nil, err
			}
			consistent = len(again) == len(files)
			for i := 0; consistent && i < len(again); i++ {
				st, err := os.Stat(again[i])
				sys, ok := statIno(st, err)
				consistent = ok && sys == files[i].ino
			}
		}
		if consistent || attempt == 50 {
			return files, nil
		}
		closeAll(files)
		time.Sleep(time.Millisecond)
	}
}

func statIno(st os.FileInfo, err error) (uint64, bool) {
	if err != nil {
		return 0, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return sys.Ino, true
}

func closeAll(files []logFile) {
	for _, lf := range files {
		lf.f.Close()
	}
}

// newerFiles returns the files written after the last one held: those that
// follow its inode in the current listing, or every file when it was
// already dropped by rotation (all that remain are newer then).
func newerFiles(dir, stream string, held []logFile) ([]logFile, error) {
	all, err := openAll(dir, stream)
	if err != nil {
		return nil, err
	}
	if len(held) == 0 {
		return all, nil
	}
	last := held[len(held)-1].ino
	idx := -1
	for i, lf := range all {
		if lf.ino == last {
			idx = i
		}
	}
	var keep, drop []logFile
	for i, lf := range all {
		if i > idx {
			keep = append(keep, lf)
		} else {
			drop = append(drop, lf)
		}
	}
	closeAll(drop)
	return keep, nil
}

func inode(f *os.File) uint64 {
	ino, _ := statIno(f.Stat())
	return ino
}
