package openaiapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAThreadsRoutesCheckTheThreadAsTheLogHasItWhileTheThreadsReadModelStandsStill: every route under a thread
// checks the thread first; while the threads read model applies nothing, a thread deleted meanwhile is not found
// there (its messages and runs are not served on as the model last showed it), and one made meanwhile is found.
func TestAThreadsRoutesCheckTheThreadAsTheLogHasItWhileTheThreadsReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	gone := e.thread(t, "Goodbye.")
	msgs, err := e.client.Beta.Threads.Messages.List(ctx, gone.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data) != 1 {
		t.Fatalf("the thread's messages: %v %s", apiErr(err), msgs.RawJSON())
	}
	msgID := msgs.Data[0].ID

	release := e.node.HoldLease(t, "projection.threads_v2")
	defer release()
	if del, err := e.client.Beta.Threads.Delete(ctx, gone.ID); err != nil || !del.Deleted {
		t.Fatalf("delete the thread: %v", apiErr(err))
	}
	_, err = e.client.Beta.Threads.Messages.List(ctx, gone.ID, openai.BetaThreadMessageListParams{})
	wantAPIError(t, err, http.StatusNotFound, "")
	_, err = e.client.Beta.Threads.Messages.Get(ctx, gone.ID, msgID)
	wantAPIError(t, err, http.StatusNotFound, "")
	_, err = e.client.Beta.Threads.Runs.List(ctx, gone.ID, openai.BetaThreadRunListParams{})
	wantAPIError(t, err, http.StatusNotFound, "")

	made := e.thread(t, "Hello.")
	if msgs, err := e.client.Beta.Threads.Messages.List(ctx, made.ID, openai.BetaThreadMessageListParams{}); err != nil ||
		len(msgs.Data) != 1 {
		t.Fatalf("the messages of a thread made meanwhile: %v %s", apiErr(err), msgs.RawJSON())
	}
	if runs, err := e.client.Beta.Threads.Runs.List(ctx, made.ID, openai.BetaThreadRunListParams{}); err != nil ||
		len(runs.Data) != 0 {
		t.Fatalf("the runs of a thread made meanwhile: %v %s", apiErr(err), runs.RawJSON())
	}
}

// TestAttachmentsAreKeptWhileTheVectorStoresReadModelStandsStill: while the vector stores read model applies
// nothing, a thread made with a file attached for file_search is made with its store (not refused with a timeout a
// client would retry into a second thread), a message that attaches one is added, and a run whose own message
// attaches one searches the file: the thread's store is made all the same, and what is read of it is read from
// the log.
func TestAttachmentsAreKeptWhileTheVectorStoresReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	notes := e.upload(t, "notes.txt", []byte("The boiler is descaled every three months."))
	pdf := e.upload(t, "manual.pdf", manual())
	a, err := e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfFileSearch: &openai.FileSearchToolParam{}}}})
	if err != nil {
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	plain := e.thread(t, "Hello.")
	searched := e.thread(t, "I have a question.")

	release := e.node.HoldLease(t, "projection.vector_stores")
	defer release()
	th, err := e.client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{Messages: []openai.BetaThreadNewParamsMessage{{
		Role: "user", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("When do I descale?")},
		Attachments: []openai.BetaThreadNewParamsMessageAttachment{
			{FileID: openai.String(notes), Tools: []openai.BetaThreadNewParamsMessageAttachmentToolUnion{{OfFileSearch: &openai.BetaThreadNewParamsMessageAttachmentToolFileSearch{}}}},
		}}}})
	if err != nil {
		t.Fatalf("create a thread with an attachment: %v", apiErr(err))
	}
	if len(th.ToolResources.FileSearch.VectorStoreIDs) != 1 {
		t.Fatalf("the thread as created shows no store: %s", th.RawJSON())
	}
	if _, err := e.client.Beta.Threads.Messages.New(ctx, plain.ID, openai.BetaThreadMessageNewParams{Role: "user",
		Content: openai.BetaThreadMessageNewParamsContentUnion{OfString: openai.String("And the notes?")},
		Attachments: []openai.BetaThreadMessageNewParamsAttachment{
			{FileID: openai.String(notes), Tools: []openai.BetaThreadMessageNewParamsAttachmentToolUnion{{OfFileSearch: &openai.BetaThreadMessageNewParamsAttachmentToolFileSearch{}}}},
		}}); err != nil {
		t.Fatalf("add a message with an attachment: %v", apiErr(err))
	}
	if got, err := e.client.Beta.Threads.Get(ctx, plain.ID); err != nil || len(got.ToolResources.FileSearch.VectorStoreIDs) != 1 {
		t.Fatalf("the thread after a message attached a file: %v %s", apiErr(err), got.RawJSON())
	}

	// The run's own message attaches the manual: the run's worker makes the thread's store as it searches.
	e.model.Enqueue(
		llmtest.ToolCalls(llm.ToolCall{ID: "call_fs_1", Name: "file_search", Arguments: `{"queries":["how to descale the boiler"]}`}),
		llmtest.Text("Run the descaling solution through the boiler every three months【0:0†manual.pdf】."),
	)
	run, err := e.client.Beta.Threads.Runs.New(ctx, searched.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID,
		AdditionalMessages: []openai.BetaThreadRunNewParamsAdditionalMessage{{Role: "user",
			Content: openai.BetaThreadRunNewParamsAdditionalMessageContentUnion{OfString: openai.String("How often should I descale the machine?")},
			Attachments: []openai.BetaThreadRunNewParamsAdditionalMessageAttachment{
				{FileID: openai.String(pdf), Tools: []openai.BetaThreadRunNewParamsAdditionalMessageAttachmentToolUnion{{OfFileSearch: &openai.BetaThreadRunNewParamsAdditionalMessageAttachmentToolFileSearch{}}}},
			}}}})
	if err != nil {
		t.Fatalf("create a run: %v", apiErr(err))
	}
	if run = e.waitRun(t, searched.ID, run.ID); run.Status != openai.RunStatusCompleted {
		t.Fatalf("the run: %s", run.RawJSON())
	}
	e.checkSearchTurn(t)
}

