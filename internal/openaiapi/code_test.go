package openaiapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/sandbox"
)

// codeCall is a scripted model's code_interpreter call.
func codeCall(id, code string) llmtest.Reply {
	args, _ := jsonMarshal(map[string]string{"code": code})
	return llmtest.ToolCalls(llm.ToolCall{ID: id, Name: "code_interpreter", Arguments: args})
}

// TestCodeInterpreterRun: a run whose model calls code_interpreter twice on the assistant's CSV: the first call
// sums a column, the second uses the first's variables (one warm sandbox per thread) to draw a chart and write a
// CSV. The steps show the code and its logs and image, the chart and the CSV are files, and the answer shows the
// chart after its text.
func TestCodeInterpreterRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	csv := e.upload(t, "sales.csv", []byte("region,amount\nnorth,10\nsouth,20\neast,30\n"))
	a, err := e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfCodeInterpreter: &openai.CodeInterpreterToolParam{}}},
		ToolResources: openai.BetaAssistantNewParamsToolResources{CodeInterpreter: openai.BetaAssistantNewParamsToolResourcesCodeInterpreter{
			FileIDs: []string{csv}}}})
	if err != nil {
		if ae := apiErr(err); strings.Contains(ae.Error(), "cannot run on this server") && !canSandbox() {
			t.Skipf("no sandbox on this machine (`make deps` installs bubblewrap): %v", ae)
		}
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	e.model.Enqueue(
		codeCall("call_sum", "import pandas as pd\ndf = pd.read_csv('/mnt/data/sales.csv')\nprint(df['amount'].sum())"),
		codeCall("call_chart", "import matplotlib.pyplot as plt\nprint(len(df))\ndf.plot.bar(x='region', y='amount')\n"+
			"plt.savefig('/mnt/data/chart.png')\ndf.to_csv('/mnt/data/summary.csv', index=False)"),
		llmtest.Text("Sales total 60; the chart is below. [Summary](sandbox:/mnt/data/summary.csv)"),
	)
	th := e.thread(t, "What are the total sales? Draw them by region.")
	run := e.completeRun(t, th.ID, a.ID)
	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("the model was asked %d times, want 3", len(reqs))
	}
	if out := reqs[1].LastMessage(); out.ToolCallID != "call_sum" || strings.TrimSpace(out.Content) != "60" {
		t.Fatalf("the sum's output as the model read it: %+v", out)
	}
	out := reqs[2].LastMessage().Content
	if !strings.HasPrefix(out, "3\n") || !strings.Contains(out, "1 image(s) written") || !strings.Contains(out, "[file written: /mnt/data/summary.csv (saved as file-") {
		t.Fatalf("the chart's output as the model read it: %q", out)
	}

	steps, err := e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{Order: openai.BetaThreadRunStepListParamsOrderAsc})
	if err != nil || len(steps.Data) != 3 {
		t.Fatalf("steps: %v %s", apiErr(err), steps.RawJSON())
	}
	sum := steps.Data[0].StepDetails.ToolCalls
	if len(sum) != 1 || sum[0].Type != "code_interpreter" || !strings.Contains(sum[0].CodeInterpreter.Input, "read_csv") ||
		len(sum[0].CodeInterpreter.Outputs) != 1 || sum[0].CodeInterpreter.Outputs[0].Type != "logs" || strings.TrimSpace(sum[0].CodeInterpreter.Outputs[0].Logs) != "60" {
		t.Fatalf("the sum's step: %s", steps.Data[0].RawJSON())
	}
	var image string
	for _, o := range steps.Data[1].StepDetails.ToolCalls[0].CodeInterpreter.Outputs {
		if o.Type == "image" {
			image = o.Image.FileID
		}
	}
	if image == "" {
		t.Fatalf("the chart's step has no image: %s", steps.Data[1].RawJSON())
	}
	resp, err := e.client.Files.Content(ctx, image)
	if err != nil {
		t.Fatalf("the chart's bytes: %v", apiErr(err))
	}
	png, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("the chart is not a PNG: %q", png[:min(16, len(png))])
	}
	f, err := e.client.Files.Get(ctx, image)
	if err != nil || f.Purpose != "assistants_output" || f.Filename != "chart.png" {
		t.Fatalf("the chart's file: %v %s", apiErr(err), f.RawJSON())
	}
	list, err := e.client.Files.List(ctx, openai.FileListParams{Purpose: openai.String("assistants_output")})
	if err != nil || len(list.Data) != 2 {
		t.Fatalf("output files: %v %s", apiErr(err), list.RawJSON())
	}

	msgs, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil {
		t.Fatalf("messages: %v", apiErr(err))
	}
	answer := msgs.Data[0]
	if len(answer.Content) != 2 || !strings.HasPrefix(answer.Content[0].Text.Value, "Sales total 60; the chart is below.") ||
		answer.Content[1].Type != "image_file" || answer.Content[1].ImageFile.FileID != image {
		t.Fatalf("the answer: %s", answer.RawJSON())
	}
	var summary string
	for _, f := range list.Data {
		if f.Filename == "summary.csv" {
			summary = f.ID
		}
	}
	anns := answer.Content[0].Text.Annotations
	if len(anns) != 1 || anns[0].Type != "file_path" || anns[0].FilePath.FileID != summary || anns[0].Text != "sandbox:/mnt/data/summary.csv" ||
		string([]rune(answer.Content[0].Text.Value)[anns[0].StartIndex:anns[0].EndIndex]) != anns[0].Text {
		t.Fatalf("the link to the CSV: %s", answer.RawJSON())
	}
}

