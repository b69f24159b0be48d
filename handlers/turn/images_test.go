package turn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/errs"
)

// imageFiles holds image files by ID, of the sizes given, and records how much room each read was given and which
// files' bytes it handed over.
type imageFiles struct {
	sizes map[string]int
	rooms map[string]int
	read  []string
}

func (f *imageFiles) ReadImage(_ context.Context, _, _, id string, room int) (string, []byte, error) {
	size, ok := f.sizes[id]
	if !ok {
		return "", nil, errs.NotFoundf("file", id)
	}
	f.rooms[id] = room
	if size > room {
		return "image/png", nil, nil
	}
	f.read = append(f.read, id)
	return "image/png", make([]byte, size), nil
}

// The newest images are shown up to the request's room; an older one that does not fit is a note and its bytes are
// not read; a smaller one older still is shown if it fits; a file that is gone is a note; a file named twice is
// read once.
func TestReadImagesFillTheRequestsRoomNewestFirst(t *testing.T) {
	const mib = 1 << 20
	files := &imageFiles{sizes: map[string]int{"file-new": 20 * mib, "file-mid": 20 * mib, "file-big": 20 * mib,
		"file-small": 5 * mib}, rooms: map[string]int{}}
	ids := []string{"file-new", "file-mid", "file-new", "file-big", "file-gone", "file-small"}
	shown, err := turn.ReadImages(context.Background(), files, "acct_1", ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"file-new", "file-mid", "file-small"} {
		if im, note, ok := shown.Image(id, "low"); !ok || !strings.HasPrefix(im.URL, "data:image/png;base64,") {
			t.Errorf("%s: not shown (%q)", id, note)
		}
	}
	for id, want := range map[string]string{"file-big": "MiB a request may carry", "file-gone": "not there"} {
		if _, note, ok := shown.Image(id, "low"); ok || !strings.Contains(note, want) {
			t.Errorf("%s: shown %v, note %q; want a note saying %q", id, ok, note, want)
		}
	}
	if got := strings.Join(files.read, ","); got != "file-new,file-mid,file-small" {
		t.Errorf("bytes read of %s; want only the files shown, each once", got)
	}
	if files.rooms["file-big"] != turn.MaxRequestImageBytes-40*mib {
		t.Errorf("file-big was read with room %d, want what the newer images left", files.rooms["file-big"])
	}
	none, err := turn.ReadImages(context.Background(), nil, "acct_1", []string{"file-new"})
	if _, note, ok := none.Image("file-new", "low"); err != nil || ok || !strings.Contains(note, "does not read image files") {
		t.Errorf("without files: %v, %q, %v", ok, note, err)
	}
}
