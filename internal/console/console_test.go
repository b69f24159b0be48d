package console_test

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/internal/console"
)

// TestAssetsAreCurrent compares assets.sum, which `make console` writes, with the tree: a source changed without a
// rebuild, or a file of dist/ edited by hand (or left out of a commit), fails here.
func TestAssetsAreCurrent(t *testing.T) {
	recorded := map[string]string{} // "kind path" -> sha256
	f, err := os.Open("assets.sum")
	if err != nil {
		t.Fatalf("assets.sum: %v (run `make console`)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Fields(line)
		if len(parts) != 3 || (parts[0] != "source" && parts[0] != "dist") {
			t.Fatalf("assets.sum: bad line %q", line)
		}
		recorded[parts[0]+" "+parts[2]] = parts[1]
	}
	actual := map[string]string{}
	hashAll := func(kind string, paths ...string) {
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			actual[kind+" "+filepath.ToSlash(p)] = hex.EncodeToString(sum[:])
		}
	}
	hashAll("source", "web/build.mjs", "web/package.json", "web/package-lock.json")
	hashAll("source", files(t, "web/src")...)
	hashAll("dist", files(t, "dist")...)
	for k, sum := range actual {
		switch r, ok := recorded[k]; {
		case !ok:
			t.Errorf("%s is not in assets.sum: run `make console` and commit dist/ and assets.sum", k)
		case r != sum:
			t.Errorf("%s changed since `make console` built dist/: run `make console` and commit dist/ and assets.sum", k)
		}
	}
	for k := range recorded {
		if _, ok := actual[k]; !ok {
			t.Errorf("%s is in assets.sum but not in the tree: run `make console`", k)
		}
	}
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func serve(t *testing.T) *httptest.Server {
	t.Helper()
	c, err := console.New(console.Config{PublicURL: "http://127.0.0.1:8080"})
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	c.OpenRoutes(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	// The transport would ask for gzip and undo it unseen; the tests ask for it themselves.
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestThePageIsServedWithAStrictPolicy(t *testing.T) {
	t.Parallel()
	srv := serve(t)
	resp, body := get(t, srv.URL+"/")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), `src="/assets/app.js"`) {
		t.Fatalf("GET /: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "img-src 'self' data: http://127.0.0.1:8080"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q allows unsafe sources", csp)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers: %v", resp.Header)
	}

	// The script, gzipped when asked, the same bytes as plain; and not sent again while the browser has it.
	plainResp, plain := get(t, srv.URL+"/assets/app.js")
	zResp, zipped := get(t, srv.URL+"/assets/app.js", "Accept-Encoding", "gzip, deflate")
	if plainResp.StatusCode != 200 || !strings.HasPrefix(plainResp.Header.Get("Content-Type"), "text/javascript") || plainResp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("app.js: %d %v", plainResp.StatusCode, plainResp.Header)
	}
	if zResp.Header.Get("Content-Encoding") != "gzip" || len(zipped) >= len(plain) {
		t.Fatalf("app.js gzipped: %v, %d bytes of %d", zResp.Header, len(zipped), len(plain))
	}
	zr, err := gzip.NewReader(strings.NewReader(string(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if string(unzipped) != string(plain) {
		t.Fatal("the gzipped script is not the script")
	}
	etag := plainResp.Header.Get("ETag")
	if again, b := get(t, srv.URL+"/assets/app.js", "If-None-Match", etag); etag == "" || again.StatusCode != 304 || len(b) != 0 {
		t.Fatalf("revalidation with ETag %q: %d, %d bytes", etag, again.StatusCode, len(b))
	}
	if r, _ := get(t, srv.URL+"/assets/app.js", "Accept-Encoding", "gzip;q=0"); r.Header.Get("Content-Encoding") != "" {
		t.Fatal("gzip sent to a client that refused it")
	}
	if r, _ := get(t, srv.URL+"/assets/nothing.js"); r.StatusCode != 404 {
		t.Fatalf("an unknown asset: %d", r.StatusCode)
	}
}
