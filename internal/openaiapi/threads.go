package openaiapi

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/projections"
)

// newThread reads a thread as create thread (and create thread-and-run's "thread") sends it.
func newThread(in fields) (commands.NewThread, error) {
	var t commands.NewThread
	var err error
	if t.Metadata, err = in.metadata("metadata"); err != nil {
		return t, err
	}
	if t.ToolResources, err = in.raw("tool_resources", false); err != nil {
		return t, err
	}
	t.Messages, err = in.messages("messages")
	return t, err
}

func (f *Face) createThread(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	t, err := newThread(in)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if t, err = f.keepAttachments(r, t, "messages"); err != nil {
		f.WriteError(w, r, err)
		return
	}
	id, res, err := f.d.Threads.Create(r.Context(), principal(r), t)
	err = f.d.Views.ShowsWrite(r.Context(), res, err, projections.Threads{}, projections.Messages{})
	if waitedTooLong(r, id, err) {
		f.threadFromLog(w, r, id)
		return
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerThread(w, r, id)
}

// keepAttachments makes, as OpenAI does when a thread is made, the thread's own vector store of the files its
// messages attach for file_search, and names it in the thread's tool_resources.file_search.vector_store_ids, so
// that the thread shows the store it searches. It gives the thread its ID (the store's derives from it). field is
// where the messages sit in the request, for errors.
func (f *Face) keepAttachments(r *http.Request, t commands.NewThread, field string) (commands.NewThread, error) {
	if f.d.VectorStores == nil {
		return t, nil
	}
	files, err := fileSearchFiles(t.Messages)
	if err != nil || len(files) == 0 {
		return t, err
	}
	// The files are checked as the thread's create checks them first, so that an error names the message's field.
	if err := f.d.Threads.CheckAttachedFiles(r.Context(), principal(r), field, t.Messages); err != nil {
		return t, err
	}
	if t.ID == "" {
		t.ID = events.NewPrefixedID("thread_")
	}
	// Past the read wait the store is made all the same (a store is got from its log, and listed once its model
	// shows it: ListCaughtUp): the thread is made, not refused with a timeout a client would retry into a second
	// thread and store.
	_, res, err := f.d.VectorStores.EnsureThreadStore(r.Context(), principal(r), t.ID, files)
	if err = f.shownOrDone(r, res, err, projections.VectorStores{}); err != nil {
		return t, fmt.Errorf("make the thread's vector store: %w", err)
	}
	tr, err := commands.WithVectorStore(t.ToolResources, commands.ThreadStoreID(t.ID))
	if err != nil {
		return t, err
	}
	t.ToolResources = tr
	return t, nil
}

// fileSearchFiles are the files messages attach for file_search.
func fileSearchFiles(msgs []commands.NewMessage) ([]string, error) {
	var files []string
	for _, m := range msgs {
		atts, err := commands.ParseAttachments("", m.Attachments)
		if err != nil {
			return nil, err
		}
		for _, a := range atts {
			for _, tool := range a.Tools {
				if tool.Type == "file_search" {
					files = append(files, a.FileID)
				}
			}
		}
	}
	return files, nil
}

// keepMessageAttachments adds the files a message added to a thread attaches for file_search to the thread's own
// vector store (made if it is the first), and names the store in the thread's tool_resources if it is not yet.
func (f *Face) keepMessageAttachments(r *http.Request, threadID string, m commands.NewMessage) error {
	if f.d.VectorStores == nil {
		return nil
	}
	files, err := fileSearchFiles([]commands.NewMessage{m})
	if err != nil || len(files) == 0 {
		return err
	}
	// The message is in: past the read wait the store is kept all the same (as the thread's create keeps it), and
	// the message is answered added, not as a timeout a client would retry into a second message.
	_, res, err := f.d.VectorStores.EnsureThreadStore(r.Context(), principal(r), threadID, files)
	if err = f.shownOrDone(r, res, err, projections.VectorStores{}); err != nil {
		return fmt.Errorf("keep the thread's attachments: %w", err)
	}
	// The thread's tool_resources as the log holds them, not as the threads model shows them: they are written
	// back whole, and the model may not show yet what a modify set a moment ago.
	th, ok, err := f.threadInLog(r.Context(), principal(r).AccountID, threadID)
	if err != nil {
		return err
	}
	if !ok {
		return errs.NotFoundf("thread", threadID)
	}
	tr, err := commands.WithVectorStore(th.ToolResources, commands.ThreadStoreID(threadID))
	if err != nil || bytes.Equal(tr, th.ToolResources) {
		return err
	}
	res, err = f.d.Threads.Modify(r.Context(), principal(r), threadID, nil, false, tr)
	return f.shownOrDone(r, res, err, projections.Threads{})
}

// thread reads a thread the caller owns; every route under a thread starts here. It waits, as the thread's own
// read does (ownedShown), for the threads read model to show the thread's last event, or folds the thread from
// the log past the wait: a thread deleted a moment ago is not found (its messages and runs are not served on), and
// one made a moment ago, on this node or another, is found.
func (f *Face) thread(r *http.Request, id string) (thread.ThreadView, error) {
	return ownedShown[thread.ThreadView](f, r, projections.Threads{}, "thread", ids.Thread, id,
		errs.NotFoundf("thread", id))
}

// answerThread answers a thread of the caller's once the threads read model shows its last thread event, or else
// from the log (f.thread): a thread modified or deleted is not answered as it was.
func (f *Face) answerThread(w http.ResponseWriter, r *http.Request, id string) {
	t, err := f.thread(r, id)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, threadWire(t))
}

