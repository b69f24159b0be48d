package openaiapi_test

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

var searchMarker = regexp.MustCompile(`【[^】]*】`)

// TestResponsesFileSearchWithCitations: a response whose model calls file_search gets the results, and its answer
// cites them as the Responses API does: the marker the model copied is taken out of the text (streamed live, in
// pieces that split it, and replayed alike), and a file_citation annotation has the file and the place it was.
func TestResponsesFileSearchWithCitations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	pdf, store := e.manualStore(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		last := req.LastMessage()
		if last.Role == llm.RoleTool {
			// The answer is streamed four characters at a time, so that pieces split the marker.
			text := []rune("Descale it every three months" + searchMarker.FindString(last.Content) + ".")
			var pieces []string
			for i := 0; i < len(text); i += 4 {
				pieces = append(pieces, string(text[i:min(i+4, len(text))]))
			}
			return llmtest.Text(string(text)).WithChunks(pieces...)
		}
		return llmtest.ToolCalls(llm.ToolCall{ID: "call_fs", Name: "file_search", Arguments: `{"queries":["how to descale the boiler"]}`})
	})
	tool := responses.ToolParamOfFileSearch([]string{store.ID})
	tool.OfFileSearch.MaxNumResults = openai.Int(2)
	const answer = "Descale it every three months."
	deltas := func(stream *ssestream.Stream[responses.ResponseStreamEventUnion]) (text string, r responses.Response) {
		t.Helper()
		for stream.Next() {
			switch ev := stream.Current(); ev.Type {
			case "response.output_text.delta":
				text += ev.Delta
			case "response.completed":
				r = ev.Response
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream: %v", apiErr(err))
		}
		return text, r
	}
	streamed, r := deltas(e.client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("How do I descale?"),
		Tools: []responses.ToolUnionParam{tool}, Include: []responses.ResponseIncludable{"file_search_call.results"}}))
	if len(r.Output) != 2 || r.Output[0].Type != "file_search_call" || r.Output[1].Type != "message" {
		t.Fatalf("output: %s", r.RawJSON())
	}
	if streamed != answer || r.OutputText() != answer {
		t.Fatalf("the answer streamed as %q and reads %q, want %q: the marker taken out", streamed, r.OutputText(), answer)
	}
	if replayed, _ := deltas(e.client.Responses.GetStreaming(ctx, r.ID, responses.ResponseGetParams{})); replayed != answer {
		t.Fatalf("the replay streams %q, want %q", replayed, answer)
	}
	fs := r.Output[0]
	if len(fs.Queries) != 1 || len(fs.Results) == 0 || len(fs.Results) > 2 || fs.Results[0].FileID != pdf ||
		!strings.Contains(fs.Results[0].Text, "descaling") {
		t.Fatalf("file_search_call: %s", fs.RawJSON())
	}
	ann := r.Output[1].Content[0].Annotations
	if len(ann) != 1 || ann[0].Type != "file_citation" || ann[0].FileID != pdf || ann[0].Filename != "manual.pdf" ||
		ann[0].Index != int64(len("Descale it every three months")) {
		t.Fatalf("annotations: %s", r.Output[1].RawJSON())
	}
	// A response made with include shows the results when it is read again too.
	got, err := e.client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
	if err != nil || len(got.Output[0].Results) == 0 {
		t.Fatalf("get: %v: %s", apiErr(err), raw(got))
	}

	// Another account cannot search the store.
	_, otherKey := e.node.NewAccount(t, "other")
	other := sdk(e.node, otherKey)
	_, err = other.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("x"),
		Tools: []responses.ToolUnionParam{responses.ToolParamOfFileSearch([]string{store.ID})}})
	wantAPIError(t, err, 404, "tools[0].vector_store_ids[0]")
}

