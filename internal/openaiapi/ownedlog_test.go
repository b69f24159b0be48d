package openaiapi_test

import (
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/waittest"
)

// TestAThreadIsReadFromTheLogWhileTheThreadsReadModelStandsStill: while the threads read model applies nothing, a
// thread modified is answered modified (not as a timeout) and got so, and deleted is answered deleted and then not
// found: past the read wait the thread is folded from the log, not answered as the model last showed it; and when
// its log cannot be read either, a 503.
func TestAThreadIsReadFromTheLogWhileTheThreadsReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	th := e.thread(t, "Hello.")
	gone := e.thread(t, "Goodbye.")
	broken := e.thread(t, "Hm.")

	release := e.node.HoldLease(t, "projection.threads_v2")
	defer release()
	modified, err := e.client.Beta.Threads.Update(ctx, th.ID, openai.BetaThreadUpdateParams{
		Metadata: map[string]string{"topic": "greetings"}})
	if err != nil {
		t.Fatalf("modify the thread: %v", apiErr(err))
	}
	if modified.Metadata["topic"] != "greetings" {
		t.Fatalf("the thread modified: %s", modified.RawJSON())
	}
	got, err := e.client.Beta.Threads.Get(ctx, th.ID)
	if err != nil || got.Metadata["topic"] != "greetings" {
		t.Fatalf("the thread: %v %s", apiErr(err), got.RawJSON())
	}
	if del, err := e.client.Beta.Threads.Delete(ctx, gone.ID); err != nil || !del.Deleted {
		t.Fatalf("delete the thread: %v", apiErr(err))
	}
	_, err = e.client.Beta.Threads.Get(ctx, gone.ID)
	wantAPIError(t, err, http.StatusNotFound, "")

	e.node.AppendUndecodable(t, "thread", broken.ID, "modified")
	_, err = e.client.Beta.Threads.Get(ctx, broken.ID)
	wantBehind(t, "get the thread", err)
}

// TestAnAssistantIsReadFromTheLogWhileTheAssistantsReadModelStandsStill: while the assistants read model applies
// nothing, an assistant made is answered made (not as a timeout a client would retry into a second one), one
// modified is answered and got modified, one deleted is answered deleted and then not found; and when an
// assistant's log cannot be read either, a 503.
func TestAnAssistantIsReadFromTheLogWhileTheAssistantsReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	a, gone, broken := e.assistant(t), e.assistant(t), e.assistant(t)

	release := e.node.HoldLease(t, "projection.assistants_v2")
	defer release()
	made, err := e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Name: openai.String("made")})
	if err != nil {
		t.Fatalf("create an assistant: %v", apiErr(err))
	}
	if got, err := e.client.Beta.Assistants.Get(ctx, made.ID); err != nil || got.Name != "made" {
		t.Fatalf("the assistant made: %v", apiErr(err))
	}
	modified, err := e.client.Beta.Assistants.Update(ctx, a.ID, openai.BetaAssistantUpdateParams{
		Name: openai.String("renamed")})
	if err != nil {
		t.Fatalf("modify the assistant: %v", apiErr(err))
	}
	if modified.Name != "renamed" || modified.Instructions != "You help." {
		t.Fatalf("the assistant modified: %s", modified.RawJSON())
	}
	if got, err := e.client.Beta.Assistants.Get(ctx, a.ID); err != nil || got.Name != "renamed" {
		t.Fatalf("the assistant: %v %s", apiErr(err), got.RawJSON())
	}
	if del, err := e.client.Beta.Assistants.Delete(ctx, gone.ID); err != nil || !del.Deleted {
		t.Fatalf("delete the assistant: %v", apiErr(err))
	}
	_, err = e.client.Beta.Assistants.Get(ctx, gone.ID)
	wantAPIError(t, err, http.StatusNotFound, "")

	e.node.AppendUndecodable(t, "assistant", broken.ID, "modified")
	_, err = e.client.Beta.Assistants.Get(ctx, broken.ID)
	wantBehind(t, "get the assistant", err)
}

