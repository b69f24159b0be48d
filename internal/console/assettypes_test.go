package console

import (
	"io/fs"
	"path"
	"testing"
)

// TestEveryAssetHasItsContentType walks what the console's build wrote: a file of a kind assetTypes does not name
// would be served as application/octet-stream, which a browser will not run as a script or style.
func TestEveryAssetHasItsContentType(t *testing.T) {
	n := 0
	err := fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		if _, ok := assetTypes[path.Ext(p)]; !ok {
			t.Errorf("%s: no content type for %q in assetTypes", p, path.Ext(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no assets in dist")
	}
	for name, want := range map[string]string{"index.html": "text/html; charset=utf-8",
		"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8", "x.woff2": "application/octet-stream"} {
		if got := newAsset(name, []byte("x")).contentType; got != want {
			t.Errorf("%s: content type %q, want %q", name, got, want)
		}
	}
}
