package openaiapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/extract/extracttest"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// upload uploads a file for assistants with the SDK.
func (e *env) upload(t *testing.T, name string, content []byte) string {
	t.Helper()
	f, err := e.client.Files.New(ctxFor(t), openai.FileNewParams{File: openai.File(bytes.NewReader(content), name, "application/octet-stream"),
		Purpose: openai.FilePurposeAssistants})
	if err != nil {
		t.Fatalf("upload %s: %v", name, apiErr(err))
	}
	return f.ID
}

// manual is a three-page PDF, each page on its own subject.
func manual() []byte {
	return extracttest.PDF(
		[]string{"Installing the espresso machine.", "Fill the water tank and plug the machine in before the first use."},
		[]string{"Descaling the boiler.", "Every three months run the descaling solution through the boiler to remove limescale."},
		[]string{"Warranty terms.", "The warranty covers the pump and the heating element for two years."},
	)
}

// TestVectorStoresWithTheSDK goes through a vector store's life with the official SDK: a PDF made searchable, a
// file added and polled, a batch with attributes, search with and without a filter, the file's text, listing,
// modify, removal, delete; and a file that cannot be read ends failed with OpenAI's code.
func TestVectorStoresWithTheSDK(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	vs := e.client.VectorStores
	pdf := e.upload(t, "manual.pdf", manual())

	store, err := vs.New(ctx, openai.VectorStoreNewParams{Name: openai.String("Support"), FileIDs: []string{pdf},
		Metadata: shared.Metadata{"team": "support"}, ExpiresAfter: openai.VectorStoreNewParamsExpiresAfter{Days: 7}})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if !strings.HasPrefix(store.ID, "vs_") || store.Object != "vector_store" || store.Name != "Support" || store.FileCounts.Total != 1 ||
		store.Metadata["team"] != "support" || store.ExpiresAfter.Days != 7 || store.ExpiresAt == 0 {
		t.Fatalf("created store: %s", store.RawJSON())
	}
	f, err := vs.Files.PollStatus(ctx, store.ID, pdf, 20)
	if err != nil || f.Status != "completed" || f.UsageBytes == 0 || f.VectorStoreID != store.ID || f.ChunkingStrategy.Static.MaxChunkSizeTokens != 800 {
		t.Fatalf("the PDF after processing: %v %s", apiErr(err), f.RawJSON())
	}

	notes := e.upload(t, "notes.txt", []byte("The office plant is watered on Fridays by whoever is in first."))
	f, err = vs.Files.NewAndPoll(ctx, store.ID, openai.VectorStoreFileNewParams{FileID: notes}, 20)
	if err != nil || f.Status != "completed" {
		t.Fatalf("add a text file: %v %s", apiErr(err), f.RawJSON())
	}

	faq := e.upload(t, "faq.md", []byte("# FAQ\n\nThe grinder has twelve settings; finer for espresso, coarser for filter coffee."))
	batch, err := vs.FileBatches.NewAndPoll(ctx, store.ID, openai.VectorStoreFileBatchNewParams{FileIDs: []string{faq},
		Attributes: map[string]openai.VectorStoreFileBatchNewParamsAttributeUnion{"kind": {OfString: openai.String("faq")}}}, 20)
	if err != nil || !strings.HasPrefix(batch.ID, "vsfb_") || batch.Status != "completed" || batch.FileCounts.Completed != 1 || batch.FileCounts.Total != 1 {
		t.Fatalf("batch: %v %s", apiErr(err), batch.RawJSON())
	}

	// The page about descaling answers a question about limescale.
	res, err := vs.Search(ctx, store.ID, openai.VectorStoreSearchParams{
		Query: openai.VectorStoreSearchParamsQueryUnion{OfString: openai.String("how do I remove limescale from the boiler?")}})
	if err != nil || len(res.Data) == 0 {
		t.Fatalf("search: %v %s", apiErr(err), res.RawJSON())
	}
	top := res.Data[0]
	if top.FileID != pdf || top.Filename != "manual.pdf" || len(top.Content) != 1 || !strings.Contains(top.Content[0].Text, "descaling solution") || top.Score <= 0 {
		t.Fatalf("the best result is not the descaling page: %s", res.RawJSON())
	}
	// A filter on the batch's attribute leaves only its file.
	res, err = vs.Search(ctx, store.ID, openai.VectorStoreSearchParams{
		Query: openai.VectorStoreSearchParamsQueryUnion{OfString: openai.String("espresso")},
		Filters: openai.VectorStoreSearchParamsFiltersUnion{OfComparisonFilter: &shared.ComparisonFilterParam{Key: "kind",
			Type: shared.ComparisonFilterTypeEq, Value: shared.ComparisonFilterValueUnionParam{OfString: openai.String("faq")}}}})
	if err != nil || len(res.Data) == 0 {
		t.Fatalf("filtered search: %v %s", apiErr(err), res.RawJSON())
	}
	for _, r := range res.Data {
		if r.FileID != faq || r.Attributes["kind"].OfString != "faq" {
			t.Fatalf("a filtered search found another file: %s", res.RawJSON())
		}
	}

	content, err := vs.Files.Content(ctx, store.ID, pdf)
	if err != nil || len(content.Data) != 1 || !strings.Contains(content.Data[0].Text, "Warranty terms") || !strings.Contains(content.Data[0].Text, "Installing the espresso machine") {
		t.Fatalf("the PDF's text: %v %s", apiErr(err), content.RawJSON())
	}

	files, err := vs.Files.List(ctx, store.ID, openai.VectorStoreFileListParams{Filter: openai.VectorStoreFileListParamsFilterCompleted})
	if err != nil || len(files.Data) != 3 {
		t.Fatalf("completed files: %v %s", apiErr(err), files.RawJSON())
	}
	inBatch, err := vs.FileBatches.ListFiles(ctx, store.ID, batch.ID, openai.VectorStoreFileBatchListFilesParams{})
	if err != nil || len(inBatch.Data) != 1 || inBatch.Data[0].ID != faq {
		t.Fatalf("the batch's files: %v %s", apiErr(err), inBatch.RawJSON())
	}

	up, err := vs.Update(ctx, store.ID, openai.VectorStoreUpdateParams{Name: openai.String("Support KB")})
	if err != nil || up.Name != "Support KB" || up.Metadata["team"] != "support" || up.FileCounts.Completed != 3 || up.Status != "completed" || up.UsageBytes == 0 {
		t.Fatalf("update: %v %s", apiErr(err), up.RawJSON())
	}
	list, err := vs.List(ctx, openai.VectorStoreListParams{})
	if err != nil || len(list.Data) != 1 || list.Data[0].ID != store.ID || list.Data[0].Name != "Support KB" {
		t.Fatalf("list: %v %s", apiErr(err), list.RawJSON())
	}

	// Removed, a file is no longer found; it stays a file.
	gone, err := vs.Files.Delete(ctx, store.ID, notes)
	if err != nil || !gone.Deleted || gone.Object != "vector_store.file.deleted" {
		t.Fatalf("remove a file: %v %s", apiErr(err), gone.RawJSON())
	}
	res, err = vs.Search(ctx, store.ID, openai.VectorStoreSearchParams{
		Query: openai.VectorStoreSearchParamsQueryUnion{OfString: openai.String("who waters the office plant on Fridays")}})
	if err != nil {
		t.Fatalf("search after removal: %v", apiErr(err))
	}
	for _, r := range res.Data {
		if r.FileID == notes {
			t.Fatalf("a removed file was found: %s", res.RawJSON())
		}
	}
	if _, err := e.client.Files.Get(ctx, notes); err != nil {
		t.Fatalf("the removed file itself: %v", apiErr(err))
	}

	// A file no extractor reads ends failed, with OpenAI's code, and the store says so in its counts.
	blob := e.upload(t, "firmware.bin", bytes.Repeat([]byte{0, 1, 2, 0xff, 0xfe}, 200))
	f, err = vs.Files.NewAndPoll(ctx, store.ID, openai.VectorStoreFileNewParams{FileID: blob}, 20)
	if err != nil || f.Status != "failed" || f.LastError.Code != "unsupported_file" || f.LastError.Message == "" {
		t.Fatalf("an unreadable file: %v %s", apiErr(err), f.RawJSON())
	}

	del, err := vs.Delete(ctx, store.ID)
	if err != nil || !del.Deleted || del.Object != "vector_store.deleted" {
		t.Fatalf("delete: %v %s", apiErr(err), del.RawJSON())
	}
	_, err = vs.Get(ctx, store.ID)
	wantAPIError(t, err, http.StatusNotFound, "vector_store_id")
	list, err = vs.List(ctx, openai.VectorStoreListParams{})
	if err != nil || len(list.Data) != 0 {
		t.Fatalf("list after delete: %v %s", apiErr(err), list.RawJSON())
	}
}

