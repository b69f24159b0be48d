package responder

import (
	"context"
	"fmt"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/errs"
)

// TextFiles reads the text of the files a response's input shows the model (input_file by file_id).
type TextFiles interface {
	// ReadText returns the name and text of one of account's files. A file that is gone or another account's is a
	// not_found error, one whose text cannot be shown (not a kind of file whose text is read, or too large) an
	// invalid error saying why; any other error is the store's.
	ReadText(ctx context.Context, account, id string) (name, text string, err error)
}

// shown is what the model is shown of the files a response's items name: image files (turn.Shown) and the text of
// other files, by file ID: the file's text between markers, or a note in its place saying why it is not shown.
type shown struct {
	images turn.Shown
	texts  map[string]string
}

// readFiles reads the files the items show: images (readImages) and the text of input_file parts, as account.
func (l *Loop) readFiles(ctx context.Context, account string, items []events.Item) (shown, error) {
	images, err := l.readImages(ctx, account, items)
	if err != nil {
		return shown{}, err
	}
	out := shown{images: images, texts: map[string]string{}}
	for _, it := range items {
		for _, c := range it.Content {
			if c.Type != "input_file" || c.FileID == "" {
				continue
			}
			if _, ok := out.texts[c.FileID]; ok {
				continue
			}
			if l.cfg.Texts == nil {
				out.texts[c.FileID] = fileNote(c, "this server does not read files' text")
				continue
			}
			name, text, err := l.cfg.Texts.ReadText(ctx, account, c.FileID)
			switch errs.CodeOf(err) {
			case errs.NotFound:
				out.texts[c.FileID] = fileNote(c, "the file is not there (deleted?)")
				continue
			case errs.Invalid:
				out.texts[c.FileID] = fileNote(c, errs.MessageOf(err))
				continue
			}
			if err != nil {
				return shown{}, fmt.Errorf("read file %s: %w", c.FileID, err)
			}
			out.texts[c.FileID] = fmt.Sprintf("\n\n[file %s (%s)]\n%s\n[end of file %s]", name, c.FileID, text, name)
		}
	}
	return out, nil
}

// fileNote stands in a message's text for a file the model is not shown, so that it can say so rather than answer
// as if it had read it.
func fileNote(c events.ItemContent, why string) string {
	name := c.Filename
	if name == "" {
		name = c.FileID
	}
	return fmt.Sprintf("\n\n[file %s is not shown: %s]", name, why)
}

// fileTexts is what a message's input_file parts add to its text, in order.
func fileTexts(it events.Item, files shown) string {
	var out string
	for _, c := range it.Content {
		if c.Type == "input_file" && c.FileID != "" {
			out += files.texts[c.FileID]
		}
	}
	return out
}
