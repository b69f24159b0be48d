package openaiapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// compactedItems compacts "My name is Ada and my number is 42." into the items /compact answers (that message as
// it was, then the compaction item whose summary the scripted model writes), as input for a create.
func compactedItems(t *testing.T, e *env, summary string) responses.ResponseInputParam {
	t.Helper()
	e.model.Enqueue(llmtest.Text(summary))
	c, err := e.client.Responses.Compact(ctxFor(t), responses.ResponseCompactParams{Model: "gpt-4o-mini",
		Input: compactInput(responses.ResponseInputItemParamOfMessage("My name is Ada and my number is 42.", responses.EasyInputMessageRoleUser))})
	if err != nil || len(c.Output) != 2 || c.Output[1].Type != "compaction" {
		t.Fatalf("compact: %v: %s", apiErr(err), raw(c))
	}
	item := c.Output[1].AsCompaction()
	return responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("My name is Ada and my number is 42.", responses.EasyInputMessageRoleUser),
		compactionParam(item.ID, item.EncryptedContent),
	}
}

// lorem is a user message of about 2*n tokens.
func lorem(label string, n int) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemParamOfMessage(label+": "+strings.Repeat("lorem ipsum ", n), responses.EasyInputMessageRoleUser)
}

// TestResponsesAutoTruncationKeepsTheCompactionSummary: with "truncation": "auto" the summary a compaction item
// stands for is pinned like the instructions: the message it supersedes and the oldest messages after it are
// dropped to fit the model's context window, the summary and the newest stay, in the input and through a
// previous_response_id chain alike. "disabled" sends everything.
func TestResponsesAutoTruncationKeepsTheCompactionSummary(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	const summary = "SUMMARY: the user is Ada; her number is 42."
	input := compactedItems(t, e, summary)
	// gpt-4 takes 8,192 tokens, 4,096 of them left for the answer; ten messages of about a thousand do not fit.
	for i := range 10 {
		input = append(input, lorem(fmt.Sprintf("message %d", i), 500))
	}
	input = append(input, responses.ResponseInputItemParamOfMessage("What is my number?", responses.EasyInputMessageRoleUser))
	e.model.Enqueue(llmtest.Text("42."), llmtest.Text("42, all of it."))
	for _, mode := range []responses.ResponseNewParamsTruncation{responses.ResponseNewParamsTruncationAuto, responses.ResponseNewParamsTruncationDisabled} {
		r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4", Instructions: openai.String("Be brief."),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Truncation: mode})
		if err != nil || r.Status != "completed" {
			t.Fatalf("%s: %v: %s", mode, apiErr(err), raw(r))
		}
	}
	reqs := e.model.Requests()
	auto, all := roles(reqs[len(reqs)-2]), roles(reqs[len(reqs)-1])
	if len(all) != 14 || all[1] != "user:My name is Ada and my number is 42." || !strings.HasSuffix(all[2], summary) {
		t.Fatalf("disabled sent %d messages, want the instructions, the compacted items and all 11 after them: %.60q", len(all), all)
	}
	n := len(auto)
	if n < 4 || n >= 13 || auto[0] != "system:Be brief." ||
		!strings.HasPrefix(auto[1], "user:Summary of the earlier conversation") || !strings.HasSuffix(auto[1], summary) ||
		!strings.HasPrefix(auto[2], fmt.Sprintf("user:message %d:", 10-(n-3))) || auto[n-1] != "user:What is my number?" {
		t.Fatalf("auto sent %d messages: the instructions, the summary, then the newest ones in order were expected: %.60q", n, auto)
	}

	// Chained: the compaction item is in the history a later response reads; truncating it keeps the summary.
	compacted := compactedItems(t, e, summary)
	e.model.Enqueue(llmtest.Text("Noted."))
	first, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: compacted}})
	if err != nil || first.Status != "completed" {
		t.Fatalf("first: %v: %s", apiErr(err), raw(first))
	}
	var more responses.ResponseInputParam
	for i := range 10 {
		more = append(more, lorem(fmt.Sprintf("more %d", i), 500))
	}
	e.model.Enqueue(llmtest.Text("42."))
	chained, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: more}, Truncation: responses.ResponseNewParamsTruncationAuto})
	if err != nil || chained.Status != "completed" {
		t.Fatalf("chained: %v: %s", apiErr(err), raw(chained))
	}
	got := roles(e.model.Requests()[len(e.model.Requests())-1])
	if len(got) < 2 || len(got) >= 10 || !strings.HasSuffix(got[0], summary) || !strings.HasPrefix(got[len(got)-1], "user:more 9:") {
		t.Fatalf("chained auto sent %.60q", got)
	}
}