// searchAssistant makes a vector store of the manual and an assistant with file_search over it.
func (e *env) searchAssistant(t *testing.T) (pdf string, a *openai.Assistant) {
	t.Helper()
	ctx := ctxFor(t)
	pdf = e.upload(t, "manual.pdf", manual())
	store, err := e.client.VectorStores.New(ctx, openai.VectorStoreNewParams{FileIDs: []string{pdf}})
	if err != nil {
		t.Fatalf("create store: %v", apiErr(err))
	}
	if f, err := e.client.VectorStores.Files.PollStatus(ctx, store.ID, pdf, 20); err != nil || f.Status != "completed" {
		t.Fatalf("process the PDF: %v", apiErr(err))
	}
	a, err = e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfFileSearch: &openai.FileSearchToolParam{}}},
		ToolResources: openai.BetaAssistantNewParamsToolResources{FileSearch: openai.BetaAssistantNewParamsToolResourcesFileSearch{
			VectorStoreIDs: []string{store.ID}}}})
	if err != nil {
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	if len(a.Tools) != 1 || a.Tools[0].Type != "file_search" {
		t.Fatalf("assistant tools: %s", a.RawJSON())
	}
	// The model searches, then answers citing what it found.
	e.model.Enqueue(
		llmtest.ToolCalls(llm.ToolCall{ID: "call_fs_1", Name: "file_search", Arguments: `{"queries":["how to descale the boiler"]}`}),
		llmtest.Text("Run the descaling solution through the boiler every three months【0:0†manual.pdf】."),
	)
	return pdf, a
}

