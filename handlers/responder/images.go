package responder

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/llm"
)

// shown are the image files a response's context shows the model (input_image by file_id), by file ID: each as a
// data URL, or a note that says why the model is not shown it.
type shown map[string]shownImage

type shownImage struct {
	url  string
	note string
}

// maxRequestImageBytes bounds the bytes of image files one model request carries inline: OpenAI's bound on a
// request's images (50 MB). A conversation that shows more has its newest images sent and a note in place of the
// older ones, so that a long history of images does not make every turn hold them all in memory.
const maxRequestImageBytes = 50 << 20

// readImages reads the image files items show, newest first, as the response's account: the face checked them when
// they were given, and here they are read again, so that a file deleted since, or one of another account's that an
// item names, is a note to the model rather than its bytes. An error is the store's: the loop tries again.
func (l *Loop) readImages(ctx context.Context, account string, items []events.Item) (shown, error) {
	out := shown{}
	total := 0
	for i := len(items) - 1; i >= 0; i-- {
		for _, c := range items[i].Content {
			if c.Type != "input_image" || c.ImageURL != "" || c.FileID == "" {
				continue
			}
			if _, ok := out[c.FileID]; ok {
				continue
			}
			if l.cfg.Images == nil {
				out[c.FileID] = shownImage{note: "this server does not read image files"}
				continue
			}
			mediaType, data, err := l.cfg.Images.ReadImage(ctx, account, "file_id", c.FileID)
			switch errs.CodeOf(err) {
			case errs.NotFound:
				out[c.FileID] = shownImage{note: "the file is not there (deleted?)"}
				continue
			case errs.Invalid:
				out[c.FileID] = shownImage{note: errs.MessageOf(err)}
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read image file %s: %w", c.FileID, err)
			}
			if total+len(data) > maxRequestImageBytes {
				out[c.FileID] = shownImage{note: fmt.Sprintf("the request's newer images take the %d MiB a request may carry", maxRequestImageBytes>>20)}
				continue
			}
			total += len(data)
			out[c.FileID] = shownImage{url: "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)}
		}
	}
	return out, nil
}

// images are a message's input_image parts as the model is shown them: those given by URL as they are, those
// given by file_id as the data URL read for them (shown). A file the model is not shown adds a note to the text.
func images(it events.Item, files shown) ([]llm.Image, string) {
	var out []llm.Image
	var notes string
	for _, c := range it.Content {
		if c.Type != "input_image" {
			continue
		}
		switch f, ok := files[c.FileID]; {
		case c.ImageURL != "":
			out = append(out, llm.Image{URL: c.ImageURL, Detail: c.Detail})
		case ok && f.url != "":
			out = append(out, llm.Image{URL: f.url, Detail: c.Detail})
		case ok:
			notes += fmt.Sprintf("\n[image %s is not shown: %s]", c.FileID, f.note)
		}
	}
	return out, notes
}
