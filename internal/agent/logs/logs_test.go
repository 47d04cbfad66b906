package logs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestWriterRotatesAtSizeBound(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, "stdout", 10, 3)
	if err != nil {
		t.Fatal(err)
	}
	// 35 bytes: files of 10 each, the oldest 10 dropped.
	if _, err := w.Write([]byte("aaaaaaaaaabbbbbbbbbbccccccccccddddd")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	want := map[string]string{
		"stdout.log.2": "bbbbbbbbbb",
		"stdout.log.1": "cccccccccc",
		"stdout.log":   "ddddd",
	}
	for name, content := range want {
		got, err := os.ReadFile(dir + "/" + name)
		if err != nil || string(got) != content {
			t.Errorf("%s = %q, %v; want %q", name, got, err, content)
		}
	}
	if _, err := os.Stat(dir + "/stdout.log.3"); !os.IsNotExist(err) {
		t.Errorf("stdout.log.3 kept beyond 3 files")
	}

	var out bytes.Buffer
	if err := Stream(context.Background(), &out, dir, "stdout", StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "bbbbbbbbbbccccccccccddddd" {
		t.Errorf("Stream = %q", got)
	}
	out.Reset()
	if err := Stream(context.Background(), &out, dir, "stdout", StreamOptions{Offset: 15}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "cccccddddd" {
		t.Errorf("Stream offset 15 = %q", got)
	}
}

func TestWriterAppendsToExistingFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(FileName(dir, "stderr"), []byte("12345678"), 0o644)
	w, _ := NewWriter(dir, "stderr", 10, 2)
	w.Write([]byte("abcd"))
	w.Close()
	a, _ := os.ReadFile(dir + "/stderr.log.1")
	b, _ := os.ReadFile(dir + "/stderr.log")
	if string(a) != "12345678ab" || string(b) != "cd" {
		t.Errorf("files = %q, %q", a, b)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestStreamFollowsAcrossRotations writes numbered lines through many
// rotations while a follower reads; the follower must see every line once,
// in order, and stop when the writer is done.
func TestStreamFollowsAcrossRotations(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, "stdout", 64, 4)
	if err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	var out syncBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- Stream(context.Background(), &out, dir, "stdout", StreamOptions{
			Follow: true, Done: done.Load, Poll: time.Millisecond,
		})
	}()
	var want strings.Builder
	for i := 0; i < 200; i++ {
		line := fmt.Sprintf("line %03d\n", i)
		want.WriteString(line)
		w.Write([]byte(line))
		if i%20 == 0 {
			// Give the follower a chance to catch up, as a live task would:
			// a follower more than maxFiles rotations behind loses data.
			deadline := time.Now().Add(5 * time.Second)
			for !strings.HasSuffix(out.String(), line) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		}
	}
	w.Close()
	done.Store(true)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("follower did not stop after done")
	}
	if out.String() != want.String() {
		t.Errorf("followed output differs:\n got %q\nwant %q", out.String(), want.String())
	}
}

func TestStreamFollowStopsOnContext(t *testing.T) {
	dir := t.TempDir()
	w, _ := NewWriter(dir, "stdout", 0, 0)
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- Stream(ctx, &syncBuffer{}, dir, "stdout", StreamOptions{Follow: true, Poll: time.Millisecond})
	}()
	cancel()
	select {
	case err := <-errc:
		if err != context.Canceled {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("follower ignored cancellation")
	}
}
