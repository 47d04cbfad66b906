package ui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var embedded embed.FS

// Prefix is where the UI is served.
const Prefix = "/ui/"

// Mount returns a handler that serves the UI under Prefix, redirects GET /
// to it, and hands every other request to api.
func Mount(api http.Handler) http.Handler {
	assets := Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			http.Redirect(w, r, Prefix, http.StatusFound)
		case r.URL.Path == "/ui":
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, Prefix):
			assets.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// asset is one embedded file, read once.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the embedded assets under Prefix.
func Handler() http.Handler {
	files := loadAssets()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the UI is read with GET", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		if name == "" || strings.HasSuffix(name, "/") {
			name += "index.html"
		}
		a, ok := files[path.Clean(name)]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		securityHeaders(h)
		h.Set("Content-Type", a.contentType)
		h.Set("ETag", a.etag)
		// Revalidate on every load: an upgraded server never serves an old
		// module beside a new one.
		h.Set("Cache-Control", "no-cache")
		if match := r.Header.Get("If-None-Match"); match == a.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == http.MethodHead {
			return
		}
		w.Write(a.body)
	})
}

// securityHeaders keep the page to its own origin: scripts, styles, images
// and API calls from the server that served it, nothing inline (the
// scripts set positions through the CSSOM, which the policy allows), no
// framing.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}

// loadAssets reads every embedded file with its type and content hash.
func loadAssets() map[string]asset {
	out := map[string]asset{}
	root, err := fs.Sub(embedded, "assets")
	if err != nil {
		panic(err) // the embed directive guarantees assets/
	}
	fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		out[p] = asset{body: body, contentType: contentType(p), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	return out
}

// contentType does not depend on the host's mime tables (a bare container
// has none): the few types the UI ships are named here.
func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}