// TestResponsesAutoTruncationCannotFitTheSummary: when the summary and the newest item alone do not fit the context
// window, "truncation": "auto" fails the response as a request too long for the model fails without truncation
// (invalid_prompt), and the model is not asked without the summary.
func TestResponsesAutoTruncationCannotFitTheSummary(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	// About 1,500 tokens of summary and 3,000 of newest message: each fits gpt-4's 4,096 left of 8,192, not both.
	input := compactedItems(t, e, "SUMMARY: "+strings.Repeat("lorem ipsum ", 750))
	input = append(input, lorem("newest", 1500))

	// Without truncation, the model refuses a request too long for it; the response fails with its code.
	e.model.Enqueue(llmtest.Error(400, "This model's maximum context length is 8192 tokens."))
	disabled, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Truncation: responses.ResponseNewParamsTruncationDisabled})
	if err != nil || disabled.Status != "failed" || disabled.Error.Code != "invalid_prompt" {
		t.Fatalf("disabled: %v: %s", apiErr(err), raw(disabled))
	}

	asked := len(e.model.Requests())
	e.model.Enqueue(llmtest.Text("an answer without the summary"))
	auto, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Truncation: responses.ResponseNewParamsTruncationAuto})
	if err != nil || auto.Status != "failed" || auto.Error.Code != disabled.Error.Code ||
		!strings.Contains(auto.Error.Message, "context window") || len(auto.Output) != 0 {
		t.Fatalf("auto: %v: %s", apiErr(err), raw(auto))
	}
	if n := len(e.model.Requests()); n != asked {
		t.Fatalf("the model was asked %d more times", n-asked)
	}
}

// TestResponsesAutoTruncationLeavesAGuessedWindowToTheModel: for a model whose context window tokens does not know
// (it guesses 128,000), a summary and newest item that overflow the guess are not refused here: the request goes out
// with the summary, and the model, whose window may be larger, says whether it fits.
func TestResponsesAutoTruncationLeavesAGuessedWindowToTheModel(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	// About 75,000 tokens of summary and as many of newest message (a token to a " 7", which keeps the event under
	// the log's size limit): more than the guess of 128,000 together.
	input := compactedItems(t, e, "SUMMARY:"+strings.Repeat(" 7", 75000))
	input = append(input, responses.ResponseInputItemParamOfMessage("newest:"+strings.Repeat(" 7", 75000), responses.EasyInputMessageRoleUser))
	e.model.Enqueue(llmtest.Text("Read it all."))
	r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "house-model-with-a-long-window",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Truncation: responses.ResponseNewParamsTruncationAuto})
	if err != nil || r.Status != "completed" {
		t.Fatalf("%v: %s", apiErr(err), raw(r))
	}
	got := roles(e.model.Requests()[len(e.model.Requests())-1])
	if len(got) < 2 || !strings.HasPrefix(got[len(got)-2], "user:Summary of the earlier conversation") ||
		!strings.HasPrefix(got[len(got)-1], "user:newest:") {
		t.Fatalf("the model was sent %d messages, want the summary and the newest item last: %.60q", len(got), got)
	}
}