// TestAMessageWrittenWhileTheMessagesReadModelStandsStillIsAnsweredFromTheLog: while the messages read model
// applies nothing, a message added to a thread is answered added (not as a timeout a client would retry into a
// second message), one modified is answered modified, one deleted is answered deleted and then not found.
func TestAMessageWrittenWhileTheMessagesReadModelStandsStillIsAnsweredFromTheLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	th := e.thread(t, "Hello.")
	first, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(first.Data) != 1 {
		t.Fatalf("the thread's messages: %v", apiErr(err))
	}

	release := e.node.HoldLease(t, "projection.messages_v2")
	defer release()
	added, err := e.client.Beta.Threads.Messages.New(ctx, th.ID, openai.BetaThreadMessageNewParams{Role: "user",
		Content: openai.BetaThreadMessageNewParamsContentUnion{OfString: openai.String("Are you there?")}})
	if err != nil {
		t.Fatalf("add a message: %v", apiErr(err))
	}
	if len(added.Content) != 1 || added.Content[0].Text.Value != "Are you there?" || added.ThreadID != th.ID {
		t.Fatalf("the message added: %s", added.RawJSON())
	}
	modified, err := e.client.Beta.Threads.Messages.Update(ctx, th.ID, added.ID, openai.BetaThreadMessageUpdateParams{
		Metadata: map[string]string{"seen": "no"}})
	if err != nil {
		t.Fatalf("modify the message: %v", apiErr(err))
	}
	if modified.Metadata["seen"] != "no" {
		t.Fatalf("the message modified: %s", modified.RawJSON())
	}
	if del, err := e.client.Beta.Threads.Messages.Delete(ctx, th.ID, first.Data[0].ID); err != nil || !del.Deleted {
		t.Fatalf("delete the message: %v", apiErr(err))
	}
	_, err = e.client.Beta.Threads.Messages.Get(ctx, th.ID, first.Data[0].ID)
	wantAPIError(t, err, http.StatusNotFound, "")
}

// TestAnAccountsListWhoseReadModelStandsStillIsA503: an account's assistants, threads, files and vector stores
// span many aggregates and are not folded from the log, so past the read wait a list whose read model stands
// still is a 503 saying the model is behind, not the list without the object just made (answered made, from the
// log); once the model goes on, the list has it.
func TestAnAccountsListWhoseReadModelStandsStillIsA503(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	var releases []func()
	for _, name := range []string{"projection.assistants_v2", "projection.threads_v2", "projection.files_v2",
		"projection.vector_stores"} {
		releases = append(releases, e.node.HoldLease(t, name))
	}
	a := e.assistant(t)
	th := e.thread(t, "Hello.")
	file := e.upload(t, "notes.txt", []byte("hello"))
	vs, err := e.client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("notes")})
	if err != nil {
		t.Fatalf("create a vector store: %v", apiErr(err))
	}

	lists := map[string]func() (string, error){
		"assistants": func() (string, error) {
			p, err := e.client.Beta.Assistants.List(ctx, openai.BetaAssistantListParams{})
			if err != nil || len(p.Data) != 1 {
				return "", err
			}
			return p.Data[0].ID, nil
		},
		"threads": func() (string, error) {
			var out struct{ Data []struct{ ID string } }
			err := e.client.Get(ctx, "threads", nil, &out)
			if err != nil || len(out.Data) != 1 {
				return "", err
			}
			return out.Data[0].ID, nil
		},
		"files": func() (string, error) {
			p, err := e.client.Files.List(ctx, openai.FileListParams{})
			if err != nil || len(p.Data) != 1 {
				return "", err
			}
			return p.Data[0].ID, nil
		},
		"vector stores": func() (string, error) {
			p, err := e.client.VectorStores.List(ctx, openai.VectorStoreListParams{})
			if err != nil || len(p.Data) != 1 {
				return "", err
			}
			return p.Data[0].ID, nil
		},
	}
	for what, list := range lists {
		_, err := list()
		wantBehind(t, "list "+what, err)
	}

	for _, release := range releases {
		release()
	}
	want := map[string]string{"assistants": a.ID, "threads": th.ID, "files": file, "vector stores": vs.ID}
	for what, list := range lists {
		waittest.Until(t, "the "+what+" list to show the one made", func() bool {
			id, err := list()
			return err == nil && id == want[what]
		})
	}
}
