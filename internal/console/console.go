package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"
)

//go:embed dist
var dist embed.FS

// asset is one file of the console, ready to serve. Its gzipped form is made at its first request asking for it,
// not at start: the best compression of the script costs a node's start some milliseconds and a megabyte of
// compressor state that most nodes (behind a load balancer, or never opened in a browser) have no use for.
type asset struct {
	body        []byte
	gzipped     func() ([]byte, error)
	contentType string
	etag        string
}

// Console serves the page and its assets.
type Console struct {
	assets map[string]*asset // by name in dist/
	csp    string
}

// Config says where the node is reached.
type Config struct {
	// PublicURL is the node's public URL: embeds are signed URLs under it, so the page may show images from it even
	// when the browser reached the node by another name (localhost for 127.0.0.1).
	PublicURL string
}

// New loads the embedded assets.
func New(cfg Config) (*Console, error) {
	c := &Console{assets: map[string]*asset{}, csp: contentSecurityPolicy(cfg.PublicURL)}
	err := fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := dist.ReadFile(p)
		if err != nil {
			return err
		}
		c.assets[path.Base(p)] = newAsset(path.Base(p), body)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("console assets: %w", err)
	}
	if _, ok := c.assets["index.html"]; !ok {
		return nil, fmt.Errorf("console assets: dist/index.html is missing (run `make console`)")
	}
	return c, nil
}

// assetTypes are the content types of the files the console's build writes. mime.TypeByExtension would read the
// machine's MIME databases at the first asset, about 0.4 MiB of heap that a node then holds for good, for these few,
// and answer what each machine's databases say rather than the same on every machine.
var assetTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/vnd.microsoft.icon",
	".map":  "application/json",
}

func newAsset(name string, body []byte) *asset {
	sum := sha256.Sum256(body)
	ct, ok := assetTypes[path.Ext(name)]
	if !ok {
		ct = "application/octet-stream"
	}
	return &asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`,
		gzipped: sync.OnceValues(func() ([]byte, error) { return gzipped(body) })}
}

func gzipped(body []byte) ([]byte, error) {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if _, err := zw.Write(body); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return z.Bytes(), nil
}

// contentSecurityPolicy allows the page's own scripts, styles and connections only: no inline script, no other
// origin but the public URL's images (embeds), no framing.
func contentSecurityPolicy(publicURL string) string {
	img := "'self' data:"
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		img += " " + u.Scheme + "://" + u.Host
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src " + img,
		"connect-src 'self'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

// OpenRoutes implements httpapi.OpenFace: the page is public (it holds no data; it calls the faces with the key
// its user types).
func (c *Console) OpenRoutes(r chi.Router) {
	r.Get("/", func(w http.ResponseWriter, req *http.Request) { c.serve(w, req, "index.html") })
	r.Get("/assets/{name}", func(w http.ResponseWriter, req *http.Request) {
		name := chi.URLParam(req, "name")
		if name == "index.html" {
			http.Redirect(w, req, "/", http.StatusMovedPermanently)
			return
		}
		c.serve(w, req, name)
	})
}

func (c *Console) serve(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := c.assets[name]
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if !ok {
		http.Error(w, "no such console asset", http.StatusNotFound)
		return
	}
	h.Set("Content-Security-Policy", c.csp)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	// Revalidated on every load (cheap, by ETag), so a new binary's console is never hidden by a cached one.
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	h.Set("Vary", "Accept-Encoding")
	h.Set("Content-Type", a.contentType)
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if acceptsGzip(r) {
		if z, err := a.gzipped(); err == nil {
			h.Set("Content-Encoding", "gzip")
			body = z
		}
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}
