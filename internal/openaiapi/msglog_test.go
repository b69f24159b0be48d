package openaiapi_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAThreadsMessagesAreReadFromTheLogWhileTheirReadModelStandsStill: while the messages read model applies
// nothing, a thread's messages written meanwhile (runs' answers, a run's additional message) are listed and got
// all the same, past the read wait, from the log: in the model's order, paged and filtered as the model's list is.
func TestAThreadsMessagesAreReadFromTheLogWhileTheirReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	a := e.assistant(t)
	e.model.Enqueue(llmtest.Text("Paris."), llmtest.Text("Lyon."))

	th := e.thread(t, "What is the capital of France?")
	release := e.node.HoldLease(t, "projection.messages_v2")
	defer release()
	first := e.completeRun(t, th.ID, a.ID)
	second, err := e.client.Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID,
		AdditionalMessages: []openai.BetaThreadRunNewParamsAdditionalMessage{{Role: "user",
			Content: openai.BetaThreadRunNewParamsAdditionalMessageContentUnion{
				OfString: openai.String("And its second city?")}}}})
	if err != nil {
		t.Fatalf("create the second run: %v", apiErr(err))
	}
	if run := e.waitRun(t, th.ID, second.ID); run.Status != openai.RunStatusCompleted {
		t.Fatalf("the second run: %s", run.RawJSON())
	}

	list := func(p openai.BetaThreadMessageListParams) ([]string, []string, bool) {
		t.Helper()
		page, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, p)
		if err != nil {
			t.Fatalf("list %+v: %v", p, apiErr(err))
		}
		var texts, ids []string
		for _, m := range page.Data {
			if len(m.Content) != 1 || m.ThreadID != th.ID {
				t.Fatalf("a listed message: %s", m.RawJSON())
			}
			texts, ids = append(texts, m.Content[0].Text.Value), append(ids, m.ID)
		}
		return texts, ids, page.HasMore
	}
	texts, ids, _ := list(openai.BetaThreadMessageListParams{})
	want := []string{"Lyon.", "And its second city?", "Paris.", "What is the capital of France?"}
	if !slices.Equal(texts, want) {
		t.Fatalf("the thread's messages: %q, want %q", texts, want)
	}
	if texts, _, _ := list(openai.BetaThreadMessageListParams{RunID: openai.String(first.ID)}); !slices.Equal(texts,
		[]string{"Paris."}) {
		t.Fatalf("the first run's messages: %q", texts)
	}
	asc := openai.BetaThreadMessageListParamsOrderAsc
	if texts, _, more := list(openai.BetaThreadMessageListParams{Order: asc, Limit: openai.Int(2)}); !more ||
		!slices.Equal(texts, []string{"What is the capital of France?", "Paris."}) {
		t.Fatalf("the first page: %q, has_more %v", texts, more)
	}
	if texts, _, more := list(openai.BetaThreadMessageListParams{Order: asc, After: openai.String(ids[2])}); more ||
		!slices.Equal(texts, []string{"And its second city?", "Lyon."}) {
		t.Fatalf("after Paris.: %q, has_more %v", texts, more)
	}
	before := openai.BetaThreadMessageListParams{Order: asc, Before: openai.String(ids[0]), Limit: openai.Int(1)}
	if texts, _, _ := list(before); !slices.Equal(texts, []string{"And its second city?"}) {
		t.Fatalf("just before Lyon.: %q", texts)
	}

	m, err := e.client.Beta.Threads.Messages.Get(ctx, th.ID, ids[0])
	if err != nil || m.Content[0].Text.Value != "Lyon." || m.RunID != second.ID || m.Role != "assistant" {
		t.Fatalf("the second run's message by ID: %v %s", apiErr(err), m.RawJSON())
	}
	_, err = e.client.Beta.Threads.Messages.Get(ctx, th.ID, "msg_none")
	wantAPIError(t, err, http.StatusNotFound, "")
}

// TestAThreadsMessagesAre503WhenNeitherTheReadModelNorTheLogAnswers: past the read wait, a thread's messages whose
// log cannot be read (here an event this build cannot decode stands in the thread's history) are a 503 saying the
// read model is behind, not what the standing model holds.
func TestAThreadsMessagesAre503WhenNeitherTheReadModelNorTheLogAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	th := e.thread(t, "What is the capital of France?")
	msgs, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data) != 1 {
		t.Fatalf("the thread's messages: %v %s", apiErr(err), msgs.RawJSON())
	}
	release := e.node.HoldLease(t, "projection.messages_v2")
	defer release()
	e.node.AppendUndecodable(t, "thread", th.ID, "message_created")

	_, err = e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	wantBehind(t, "list", err)
	_, err = e.client.Beta.Threads.Messages.Get(ctx, th.ID, msgs.Data[0].ID)
	wantBehind(t, "get", err)
}