// checkSearchTurn checks what the model was given: the file_search tool, then the search's output with markers.
func (e *env) checkSearchTurn(t *testing.T) {
	t.Helper()
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(reqs))
	}
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "file_search" {
		t.Fatalf("the first request's tools: %s", reqs[0].Body)
	}
	out := reqs[1].LastMessage()
	if out.Role != llm.RoleTool || out.ToolCallID != "call_fs_1" || !strings.Contains(out.Content, "【0:0†manual.pdf】") ||
		!strings.Contains(out.Content, "descaling solution") {
		t.Fatalf("the search's output as the model read it: %+v", out)
	}
}

// TestFileSearchRunCitesTheFile: a run whose model calls file_search gets what the assistant's vector store holds,
// records a file_search step with the results, and its answer carries a file_citation of the PDF.
func TestFileSearchRunCitesTheFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	pdf, a := e.searchAssistant(t)
	th := e.thread(t, "How often should I descale the machine?")
	run := e.completeRun(t, th.ID, a.ID)
	e.checkSearchTurn(t)
	steps, err := e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{Order: openai.BetaThreadRunStepListParamsOrderAsc})
	if err != nil || len(steps.Data) != 2 {
		t.Fatalf("steps: %v %s", apiErr(err), steps.RawJSON())
	}
	call := steps.Data[0].StepDetails.ToolCalls
	if steps.Data[0].Status != "completed" || len(call) != 1 || call[0].Type != "file_search" || call[0].ID != "call_fs_1" {
		t.Fatalf("the search step: %s", steps.Data[0].RawJSON())
	}
	if res := call[0].FileSearch.Results; len(res) == 0 || res[0].FileID != pdf || res[0].FileName != "manual.pdf" {
		t.Fatalf("the search's results: %s", steps.Data[0].RawJSON())
	}
	msgs, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data) != 2 {
		t.Fatalf("messages: %v", apiErr(err))
	}
	text := msgs.Data[0].Content[0].Text
	if len(text.Annotations) != 1 {
		t.Fatalf("annotations: %s", msgs.Data[0].RawJSON())
	}
	ann := text.Annotations[0]
	if ann.Type != "file_citation" || ann.FileCitation.FileID != pdf || ann.Text != "【0:0†manual.pdf】" ||
		[]rune(text.Value)[ann.StartIndex] != '【' || int(ann.EndIndex) != len([]rune(text.Value))-1 {
		t.Fatalf("citation: %s", msgs.Data[0].RawJSON())
	}
}

