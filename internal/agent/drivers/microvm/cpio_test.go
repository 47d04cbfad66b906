package microvm

import (
	"bytes"
	"fmt"
	"io/fs"
	"strconv"
	"testing"
)

// parsedEntry is a member read back from a newc archive.
type parsedEntry struct {
	Name          string
	Mode          uint32 // st_mode
	Ino, NLink    uint32
	Major, Minor  uint32
	Data          string
	trailerOffset int
}

// parseCPIO reads every archive concatenated in data, the way the kernel
// does, and fails the test on a malformed one.
func parseCPIO(t *testing.T, data []byte) []parsedEntry {
	t.Helper()
	var out []parsedEntry
	off := 0
	hex := func(i int) uint32 {
		v, err := strconv.ParseUint(string(data[off+6+8*i:off+6+8*i+8]), 16, 32)
		if err != nil {
			t.Fatalf("offset %d field %d: %v", off, i, err)
		}
		return uint32(v)
	}
	align := func(n int) int { return (n + 3) &^ 3 }
	for off < len(data) {
		if data[off] == 0 { // padding between archives
			off++
			continue
		}
		if string(data[off:off+6]) != "070701" {
			t.Fatalf("offset %d: bad magic %q", off, data[off:off+6])
		}
		e := parsedEntry{Ino: hex(0), Mode: hex(1), NLink: hex(4), Major: hex(9), Minor: hex(10)}
		size, nameLen := int(hex(6)), int(hex(11))
		nameStart := off + 110
		e.Name = string(data[nameStart : nameStart+nameLen-1])
		dataStart := align(nameStart + nameLen)
		e.Data = string(data[dataStart : dataStart+size])
		off = align(dataStart + size)
		if e.Name == "TRAILER!!!" {
			continue
		}
		out = append(out, e)
	}
	return out
}

func TestCPIOWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	cw := newCPIOWriter(&buf)
	for _, e := range []cpioEntry{
		{Name: "dir", Mode: fs.ModeDir | 0o750},
		{Name: "dir/link", Mode: fs.ModeSymlink | 0o777, Linkname: "../target"},
		{Name: "dev/null", Mode: fs.ModeDevice | fs.ModeCharDevice | 0o666, RdevMajor: 1, RdevMinor: 3},
		{Name: "setuid", Mode: fs.ModeSetuid | 0o755},
	} {
		if err := cw.WriteHeader(&e); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []struct{ name, data string }{{"dir/a", "x"}, {"dir/b", "hello, world"}, {"empty", ""}} {
		if err := cw.WriteFile(cpioEntry{Name: f.name, Mode: 0o644}, []byte(f.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%512 != 0 {
		t.Errorf("archive is %d bytes, not a multiple of 512", buf.Len())
	}
	got := map[string]parsedEntry{}
	for _, e := range parseCPIO(t, buf.Bytes()) {
		got[e.Name] = e
	}
	for _, want := range []struct {
		name string
		mode uint32
		data string
	}{
		{"dir", modeDir | 0o750, ""},
		{"dir/link", modeSymlink | 0o777, "../target"},
		{"dev/null", modeChar | 0o666, ""},
		{"setuid", modeRegular | 0o4755, ""},
		{"dir/a", modeRegular | 0o644, "x"},
		{"dir/b", modeRegular | 0o644, "hello, world"},
		{"empty", modeRegular | 0o644, ""},
	} {
		e, ok := got[want.name]
		switch {
		case !ok:
			t.Errorf("%s missing", want.name)
		case e.Mode != want.mode:
			t.Errorf("%s: mode %o, want %o", want.name, e.Mode, want.mode)
		case e.Data != want.data:
			t.Errorf("%s: data %q, want %q", want.name, e.Data, want.data)
		}
	}
	if e := got["dev/null"]; e.Major != 1 || e.Minor != 3 {
		t.Errorf("dev/null: device %d:%d, want 1:3", e.Major, e.Minor)
	}
}

func TestCPIOWriterRefusesBadEntries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry cpioEntry
	}{
		{"empty name", cpioEntry{Name: "/", Mode: 0o644}},
		{"NUL in name", cpioEntry{Name: "a\x00b", Mode: 0o644}},
		{"over 4 GiB", cpioEntry{Name: "big", Mode: 0o644, Size: 1 << 32}},
		{"irregular mode", cpioEntry{Name: "x", Mode: fs.ModeIrregular}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cw := newCPIOWriter(&bytes.Buffer{})
			if err := cw.WriteHeader(&tc.entry); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	cw := newCPIOWriter(&bytes.Buffer{})
	if err := cw.WriteHeader(&cpioEntry{Name: "short", Mode: 0o644, Size: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := cw.Write([]byte("toolong")); err == nil {
		t.Error("wrote past the entry's size")
	}
	if err := cw.Close(); err != errCPIOShortEntry {
		t.Errorf("close with data owed: %v, want %v", err, errCPIOShortEntry)
	}
}

func (e parsedEntry) String() string { return fmt.Sprintf("%s(%o)", e.Name, e.Mode) }
