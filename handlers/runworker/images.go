package runworker

import (
	"context"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/llm"
)

// plan is planTurn with the images the thread's messages show. Their image files are read once for the turns of
// one pass over the run, into *read (nil until then; what turn.ReadImages returns is never nil), as the thread's
// account, so that one deleted since the message was written is a note to the model in the message's text rather
// than a failed run. An error is the store's: the driver tries again.
func (w *Worker) plan(ctx context.Context, t *thread.State, r *thread.Run, read *turn.Shown) (plan, error) {
	if *read == nil {
		files, err := turn.ReadImages(ctx, w.cfg.Images, t.Account, imageFileIDs(t))
		if err != nil {
			return plan{}, err
		}
		*read = files
	}
	return planTurn(t, r, *read)
}

// imageFileIDs are the files the thread's user messages show as images (image_file), newest first: when the
// images are more than a request may carry, the newest are the ones the model sees.
func imageFileIDs(t *thread.State) []string {
	live := t.Live()
	var ids []string
	for i := len(live) - 1; i >= 0; i-- {
		if live[i].Role != llm.RoleUser {
			continue
		}
		for _, p := range live[i].Content {
			if p.Type == "image_file" && p.ImageFile != nil {
				ids = append(ids, p.ImageFile.FileID)
			}
		}
	}
	return ids
}

// messageOf is a thread message as the model reads it: its text, and, for a user message, its images after it
// (image_url as given: an http(s) or data URL the face checked; image_file as the data URL read for it, or a note
// in the text where the model is not shown it). A chat model takes images only in user messages, so an assistant
// message's images (a code_interpreter plot it showed) are left out: the model read the code's output already.
func messageOf(m *thread.Message, files turn.Shown) llm.Message {
	out := llm.Message{Role: m.Role, Content: m.Text()}
	if m.Role != llm.RoleUser {
		return out
	}
	for _, p := range m.Content {
		switch {
		case p.Type == "image_url" && p.ImageURL != nil:
			out.Images = append(out.Images, llm.Image{URL: p.ImageURL.URL, Detail: p.ImageURL.Detail})
		case p.Type == "image_file" && p.ImageFile != nil:
			im, note, ok := files.Image(p.ImageFile.FileID, p.ImageFile.Detail)
			if ok {
				out.Images = append(out.Images, im)
			}
			out.Content += note
		}
	}
	return out
}