// TestCodeInterpreterErrorsReachTheModel: code that raises gives the model the traceback, and the run goes on.
func TestCodeInterpreterErrorsReachTheModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.codeAssistant(t, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfCodeInterpreter: &openai.CodeInterpreterToolParam{}}}})
	e.model.Enqueue(codeCall("call_div", "print(1/0)"), llmtest.Text("Dividing by zero is not defined."))
	th := e.thread(t, "What is 1/0?")
	e.completeRun(t, th.ID, a.ID)
	if out := e.model.Requests()[1].LastMessage().Content; !strings.Contains(out, "ZeroDivisionError") {
		t.Fatalf("the model was told %q", out)
	}
}

func jsonMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// codeAssistant creates an assistant with code_interpreter, skipping the test only where no sandbox can be made.
func (e *env) codeAssistant(t *testing.T, params openai.BetaAssistantNewParams) *openai.Assistant {
	t.Helper()
	a, err := e.client.Beta.Assistants.New(ctxFor(t), params)
	if err != nil {
		if !canSandbox() {
			t.Skipf("no sandbox on this machine: %v", apiErr(err))
		}
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	return a
}

// canSandbox reports whether this machine can make a sandbox at all (the kernel allows it); where it can, `make
// deps` has installed what it needs, and a node that refuses code_interpreter is a failure.
func canSandbox() bool {
	_, err := sandbox.New(context.Background(), sandbox.Config{})
	return !errors.Is(err, sandbox.ErrUnsupported)
}

// TestAttachmentsFeedTheTools: files attached to a message reach the tools without any tool_resources: the PDF
// for file_search (kept in the thread's own vector store, processed before the search), the CSV for
// code_interpreter (in /mnt/data).
func TestAttachmentsFeedTheTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	pdf := e.upload(t, "manual.pdf", manual())
	csv := e.upload(t, "sales.csv", []byte("region,amount\nnorth,10\nsouth,20\neast,30\n"))
	a := e.codeAssistant(t, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfFileSearch: &openai.FileSearchToolParam{}}, {OfCodeInterpreter: &openai.CodeInterpreterToolParam{}}}})
	th, err := e.client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{Messages: []openai.BetaThreadNewParamsMessage{{
		Role: "user", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("How often do I descale, and how many sales rows are there?")},
		Attachments: []openai.BetaThreadNewParamsMessageAttachment{
			{FileID: openai.String(pdf), Tools: []openai.BetaThreadNewParamsMessageAttachmentToolUnion{{OfFileSearch: &openai.BetaThreadNewParamsMessageAttachmentToolFileSearch{}}}},
			{FileID: openai.String(csv), Tools: []openai.BetaThreadNewParamsMessageAttachmentToolUnion{{OfCodeInterpreter: &openai.CodeInterpreterToolParam{}}}},
		}}}})
	if err != nil {
		t.Fatalf("create thread: %v", apiErr(err))
	}
	e.model.Enqueue(
		llmtest.ToolCalls(llm.ToolCall{ID: "call_fs", Name: "file_search", Arguments: `{"queries":["descaling the boiler"]}`}),
		codeCall("call_rows", "import pandas as pd\nprint(len(pd.read_csv('/mnt/data/sales.csv')))"),
		llmtest.Text("Every three months【0:0†manual.pdf】; there are 3 rows."),
	)
	e.completeRun(t, th.ID, a.ID)
	reqs := e.model.Requests()
	if out := reqs[1].LastMessage().Content; !strings.Contains(out, "descaling solution") {
		t.Fatalf("the search of the attached PDF gave %q", out)
	}
	if out := reqs[2].LastMessage().Content; strings.TrimSpace(out) != "3" {
		t.Fatalf("the code on the attached CSV gave %q", out)
	}
	msgs, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data[0].Content[0].Text.Annotations) != 1 || msgs.Data[0].Content[0].Text.Annotations[0].FileCitation.FileID != pdf {
		t.Fatalf("the answer's citation: %v %s", apiErr(err), msgs.Data[0].RawJSON())
	}
	if len(msgs.Data[1].Attachments) != 2 || msgs.Data[1].Attachments[0].FileID != pdf {
		t.Fatalf("the user's message shows its attachments: %s", msgs.Data[1].RawJSON())
	}
	stores, err := e.client.VectorStores.List(ctx, openai.VectorStoreListParams{})
	if err != nil || len(stores.Data) != 1 || stores.Data[0].FileCounts.Completed != 1 || stores.Data[0].ExpiresAfter.Days != 7 {
		t.Fatalf("the thread's store: %v %s", apiErr(err), stores.RawJSON())
	}
}

// TestCodeOverTheTimeLimit: code that never ends is stopped at the node's code timeout, the model is told so, the
// next call gets a fresh sandbox, and the run completes.
func TestCodeOverTheTimeLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.CodeTimeout = 2 * time.Second }))
	a := e.codeAssistant(t, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfCodeInterpreter: &openai.CodeInterpreterToolParam{}}}})
	e.model.Enqueue(codeCall("call_loop", "x = 1\nwhile True:\n    x += 1"), codeCall("call_after", "print('after')"),
		llmtest.Text("That loop never ends."))
	th := e.thread(t, "Run this forever.")
	e.completeRun(t, th.ID, a.ID)
	reqs := e.model.Requests()
	if out := reqs[1].LastMessage().Content; !strings.Contains(out, "time limit") {
		t.Fatalf("the model was told %q about the endless loop", out)
	}
	if out := reqs[2].LastMessage().Content; !strings.Contains(out, "after") || !strings.Contains(out, "[sandbox:") {
		t.Fatalf("the call after the timeout gave %q", out)
	}
}
