package ui_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/ui"
)

// fakeAPI stands for the API behind the UI: it answers every request it gets
// with its path, so a test sees what reached it.
var fakeAPI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Reached", "api")
	io.WriteString(w, r.Method+" "+r.URL.Path)
})

func TestMountRoutes(t *testing.T) {
	h := ui.Mount(fakeAPI)
	for _, tc := range []struct {
		name, method, path string
		status             int
		location, ctype    string
		reachesAPI         bool
	}{
		{name: "a browser at the root goes to the UI", method: "GET", path: "/", status: http.StatusFound, location: "/ui/"},
		{name: "the UI without its slash", method: "GET", path: "/ui", status: http.StatusMovedPermanently, location: "/ui/"},
		{name: "the page", method: "GET", path: "/ui/", status: 200, ctype: "text/html; charset=utf-8"},
		{name: "a module", method: "GET", path: "/ui/js/app.js", status: 200, ctype: "text/javascript; charset=utf-8"},
		{name: "a view module", method: "GET", path: "/ui/js/views/topology.js", status: 200, ctype: "text/javascript; charset=utf-8"},
		{name: "the style", method: "HEAD", path: "/ui/style.css", status: 200, ctype: "text/css; charset=utf-8"},
		{name: "no such asset", method: "GET", path: "/ui/nope.js", status: 404},
		{name: "no escaping the assets", method: "GET", path: "/ui/../handler.go", status: 404},
		{name: "the UI is read only", method: "POST", path: "/ui/js/app.js", status: http.StatusMethodNotAllowed},
		{name: "the API is untouched", method: "GET", path: "/v1/nodes", status: 200, reachesAPI: true},
		{name: "a write to the root is the API's", method: "POST", path: "/", status: 200, reachesAPI: true},
		{name: "metrics are the API's", method: "GET", path: "/metrics", status: 200, reachesAPI: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tc.status, rec.Body)
			}
			if got := rec.Header().Get("Location"); got != tc.location {
				t.Fatalf("Location %q, want %q", got, tc.location)
			}
			if got := rec.Header().Get("X-Reached") == "api"; got != tc.reachesAPI {
				t.Fatalf("reached the API: %v, want %v", got, tc.reachesAPI)
			}
			if tc.ctype != "" {
				if got := rec.Header().Get("Content-Type"); got != tc.ctype {
					t.Fatalf("Content-Type %q, want %q", got, tc.ctype)
				}
				for _, hdr := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "ETag"} {
					if rec.Header().Get(hdr) == "" {
						t.Fatalf("no %s", hdr)
					}
				}
				if csp := rec.Header().Get("Content-Security-Policy"); strings.Contains(csp, "unsafe") || !strings.Contains(csp, "connect-src 'self'") {
					t.Fatalf("the policy lets the page reach beyond its server: %s", csp)
				}
			}
		})
	}
}

// TestRevalidation: an unchanged asset answers 304 to its ETag; another
// asset's ETag does not match.
func TestRevalidation(t *testing.T) {
	h := ui.Handler()
	get := func(path, etag string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	first := get("/ui/js/app.js", "")
	etag := first.Header().Get("ETag")
	if rec := get("/ui/js/app.js", etag); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Fatalf("revalidation: %d with %d bytes, want 304 and none", rec.Code, rec.Body.Len())
	}
	if rec := get("/ui/js/api.js", etag); rec.Code != http.StatusOK {
		t.Fatalf("another asset with app.js's ETag: %d, want 200", rec.Code)
	}
}

// TestAssetsAreSelfContained: the UI works offline. No asset names a
// remote origin (no CDN, no font service), every module it imports
// exists, and no script or style is inline (the policy forbids both).
func TestAssetsAreSelfContained(t *testing.T) {
	remote := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import\s+url\(|from\s+['"]https?:|import\(['"]https?:`)
	imports := regexp.MustCompile(`(?m)(?:^import .* from |^import )['"](\.[^'"]+)['"]`)
	inline := regexp.MustCompile(`(?i)<script>|<script [^>]*>[^<]|<style|\sstyle=|\son[a-z]+=`)
	err := filepath.WalkDir("assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		src := string(b)
		if m := remote.FindString(src); m != "" {
			t.Errorf("%s reaches a remote origin: %q", p, m)
		}
		if strings.HasSuffix(p, ".html") && inline.MatchString(src) {
			t.Errorf("%s has inline script, style or handlers: %q", p, inline.FindString(src))
		}
		for _, m := range imports.FindAllStringSubmatch(src, -1) {
			target := filepath.Join(filepath.Dir(p), m[1])
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s imports %s, which is not there", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
