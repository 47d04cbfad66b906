package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// GrowJobStride separates the job ids of the copies GrowGoogleTaskEvents
// makes: copy k of job j is job j + k × GrowJobStride. The trace's job ids
// are below 10^11, so the copies' ids never meet.
const GrowJobStride = 1_000_000_000_000

// GrowOptions describe how GrowGoogleTaskEvents enlarges a task_events part.
type GrowOptions struct {
	// Copies is how many copies of the part are overlaid (≥ 1); copy 0 is
	// the part itself.
	Copies int
	// ShiftSeconds moves copy k later by k × ShiftSeconds.
	ShiftSeconds int64
	// MaxEvents, when > 0, keeps only the first MaxEvents events of the
	// result in time order.
	MaxEvents int
}

// GrowGoogleTaskEvents writes a larger task_events part of the same format:
// Copies copies of the part read from r, copy k shifted by k × ShiftSeconds
// and its job ids moved by k × GrowJobStride, merged in time order (ties in
// copy order, then in the part's order) and cut at MaxEvents. Every other
// column is copied byte for byte, so the copies have the part's tasks, sizes,
// priorities, event mix and per-task event order. It returns the number of
// events written. The same input and options always give the same bytes.
func GrowGoogleTaskEvents(name string, r io.Reader, w io.Writer, o GrowOptions) (int, error) {
	if o.Copies < 1 {
		return 0, fmt.Errorf("grow %s: copies must be at least 1, got %d", name, o.Copies)
	}
	if o.ShiftSeconds < 0 {
		return 0, fmt.Errorf("grow %s: shift must not be negative, got %d s", name, o.ShiftSeconds)
	}
	type row struct {
		time int64  // µs
		job  int64  // job id
		rest []byte // the row after its job id column, newline excluded
		head []byte // the missing_info column between timestamp and job id
	}
	var rows []row
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		fields := bytes.SplitN(text, []byte(","), 4)
		if len(fields) < 4 {
			return 0, &ParseError{File: name, Line: line, Column: taskColumnNames[len(fields)], Err: fmt.Errorf("row has %d columns, schema has %d", len(fields), teColumns)}
		}
		if line == 1 && string(bytes.TrimSpace(fields[0])) == taskColumnNames[0] {
			continue // a header naming the schema's first column
		}
		ts, err := strconv.ParseInt(string(bytes.TrimSpace(fields[0])), 10, 64)
		if err != nil {
			return 0, &ParseError{File: name, Line: line, Column: taskColumnNames[teTime], Err: fmt.Errorf("not an integer: %q", fields[0])}
		}
		job, err := strconv.ParseInt(string(bytes.TrimSpace(fields[2])), 10, 64)
		if err != nil || job < 0 || job >= GrowJobStride {
			return 0, &ParseError{File: name, Line: line, Column: taskColumnNames[teJob], Err: fmt.Errorf("not a job id below %d: %q", int64(GrowJobStride), fields[2])}
		}
		rows = append(rows, row{time: ts, job: job, head: slices.Clone(fields[1]), rest: slices.Clone(fields[3])})
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("grow %s: %w", name, err)
	}
	// Each copy is already in the part's order; a stable sort of the
	// concatenation by time keeps copy order, then part order, among ties.
	type ref struct {
		time int64
		copy int32
		row  int32
	}
	refs := make([]ref, 0, len(rows)*o.Copies)
	for k := 0; k < o.Copies; k++ {
		for i := range rows {
			refs = append(refs, ref{time: rows[i].time + int64(k)*o.ShiftSeconds*1_000_000, copy: int32(k), row: int32(i)})
		}
	}
	slices.SortStableFunc(refs, func(a, b ref) int {
		switch {
		case a.time < b.time:
			return -1
		case a.time > b.time:
			return 1
		}
		return 0
	})
	if o.MaxEvents > 0 && len(refs) > o.MaxEvents {
		refs = refs[:o.MaxEvents]
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var buf []byte
	for _, f := range refs {
		rw := &rows[f.row]
		buf = strconv.AppendInt(buf[:0], f.time, 10)
		buf = append(buf, ',')
		buf = append(buf, rw.head...)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, rw.job+int64(f.copy)*GrowJobStride, 10)
		buf = append(buf, ',')
		buf = append(buf, rw.rest...)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return 0, fmt.Errorf("grow %s: %w", name, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("grow %s: %w", name, err)
	}
	return len(refs), nil
}

// GrowGoogleTaskEventsFile grows the task_events part at in (plain or
// gzipped) into out, gzipped when out ends in ".gz" (at a fixed
// compression level and without a timestamp, so the same input gives the
// same file).
func GrowGoogleTaskEventsFile(in, out string, o GrowOptions) (int, error) {
	r, closeIn, err := openMaybeGzip(in)
	if err != nil {
		return 0, fmt.Errorf("open task events: %w", err)
	}
	defer closeIn()
	f, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	var w io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(out, ".gz") {
		zw, _ = gzip.NewWriterLevel(f, gzip.DefaultCompression)
		w = zw
	}
	n, err := GrowGoogleTaskEvents(filepath.Base(in), r, w, o)
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
		return 0, err
	}
	return n, nil
}