// TestFileSearchRunStreams: the same run streamed: the search step completes in the stream, the run goes on, and
// the final message carries the citation.
func TestFileSearchRunStreams(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	pdf, a := e.searchAssistant(t)
	th := e.thread(t, "How often should I descale the machine?")
	stream := e.client.Beta.Threads.Runs.NewStreaming(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID})
	var names []string
	var searched bool
	var final openai.Message
	for stream.Next() {
		ev := stream.Current()
		names = append(names, ev.Event)
		switch v := ev.AsAny().(type) {
		case openai.AssistantStreamEventThreadRunStepCompleted:
			if c := v.Data.StepDetails.ToolCalls; len(c) == 1 && c[0].Type == "file_search" && len(c[0].FileSearch.Results) > 0 {
				searched = true
			}
		case openai.AssistantStreamEventThreadMessageCompleted:
			final = v.Data
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", apiErr(err))
	}
	if !searched || names[len(names)-1] != "thread.run.completed" {
		t.Fatalf("events: %v", names)
	}
	if len(final.Content) != 1 || len(final.Content[0].Text.Annotations) != 1 || final.Content[0].Text.Annotations[0].FileCitation.FileID != pdf {
		t.Fatalf("final message: %s", final.RawJSON())
	}
	e.checkSearchTurn(t)
}

// TestFileSearchWithoutAStoreSaysSo: an assistant with file_search and no vector store: the model is told the
// search has nothing to search, not given made-up results.
func TestFileSearchWithoutAStoreSaysSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	a, err := e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfFileSearch: &openai.FileSearchToolParam{}}}})
	if err != nil {
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	e.model.Enqueue(
		llmtest.ToolCalls(llm.ToolCall{ID: "call_fs_1", Name: "file_search", Arguments: `{"queries":["descaling"]}`}),
		llmtest.Text("I have no files to search."),
	)
	th := e.thread(t, "How often should I descale?")
	e.completeRun(t, th.ID, a.ID)
	out := e.model.Requests()[1].LastMessage().Content
	if !strings.Contains(out, "no vector store is attached") || !strings.Contains(out, "vector_store_ids") {
		t.Fatalf("the model was told %q", out)
	}
}

