package openaiapi_test

import (
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// A thread made with a file attached for file_search shows, as OpenAI's does, the vector store made for it in
// tool_resources.file_search.vector_store_ids, on create and on retrieve; the store holds the file. An attachment
// for code_interpreter alone makes no store.
func TestThreadShowsItsAttachmentStore(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	notes := e.upload(t, "notes.txt", []byte("The boiler is descaled every three months."))
	th, err := e.client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{Messages: []openai.BetaThreadNewParamsMessage{{
		Role: "user", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("When do I descale?")},
		Attachments: []openai.BetaThreadNewParamsMessageAttachment{
			{FileID: openai.String(notes), Tools: []openai.BetaThreadNewParamsMessageAttachmentToolUnion{{OfFileSearch: &openai.BetaThreadNewParamsMessageAttachmentToolFileSearch{}}}},
		}}}})
	if err != nil {
		t.Fatalf("create thread: %v", apiErr(err))
	}
	ids := th.ToolResources.FileSearch.VectorStoreIDs
	if len(ids) != 1 {
		t.Fatalf("the thread as created shows no store: %s", th.RawJSON())
	}
	got, err := e.client.Beta.Threads.Get(ctx, th.ID)
	if err != nil || len(got.ToolResources.FileSearch.VectorStoreIDs) != 1 || got.ToolResources.FileSearch.VectorStoreIDs[0] != ids[0] {
		t.Fatalf("the thread as retrieved: %v %s", apiErr(err), got.RawJSON())
	}
	files, err := e.client.VectorStores.Files.List(ctx, ids[0], openai.VectorStoreFileListParams{})
	if err != nil || len(files.Data) != 1 || files.Data[0].ID != notes {
		t.Fatalf("the thread's store %s holds: %v %s", ids[0], apiErr(err), files.RawJSON())
	}

	csv := e.upload(t, "sales.csv", []byte("region,amount\nnorth,10\n"))
	plain, err := e.client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{Messages: []openai.BetaThreadNewParamsMessage{{
		Role: "user", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("Count the rows.")},
		Attachments: []openai.BetaThreadNewParamsMessageAttachment{
			{FileID: openai.String(csv), Tools: []openai.BetaThreadNewParamsMessageAttachmentToolUnion{{OfCodeInterpreter: &openai.CodeInterpreterToolParam{}}}},
		}}}})
	if err != nil {
		t.Fatalf("create thread: %v", apiErr(err))
	}
	if n := len(plain.ToolResources.FileSearch.VectorStoreIDs); n != 0 {
		t.Fatalf("a code_interpreter attachment made a store: %s", plain.RawJSON())
	}

	// A message added later with a file for file_search gives the thread its store too.
	if _, err := e.client.Beta.Threads.Messages.New(ctx, plain.ID, openai.BetaThreadMessageNewParams{Role: "user",
		Content: openai.BetaThreadMessageNewParamsContentUnion{OfString: openai.String("And the notes?")},
		Attachments: []openai.BetaThreadMessageNewParamsAttachment{
			{FileID: openai.String(notes), Tools: []openai.BetaThreadMessageNewParamsAttachmentToolUnion{{OfFileSearch: &openai.BetaThreadMessageNewParamsAttachmentToolFileSearch{}}}},
		}}); err != nil {
		t.Fatalf("add message: %v", apiErr(err))
	}
	later, err := e.client.Beta.Threads.Get(ctx, plain.ID)
	if err != nil || len(later.ToolResources.FileSearch.VectorStoreIDs) != 1 {
		t.Fatalf("the thread after a message attached a file for file_search: %v %s", apiErr(err), later.RawJSON())
	}
}

// TestAnAttachmentKeepsWhatTheThreadsToolResourcesHoldWhileTheirReadModelStandsStill: a message that attaches a file
// for file_search names the thread's store in tool_resources, and keeps what they held as the log has it: a
// code_interpreter file set a moment before, which the threads read model standing still does not show yet, is not
// written over.
func TestAnAttachmentKeepsWhatTheThreadsToolResourcesHoldWhileTheirReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	notes := e.upload(t, "notes.txt", []byte("The boiler is descaled every three months."))
	csv := e.upload(t, "sales.csv", []byte("region,amount\nnorth,10\n"))
	th := e.thread(t, "Hello.")

	release := e.node.HoldLease(t, "projection.threads_v2")
	defer release()
	if _, err := e.client.Beta.Threads.Update(ctx, th.ID, openai.BetaThreadUpdateParams{
		ToolResources: openai.BetaThreadUpdateParamsToolResources{
			CodeInterpreter: openai.BetaThreadUpdateParamsToolResourcesCodeInterpreter{FileIDs: []string{csv}}}}); err != nil {
		t.Fatalf("set the thread's code_interpreter files: %v", apiErr(err))
	}
	if _, err := e.client.Beta.Threads.Messages.New(ctx, th.ID, openai.BetaThreadMessageNewParams{Role: "user",
		Content: openai.BetaThreadMessageNewParamsContentUnion{OfString: openai.String("And the notes?")},
		Attachments: []openai.BetaThreadMessageNewParamsAttachment{
			{FileID: openai.String(notes), Tools: []openai.BetaThreadMessageNewParamsAttachmentToolUnion{{OfFileSearch: &openai.BetaThreadMessageNewParamsAttachmentToolFileSearch{}}}},
		}}); err != nil {
		t.Fatalf("add message: %v", apiErr(err))
	}
	got, err := e.client.Beta.Threads.Get(ctx, th.ID)
	if err != nil || len(got.ToolResources.FileSearch.VectorStoreIDs) != 1 ||
		!slices.Equal(got.ToolResources.CodeInterpreter.FileIDs, []string{csv}) {
		t.Fatalf("the thread's tool_resources: %v %s", apiErr(err), got.RawJSON())
	}
}