func TestResponsesCodeInterpreterInAContainer(t *testing.T) {
	t.Parallel()
	if !canSandbox() {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	e := newEnv(t)
	ctx := ctxFor(t)
	csv := e.upload(t, "sales.csv", []byte("region,amount\nnorth,10\nsouth,20\neast,30\n"))
	e.model.Enqueue(
		codeCall("call_sum", "import csv\nrows = list(csv.DictReader(open('/mnt/data/sales.csv')))\nprint(sum(int(r['amount']) for r in rows))\n"+
			"open('/mnt/data/total.txt', 'w').write('60')"),
		llmtest.Text("The total is 60."),
	)
	tool := responses.ToolUnionParam{OfCodeInterpreter: &responses.ToolCodeInterpreterParam{
		Container: responses.ToolCodeInterpreterContainerUnionParam{OfCodeInterpreterToolAuto: &responses.ToolCodeInterpreterContainerCodeInterpreterContainerAutoParam{
			FileIDs: []string{csv}}}}}
	r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("Total sales?"),
		Tools: []responses.ToolUnionParam{tool}, Include: []responses.ResponseIncludable{"code_interpreter_call.outputs"}})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if len(r.Output) != 2 || r.Output[0].Type != "code_interpreter_call" || r.OutputText() != "The total is 60." {
		t.Fatalf("output: %s", r.RawJSON())
	}
	ci := r.Output[0]
	if !strings.HasPrefix(ci.ContainerID, "cntr_") || len(ci.Outputs) == 0 || strings.TrimSpace(ci.Outputs[0].Logs) != "60" {
		t.Fatalf("code_interpreter_call: %s", ci.RawJSON())
	}
	if out := e.model.Requests()[1].LastMessage(); out.ToolCallID != "call_sum" || strings.TrimSpace(out.Content) != "60" {
		t.Fatalf("the model read %+v", out)
	}
	files, err := e.client.Containers.Files.List(ctx, ci.ContainerID, openai.ContainerFileListParams{})
	if err != nil || len(files.Data) != 2 || files.Data[0].Source != "assistant" || files.Data[1].Source != "user" {
		t.Fatalf("container files: %v: %s", apiErr(err), raw(files))
	}
	content, err := e.client.Containers.Files.Content.Get(ctx, ci.ContainerID, files.Data[0].ID)
	if err != nil {
		t.Fatalf("content: %v", apiErr(err))
	}
	body, _ := io.ReadAll(content.Body)
	content.Body.Close()
	if string(body) != "60" {
		t.Fatalf("total.txt holds %q", body)
	}

	// A container made by hand, then used by its ID; another account reaches neither.
	c, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "mine", FileIDs: []string{csv}})
	if err != nil || !strings.HasPrefix(c.ID, "cntr_") {
		t.Fatalf("create container: %v: %s", apiErr(err), raw(c))
	}
	list, err := e.client.Containers.List(ctx, openai.ContainerListParams{})
	if err != nil || len(list.Data) != 2 {
		t.Fatalf("list containers: %v: %s", apiErr(err), raw(list))
	}
	_, otherKey := e.node.NewAccount(t, "other")
	other := sdk(e.node, otherKey)
	_, err = other.Containers.Get(ctx, c.ID)
	wantAPIError(t, err, 404, "")
	_, err = other.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("x"),
		Tools: []responses.ToolUnionParam{{OfCodeInterpreter: &responses.ToolCodeInterpreterParam{
			Container: responses.ToolCodeInterpreterContainerUnionParam{OfString: openai.String(c.ID)}}}}})
	wantAPIError(t, err, 404, "tools[0].container")
	_, err = other.Containers.New(ctx, openai.ContainerNewParams{Name: "steal", FileIDs: []string{csv}})
	wantAPIError(t, err, 404, "file_ids[0]")
	if err := e.client.Containers.Delete(ctx, c.ID); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	_, err = e.client.Containers.Get(ctx, c.ID)
	wantAPIError(t, err, 404, "")
}

// TestResponsesOfflineFileSearchQuotesOrSaysNothing: with the offline model, a response with file_search does as a
// run does (the same answer, handlers/turn): it searches for the question, then quotes the best passage with its
// citation, or says that nothing in the files matches; it never writes an answer of its own.
func TestResponsesOfflineFileSearchQuotesOrSaysNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	pdf, store := e.manualStore(t)
	ask := func(question string) *responses.Response {
		r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "offline", Input: textInput(question),
			Tools: []responses.ToolUnionParam{responses.ToolParamOfFileSearch([]string{store.ID})}})
		if err != nil {
			t.Fatalf("create: %v", apiErr(err))
		}
		if r.Status != "completed" || len(r.Output) != 2 || r.Output[0].Type != "file_search_call" || r.Output[1].Type != "message" {
			t.Fatalf("output: %s", r.RawJSON())
		}
		return r
	}
	r := ask("How do I get limescale out of the boiler?")
	if q := r.Output[0].Queries; len(q) != 1 || q[0] != "How do I get limescale out of the boiler?" {
		t.Fatalf("queries: %s", r.Output[0].RawJSON())
	}
	text := r.Output[1].Content[0]
	if !strings.Contains(text.Text, "Every three months run the descaling solution") || len(text.Annotations) != 1 ||
		text.Annotations[0].FileID != pdf || text.Annotations[0].Filename != "manual.pdf" {
		t.Fatalf("the offline answer: %s", r.Output[1].RawJSON())
	}
	r = ask("What is the capital of Mongolia?")
	if text := r.Output[1].Content[0]; !strings.Contains(text.Text, "found nothing that matches") || len(text.Annotations) != 0 {
		t.Fatalf("an answer the files do not hold: %s", r.Output[1].RawJSON())
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Fatalf("the scripted model was asked %d times; the offline model answers here", n)
	}
}

// manualStore uploads the boiler manual and returns it and a vector store holding it, processed.
func (e *env) manualStore(t *testing.T) (string, openai.VectorStore) {
	t.Helper()
	ctx := ctxFor(t)
	pdf := e.upload(t, "manual.pdf", manual())
	store, err := e.client.VectorStores.New(ctx, openai.VectorStoreNewParams{FileIDs: []string{pdf}})
	if err != nil {
		t.Fatalf("create store: %v", apiErr(err))
	}
	if f, err := e.client.VectorStores.Files.PollStatus(ctx, store.ID, pdf, 20); err != nil || f.Status != "completed" {
		t.Fatalf("process the PDF: %v", apiErr(err))
	}
	return pdf, *store
}