// TestARunSearchesItsAssistantsStoresWhileTheAssistantsReadModelStandsStill: while the assistants read model
// applies nothing, a run of an assistant made meanwhile with a vector store in its tool_resources searches that
// store: the run's worker reads the assistant's tool_resources from the log past the read wait, not from the
// model, which does not hold the assistant yet.
func TestARunSearchesItsAssistantsStoresWhileTheAssistantsReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	pdf := e.upload(t, "manual.pdf", manual())
	store, err := e.client.VectorStores.New(ctx, openai.VectorStoreNewParams{FileIDs: []string{pdf}})
	if err != nil {
		t.Fatalf("create store: %v", apiErr(err))
	}
	if f, err := e.client.VectorStores.Files.PollStatus(ctx, store.ID, pdf, 20); err != nil || f.Status != "completed" {
		t.Fatalf("process the PDF: %v", apiErr(err))
	}
	th := e.thread(t, "How often should I descale the machine?")

	release := e.node.HoldLease(t, "projection.assistants_v2")
	defer release()
	a, err := e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfFileSearch: &openai.FileSearchToolParam{}}},
		ToolResources: openai.BetaAssistantNewParamsToolResources{FileSearch: openai.BetaAssistantNewParamsToolResourcesFileSearch{
			VectorStoreIDs: []string{store.ID}}}})
	if err != nil {
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	e.model.Enqueue(
		llmtest.ToolCalls(llm.ToolCall{ID: "call_fs_1", Name: "file_search", Arguments: `{"queries":["how to descale the boiler"]}`}),
		llmtest.Text("Run the descaling solution through the boiler every three months【0:0†manual.pdf】."),
	)
	e.completeRun(t, th.ID, a.ID)
	e.checkSearchTurn(t)
}

// TestARunsCodeGetsItsAssistantsFilesWhileTheAssistantsReadModelStandsStill: an assistant made with a CSV for
// code_interpreter while the assistants model stands still; its run's code finds the CSV in /mnt/data, read from the
// log past the wait.
func TestARunsCodeGetsItsAssistantsFilesWhileTheAssistantsReadModelStandsStill(t *testing.T) {
	t.Parallel()
	if !canSandbox() {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	csv := e.upload(t, "sales.csv", []byte("region,amount\nnorth,10\nsouth,20\neast,30\n"))
	th := e.thread(t, "What are the total sales?")

	release := e.node.HoldLease(t, "projection.assistants_v2")
	defer release()
	a, err := e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfCodeInterpreter: &openai.CodeInterpreterToolParam{}}},
		ToolResources: openai.BetaAssistantNewParamsToolResources{CodeInterpreter: openai.BetaAssistantNewParamsToolResourcesCodeInterpreter{
			FileIDs: []string{csv}}}})
	if err != nil {
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	e.model.Enqueue(
		codeCall("call_sum", "print(sum(int(l.split(',')[1]) for l in open('/mnt/data/sales.csv').read().split()[1:]))"),
		llmtest.Text("Sales total 60."),
	)
	e.completeRun(t, th.ID, a.ID)
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(reqs))
	}
	if out := reqs[1].LastMessage(); out.ToolCallID != "call_sum" || strings.TrimSpace(out.Content) != "60" {
		t.Fatalf("the code's output as the model read it: %+v", out)
	}
}
