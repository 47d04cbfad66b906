package migrate

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImageTarRoundTrip: the images of several tasks arrive file by file.
func TestImageTarRoundTrip(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{"web/pages-1.img": strings.Repeat("p", 10000), "web/core.img": "core", "log/inventory.img": "inv"}
	for name, body := range files {
		p := filepath.Join(src, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte(body), 0o600)
	}
	var buf bytes.Buffer
	if err := writeImageTar(&buf, map[string]string{"web": filepath.Join(src, "web"), "log": filepath.Join(src, "log")}); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	n, err := readImageTar(&buf, dst, map[string]bool{"web": true, "log": true}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(10000+4+3) {
		t.Errorf("read %d bytes", n)
	}
	for name, body := range files {
		if got, _ := os.ReadFile(filepath.Join(dst, name)); string(got) != body {
			t.Errorf("%s = %q", name, got)
		}
	}
}

// TestReadImageTarRefuses: an image may only hold regular files of the
// allocation's own tasks, inside the root, within the size bound.
func TestReadImageTarRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		hdr  tar.Header
		body string
		want string
	}{
		{"escapes the root", tar.Header{Name: "web/../../etc/passwd", Typeflag: tar.TypeReg}, "x", "not a file of a task"},
		{"another task", tar.Header{Name: "other/core.img", Typeflag: tar.TypeReg}, "x", "not a file of a task"},
		{"a symlink", tar.Header{Name: "web/link", Typeflag: tar.TypeSymlink, Linkname: "/etc"}, "", "only regular files"},
		{"too large", tar.Header{Name: "web/pages.img", Typeflag: tar.TypeReg}, strings.Repeat("a", 2048), "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			hdr := tc.hdr
			hdr.Size, hdr.Mode = int64(len(tc.body)), 0o600
			tw.WriteHeader(&hdr)
			tw.Write([]byte(tc.body))
			tw.Close()
			root := t.TempDir()
			_, err := readImageTar(&buf, root, map[string]bool{"web": true}, 1024)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("readImageTar = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestHTTPImageTransportSendsDigest: the stream's SHA-256 follows it as a
// trailer, the token and figures as headers, and the receipt comes back.
func TestHTTPImageTransportSendsDigest(t *testing.T) {
	payload := strings.Repeat("image bytes ", 5000)
	var gotAuth, gotAlloc, gotSum, computed string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotAlloc = r.Header.Get("Authorization"), r.Header.Get(headerAllocID)
		h := sha256.New()
		io.Copy(h, r.Body)
		computed, gotSum = hex.EncodeToString(h.Sum(nil)), r.Trailer.Get(trailerImageSHA256)
		json.NewEncoder(w).Encode(ImageReceipt{Outcome: "committed", RestoreMs: 7})
	}))
	defer srv.Close()
	rec, err := HTTPImageTransport{}.Send(context.Background(), srv.URL, ImageOffer{AllocID: "a1", MigrationID: "m1", Token: "tok"}, strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Outcome != "committed" || rec.RestoreMs != 7 {
		t.Errorf("receipt %+v", rec)
	}
	if gotAuth != "Bearer tok" || gotAlloc != "a1" {
		t.Errorf("headers: auth %q alloc %q", gotAuth, gotAlloc)
	}
	if gotSum == "" || gotSum != computed {
		t.Errorf("trailer digest %q, stream's %q", gotSum, computed)
	}
}

// TestImageDigestReadAfterTheTar: the target reads the sender's digest
// even when the body's end (with the trailer) arrives only after the tar
// was read to its end marker. Before the fix the target checked the
// trailer right after the tar and found it empty: moves aborted with
// "does not match the sender's \"\"" depending on how the last chunks
// arrived.
func TestImageDigestReadAfterTheTar(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "web"), 0o700)
	os.WriteFile(filepath.Join(src, "web", "pages-1.img"), bytes.Repeat([]byte("p"), 100000), 0o600)
	var tarBuf bytes.Buffer
	if err := writeImageTar(&tarBuf, map[string]string{"web": filepath.Join(src, "web")}); err != nil {
		t.Fatal(err)
	}
	tarLen := int64(tarBuf.Len())
	consumed := make(chan struct{}) // the target has read every byte of the tar
	var gotErr error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = &notifyAfter{r: r.Body, left: tarLen, done: consumed}
		_, gotErr = readImageBody(r, t.TempDir(), map[string]bool{"web": true}, 1<<30)
		json.NewEncoder(w).Encode(ImageReceipt{Outcome: "committed"})
	}))
	defer srv.Close()
	// The sender's body ends only once the target has read the whole tar.
	image := io.MultiReader(&tarBuf, gateEOF{consumed})
	if _, err := (HTTPImageTransport{}).Send(context.Background(), srv.URL, ImageOffer{AllocID: "a1", MigrationID: "m1", Token: "tok"}, image); err != nil {
		t.Fatal(err)
	}
	if gotErr != nil {
		t.Fatalf("target: %v", gotErr)
	}
}

// notifyAfter closes done once left bytes were read through it.
type notifyAfter struct {
	r    io.ReadCloser
	left int64
	done chan struct{}
}

func (n *notifyAfter) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	if n.left > 0 {
		if n.left -= int64(k); n.left <= 0 {
			close(n.done)
		}
	}
	return k, err
}

func (n *notifyAfter) Close() error { return n.r.Close() }

// gateEOF answers EOF once open is closed.
type gateEOF struct{ open chan struct{} }

func (g gateEOF) Read([]byte) (int, error) {
	<-g.open
	return 0, io.EOF
}
