package responder

import (
	"context"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/llm"
)

// readImages reads the image files items show (input_image by file_id), newest first, as the response's account
// (turn.ReadImages).
func (l *Loop) readImages(ctx context.Context, account string, items []events.Item) (turn.Shown, error) {
	var ids []string
	for i := len(items) - 1; i >= 0; i-- {
		for _, c := range items[i].Content {
			if c.Type == "input_image" && c.ImageURL == "" && c.FileID != "" {
				ids = append(ids, c.FileID)
			}
		}
	}
	return turn.ReadImages(ctx, l.cfg.Images, account, ids)
}

// images are a message's input_image parts as the model is shown them: those given by URL as they are, those
// given by file_id as the data URL read for them (shown). A file the model is not shown adds a note to the text.
func images(it events.Item, files turn.Shown) ([]llm.Image, string) {
	var out []llm.Image
	var notes string
	for _, c := range it.Content {
		if c.Type != "input_image" {
			continue
		}
		if c.ImageURL != "" {
			out = append(out, llm.Image{URL: c.ImageURL, Detail: c.Detail})
			continue
		}
		im, note, ok := files.Image(c.FileID, c.Detail)
		if ok {
			out = append(out, im)
		}
		notes += note
	}
	return out, notes
}
