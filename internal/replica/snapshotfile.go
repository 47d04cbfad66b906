package replica

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/strata-dev/strata/api"
)

// An operator snapshot file (`strata operator snapshot save`) is one JSON
// header line followed by the state store in the FSM's snapshot encoding:
//
//	{"format":"strata-snapshot","version":1,"index":5929,"createTime":"…","payloadBytes":N,"payloadSHA256":"…"}\n
//	<N bytes: the FSM snapshot>
//
// The header's checksum lets a restore refuse a truncated or altered file
// before it touches anything.

const (
	snapshotFormat  = "strata-snapshot"
	snapshotVersion = 1
	// maxSnapshotHeader bounds the header line.
	maxSnapshotHeader = 64 << 10
)

// snapshotHeader is the first line of a snapshot file.
type snapshotHeader struct {
	Format        string    `json:"format"`
	Version       int       `json:"version"`
	Index         uint64    `json:"index"`
	CreateTime    time.Time `json:"createTime"`
	PayloadBytes  int64     `json:"payloadBytes"`
	PayloadSHA256 string    `json:"payloadSHA256"`
}

// writeSnapshotFile writes a snapshot file of snap to w, spooling the
// payload through a temporary file in dir to learn its checksum first.
func writeSnapshotFile(w io.Writer, snap Snapshot, dir string, now time.Time) (*snapshotHeader, error) {
	tmp, err := os.CreateTemp(dir, "snapshot-save-*")
	if err != nil {
		return nil, fmt.Errorf("spool snapshot: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	sum := sha256.New()
	counted := &countWriter{w: io.MultiWriter(tmp, sum)}
	if err := snap.Encode(counted); err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	h := &snapshotHeader{Format: snapshotFormat, Version: snapshotVersion, Index: snap.Index(), CreateTime: now.UTC(),
		PayloadBytes: counted.n, PayloadSHA256: hex.EncodeToString(sum.Sum(nil))}
	line, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if _, err := io.Copy(w, tmp); err != nil {
		return nil, err
	}
	return h, nil
}

// verifiedSnapshot is an uploaded snapshot file that passed every check:
// its payload is spooled in file and decodes into a whole store.
type verifiedSnapshot struct {
	header *snapshotHeader
	file   *os.File // the payload, positioned at its start
}

func (v *verifiedSnapshot) Close() {
	name := v.file.Name()
	v.file.Close()
	os.Remove(name)
}

// readSnapshotFile checks a snapshot file completely — header, size,
// checksum, and that the payload decodes into a state store — spooling
// the payload into dir; verify decodes it. Any failure wraps
// ErrBadSnapshot and leaves nothing behind.
func readSnapshotFile(r io.Reader, dir string, verify func(io.Reader) error) (*verifiedSnapshot, error) {
	tmp, err := os.CreateTemp(dir, "snapshot-restore-*")
	if err != nil {
		return nil, fmt.Errorf("spool snapshot: %w", err)
	}
	v := &verifiedSnapshot{file: tmp}
	ok := false
	defer func() {
		if !ok {
			v.Close()
		}
	}()
	if v.header, err = checkSnapshot(r, tmp); err != nil {
		return nil, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if err := verify(tmp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSnapshot, err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	ok = true
	return v, nil
}

// CheckSnapshotFile checks a snapshot file's header, size and checksum (not
// its contents: the server decodes them before a restore) and describes it.
func CheckSnapshotFile(r io.Reader) (api.SnapshotInfo, error) {
	h, err := checkSnapshot(r, io.Discard)
	if err != nil {
		return api.SnapshotInfo{}, err
	}
	return api.SnapshotInfo{Index: h.Index, Bytes: h.PayloadBytes, SHA256: h.PayloadSHA256}, nil
}

// checkSnapshot reads a snapshot file's header and copies its payload to
// payload, checking size and checksum.
func checkSnapshot(r io.Reader, payload io.Writer) (*snapshotHeader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	line, err := readLine(br, maxSnapshotHeader)
	if err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrBadSnapshot, err)
	}
	var h snapshotHeader
	if err := json.Unmarshal(line, &h); err != nil || h.Format != snapshotFormat {
		return nil, fmt.Errorf("%w: the file does not start with a strata snapshot header", ErrBadSnapshot)
	}
	if h.Version != snapshotVersion {
		return nil, fmt.Errorf("%w: version %d, this server reads version %d", ErrBadSnapshot, h.Version, snapshotVersion)
	}
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(payload, sum), io.LimitReader(br, h.PayloadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read payload: %v", ErrBadSnapshot, err)
	}
	if n != h.PayloadBytes {
		return nil, fmt.Errorf("%w: payload is %d bytes, the header says %d (truncated or appended to)", ErrBadSnapshot, n, h.PayloadBytes)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != h.PayloadSHA256 {
		return nil, fmt.Errorf("%w: checksum mismatch: the payload's SHA-256 is %s, the header says %s", ErrBadSnapshot, got, h.PayloadSHA256)
	}
	return &h, nil
}

func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		part, isPrefix, err := br.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, part...)
		if len(line) > limit {
			return nil, fmt.Errorf("longer than %d bytes", limit)
		}
		if !isPrefix {
			return line, nil
		}
	}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
