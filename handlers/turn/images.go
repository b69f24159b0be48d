package turn

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/llm"
)

// ImageFiles reads the files a conversation shows the model as images (a Responses input_image by file_id, an
// Assistants image_file).
type ImageFiles interface {
	// ReadImage returns one of account's files that a model can be shown as an image: its media type and bytes,
	// or no bytes (and no error) when the file holds more than room. A file that is gone, another account's, too
	// large or not an image is an error the errs package codes (not_found, invalid); any other error is the store's.
	ReadImage(ctx context.Context, account, field, id string, room int) (mediaType string, data []byte, err error)
}

// Shown are the image files a model request shows, by file ID: each as a data URL, or a note that says why the
// model is not shown it.
type Shown map[string]shownImage

type shownImage struct {
	url  string
	note string
}

// MaxRequestImageBytes bounds the bytes of image files one model request carries inline: OpenAI's bound on a
// request's images (50 MB). A conversation that shows more has its newest images sent and a note in place of the
// older ones, so that a long history of images does not make every turn hold them all in memory.
const MaxRequestImageBytes = 50 << 20

// ReadImages reads the image files ids name, given newest first, as account. The faces checked each file when it
// was given; it is read again here, so that a file deleted since, or one of another account's that a message
// names, is a note to the model rather than its bytes (files nil: every file is a note). An error is the store's:
// the caller tries again.
func ReadImages(ctx context.Context, files ImageFiles, account string, ids []string) (Shown, error) {
	out := Shown{}
	total := 0
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		if files == nil {
			out[id] = shownImage{note: "this server does not read image files"}
			continue
		}
		// What is left of the request's room is passed down, so that a file that cannot fit is not read at all.
		mediaType, data, err := files.ReadImage(ctx, account, "file_id", id, MaxRequestImageBytes-total)
		switch errs.CodeOf(err) {
		case errs.NotFound:
			out[id] = shownImage{note: "the file is not there (deleted?)"}
			continue
		case errs.Invalid:
			out[id] = shownImage{note: errs.MessageOf(err)}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read image file %s: %w", id, err)
		}
		if data == nil {
			out[id] = shownImage{note: fmt.Sprintf("the request's newer images take the %d MiB a request may carry", MaxRequestImageBytes>>20)}
			continue
		}
		total += len(data)
		out[id] = shownImage{url: "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)}
	}
	return out, nil
}

// Image is how the model is shown the image file id at detail: the image (ok), or the note that stands in the
// message's text in its place ("" for a file ReadImages was not given).
func (s Shown) Image(id, detail string) (im llm.Image, note string, ok bool) {
	f, read := s[id]
	switch {
	case read && f.url != "":
		return llm.Image{URL: f.url, Detail: detail}, "", true
	case read:
		return llm.Image{}, fmt.Sprintf("\n[image %s is not shown: %s]", id, f.note), false
	}
	return llm.Image{}, "", false
}