// listThreads lists the caller's threads. OpenAI's API has no such list (a client keeps its thread IDs); Contrail
// adds it, in OpenAI's list shape, so that a console or a script can find an account's threads again.
func (f *Face) listThreads(w http.ResponseWriter, r *http.Request) {
	listOwned(f, w, r, projections.Threads{}, func(t thread.ThreadView) string { return t.ID }, threadWire)
}

func (f *Face) getThread(w http.ResponseWriter, r *http.Request) {
	f.answerThread(w, r, chi.URLParam(r, "thread_id"))
}

func (f *Face) modifyThread(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "thread_id")
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	md, err := in.metadata("metadata")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	tr, err := in.raw("tool_resources", false)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Threads.Modify(r.Context(), principal(r), id, md, in.has("metadata"), tr)
	if err := f.shownOrDone(r, res, err, projections.Threads{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerThread(w, r, id)
}

func (f *Face) deleteThread(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "thread_id")
	res, err := f.d.Threads.Delete(r.Context(), principal(r), id)
	if err := f.shownOrDone(r, res, err, projections.Threads{}, projections.Runs{}, projections.RunSteps{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, deleted{ID: id, Object: "thread.deleted", Deleted: true})
}

func (f *Face) createMessage(w http.ResponseWriter, r *http.Request) {
	threadID := chi.URLParam(r, "thread_id")
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	var m message
	m.Content = in.m["content"]
	if m.Role, err = in.str("role"); err != nil {
		f.WriteError(w, r, err)
		return
	}
	if m.Role == "" {
		f.WriteError(w, r, errs.Missing("role"))
		return
	}
	if m.Metadata, err = in.metadata("metadata"); err != nil {
		f.WriteError(w, r, err)
		return
	}
	m.Attachments = in.m["attachments"]
	nm, err := m.toCommand("")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	id, res, err := f.d.Threads.CreateMessage(r.Context(), principal(r), threadID, nm)
	if err := f.shownOrDone(r, res, err, projections.Messages{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := f.keepMessageAttachments(r, threadID, nm); err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerMessage(w, r, threadID, id)
}

// writeMessage answers a message of a thread the caller may read (checked before).
func (f *Face) writeMessage(w http.ResponseWriter, r *http.Request, threadID, id string) {
	m, ok, err := projections.GetLatest[projections.Listed[thread.ThreadMessageView]](r.Context(), f.d.Views, "messages",
		projections.MessageKey(principal(r).AccountID, threadID, id))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !ok {
		f.WriteError(w, r, errs.NotFoundf("message", id))
		return
	}
	writeJSON(w, messageWire(m.Obj))
}

// getMessage answers once the messages read model shows the thread's last message event, or else from the log: a
// message a run step names can be read the moment the step can.
func (f *Face) getMessage(w http.ResponseWriter, r *http.Request) {
	f.answerMessage(w, r, chi.URLParam(r, "thread_id"), chi.URLParam(r, "message_id"))
}

// answerMessage answers a message of a thread of the caller's once the messages read model shows the thread's last
// message event, or else from the log (messagesCaughtUp).
func (f *Face) answerMessage(w http.ResponseWriter, r *http.Request, threadID, id string) {
	docs, shown, err := f.messagesCaughtUp(r, threadID)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if shown {
		f.writeMessage(w, r, threadID, id)
		return
	}
	for _, d := range docs {
		if d.Obj.ID == id {
			writeJSON(w, messageWire(d.Obj))
			return
		}
	}
	f.WriteError(w, r, errs.NotFoundf("message", id))
}

// messagesCaughtUp checks that the caller may read the thread, then waits (briefly) until the messages read model
// shows the thread's last message event. shown says it does; when it does not, docs are the thread's messages as
// the model will show them, folded from the log, or the error is a 503 (shownOrFolded).
func (f *Face) messagesCaughtUp(r *http.Request, threadID string) (
	docs []projections.Listed[thread.ThreadMessageView], shown bool, err error) {
	if _, err := f.thread(r, threadID); err != nil {
		return nil, false, err
	}
	return shownOrFolded[projections.Listed[thread.ThreadMessageView]](f, r, projections.Messages{}, threadRef(threadID),
		principal(r).AccountID+"."+threadID+".*", "the thread's messages")
}

func (f *Face) modifyMessage(w http.ResponseWriter, r *http.Request) {
	threadID, id := chi.URLParam(r, "thread_id"), chi.URLParam(r, "message_id")
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	md, err := in.metadata("metadata")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Threads.ModifyMessage(r.Context(), principal(r), threadID, id, md)
	if err := f.shownOrDone(r, res, err, projections.Messages{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerMessage(w, r, threadID, id)
}

func (f *Face) deleteMessage(w http.ResponseWriter, r *http.Request) {
	threadID, id := chi.URLParam(r, "thread_id"), chi.URLParam(r, "message_id")
	res, err := f.d.Threads.DeleteMessage(r.Context(), principal(r), threadID, id)
	if err := f.shownOrDone(r, res, err, projections.Messages{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, deleted{ID: id, Object: "thread.message.deleted", Deleted: true})
}

func (f *Face) listMessages(w http.ResponseWriter, r *http.Request) {
	threadID := chi.URLParam(r, "thread_id")
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	docs, shown, err := f.messagesCaughtUp(r, threadID)
	if err == nil && shown {
		docs, err = projections.ListAll[projections.Listed[thread.ThreadMessageView]](r.Context(), f.d.Views, "messages",
			principal(r).AccountID+"."+threadID+".*")
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	runID := r.URL.Query().Get("run_id")
	items := make([]listed[messageObject], 0, len(docs))
	for _, d := range docs {
		if runID != "" && d.Obj.RunID != runID {
			continue
		}
		items = append(items, listed[messageObject]{id: d.Obj.ID, seq: d.Seq, obj: messageWire(d.Obj)})
	}
	writeJSON(w, paginate(items, p))
}
