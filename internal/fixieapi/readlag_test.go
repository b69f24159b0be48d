package fixieapi_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAnEmbedUploadedWhileItsReadModelStandsStillIsAnswered: an upload whose wait for the embeds read model runs
// out is answered with the embed it made, not a timeout; the embed is there to read.
func TestAnEmbedUploadedWhileItsReadModelStandsStillIsAnswered(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t, platformtest.WithShortReadWait())
	_, key := n.NewAccount(t, "ada")
	release := n.HoldLease(t, "projection.embeds")
	defer release()
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 100)...)
	e, status, raw := upload(t, n, key, "image/png", png)
	if status != http.StatusCreated || e.ID == "" {
		t.Fatalf("upload: %d %s", status, raw)
	}
	resp, body := get(t, e.URI)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, png) {
		t.Fatalf("the embed's bytes: %d, %d bytes", resp.StatusCode, len(body))
	}
}