// TestOfflineFileSearchQuotesOrSaysNothing: with the offline model, an assistant with file_search searches for the
// question and quotes the best passage with its citation, and says so when nothing in the files matches: it never
// writes an answer of its own.
func TestOfflineFileSearchQuotesOrSaysNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	pdf, store := e.manualStore(t)
	a, err := e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "offline",
		Tools: []openai.AssistantToolUnionParam{{OfFileSearch: &openai.FileSearchToolParam{}}},
		ToolResources: openai.BetaAssistantNewParamsToolResources{FileSearch: openai.BetaAssistantNewParamsToolResourcesFileSearch{
			VectorStoreIDs: []string{store.ID}}}})
	if err != nil {
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	answer := func(question string) openai.Message {
		th := e.thread(t, question)
		e.completeRun(t, th.ID, a.ID)
		msgs, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
		if err != nil || len(msgs.Data) != 2 {
			t.Fatalf("messages: %v", apiErr(err))
		}
		return msgs.Data[0]
	}
	m := answer("How do I get limescale out of the boiler?")
	text := m.Content[0].Text
	if !strings.Contains(text.Value, "Every three months run the descaling solution") || len(text.Annotations) != 1 ||
		text.Annotations[0].FileCitation.FileID != pdf || !strings.Contains(text.Value, text.Annotations[0].Text) {
		t.Fatalf("the offline answer: %s", m.RawJSON())
	}
	m = answer("What is the capital of Mongolia?")
	if v := m.Content[0].Text.Value; !strings.Contains(v, "found nothing that matches") || len(m.Content[0].Text.Annotations) != 0 {
		t.Fatalf("an answer the files do not hold: %s", m.RawJSON())
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Fatalf("the scripted model was asked %d times; the offline model answers here", n)
	}
}

// heldEmbedder holds the embedding of the manual's text until release is closed: its processing stays in progress.
type heldEmbedder struct {
	embedding.Embedder
	release <-chan struct{}
}

func (h heldEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, "limescale") {
			select {
			case <-h.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return h.Embedder.Embed(ctx, texts)
}

// TestFileSearchWaitsForTheThreadsStore: a run whose thread names a vector store with a file still being processed
// searches the store once the file is processed, as OpenAI's run waits for its thread's stores (up to a minute): the
// search finds the file and the answer cites it, rather than the model being told nothing matched.
func TestFileSearchWaitsForTheThreadsStore(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	e := newEnv(t, platformtest.WithEmbedder(func(inner embedding.Embedder) embedding.Embedder {
		return heldEmbedder{Embedder: inner, release: release}
	}))
	ctx := ctxFor(t)
	pdf := e.upload(t, "manual.pdf", manual())
	store, err := e.client.VectorStores.New(ctx, openai.VectorStoreNewParams{FileIDs: []string{pdf}})
	if err != nil {
		t.Fatalf("create store: %v", apiErr(err))
	}
	if f, err := e.client.VectorStores.Files.Get(ctx, store.ID, pdf); err != nil || f.Status != "in_progress" {
		t.Fatalf("the PDF while its embedding is held: %v %s", apiErr(err), f.RawJSON())
	}
	a, err := e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfFileSearch: &openai.FileSearchToolParam{}}}})
	if err != nil {
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	th, err := e.client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{
		Messages: []openai.BetaThreadNewParamsMessage{{Role: "user",
			Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("How often should I descale the machine?")}}},
		ToolResources: openai.BetaThreadNewParamsToolResources{FileSearch: openai.BetaThreadNewParamsToolResourcesFileSearch{
			VectorStoreIDs: []string{store.ID}}}})
	if err != nil {
		t.Fatalf("create thread: %v", apiErr(err))
	}
	// The file's processing goes on a moment after the model asked for the search: a run that did not wait for it
	// would have searched by then (how long it is changes nothing for a run that waits).
	var asked atomic.Int32
	e.model.HandleFunc(func(llmtest.Request) llmtest.Reply {
		if asked.Add(1) == 1 {
			time.AfterFunc(200*time.Millisecond, func() { close(release) })
			return llmtest.ToolCalls(llm.ToolCall{ID: "call_fs_1", Name: "file_search", Arguments: `{"queries":["how to descale the boiler"]}`})
		}
		return llmtest.Text("Run the descaling solution through the boiler every three months【0:0†manual.pdf】.")
	})
	e.completeRun(t, th.ID, a.ID)
	e.checkSearchTurn(t)
	msgs, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data) != 2 || len(msgs.Data[0].Content[0].Text.Annotations) != 1 ||
		msgs.Data[0].Content[0].Text.Annotations[0].FileCitation.FileID != pdf {
		t.Fatalf("the answer's citation: %v %s", apiErr(err), msgs.RawJSON())
	}
}
