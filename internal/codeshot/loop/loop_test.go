package loop_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/codeshot"
	"github.com/contrailhq/contrail/internal/codeshot/loop"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/offline"
)

func step(kind, name, text string) events.SessionAgentStep {
	return events.SessionAgentStep{Kind: kind, Name: name, Text: text}
}

// numbered gives steps their indexes, as a path records them.
func numbered(steps ...events.SessionAgentStep) []events.SessionAgentStep {
	for i := range steps {
		steps[i].Index = i
	}
	return steps
}

func TestNextFollowsTheTranscript(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []events.SessionAgentStep
		want  loop.Action
	}{
		{"nothing yet: ask the model", nil, loop.Action{Kind: loop.Model, Call: 0}},
		{"a thought: ask again", numbered(step(session.StepThought, "", "Thought: hm")), loop.Action{Kind: loop.Model, Call: 1}},
		{"an ask: call the func", numbered(step(session.StepAskFunc, "genrand", "5, 50")),
			loop.Action{Kind: loop.CallFunc, Name: "genrand", Text: "5, 50", Index: 0}},
		{"its answer: ask the model", numbered(step(session.StepAskFunc, "genrand", "5, 50"), step(session.StepFuncSays, "genrand", "17")),
			loop.Action{Kind: loop.Model, Call: 1}},
		{"ask an agent", numbered(step(session.StepThought, "", "x"), step(session.StepAskAgent, "calc", "2+2")),
			loop.Action{Kind: loop.AskAgent, Name: "calc", Text: "2+2", Index: 1}},
		{"answered: wait", numbered(step(session.StepAnswer, "", "4")), loop.Action{Kind: loop.Wait}},
		{"failed: wait", numbered(step(session.StepFailed, "", "no")), loop.Action{Kind: loop.Wait}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Model calls are counted from the steps the model produced.
			for i := range tc.steps {
				if k := tc.steps[i].Kind; k != session.StepFuncSays && k != session.StepAgentSays {
					tc.steps[i].Call = i
				}
			}
			got := loop.Next("a", tc.steps, 10)
			if got != tc.want {
				t.Fatalf("Next = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestLoopingAgentEndsAtTheCapWithAClearMessage(t *testing.T) {
	var steps []events.SessionAgentStep
	for call := 0; call < 4; call++ {
		steps = append(steps, events.SessionAgentStep{Index: len(steps), Kind: session.StepAskFunc, Name: "spin", Text: "again", Call: call},
			events.SessionAgentStep{Index: len(steps) + 1, Kind: session.StepFuncSays, Name: "spin", Text: "spun"})
	}
	got := loop.Next("spinner", steps, 4)
	if got.Kind != loop.Fail || !strings.Contains(got.Text, "no answer within 4 steps") || !strings.Contains(got.Text, "Func[spin] says: spun") {
		t.Fatalf("Next = %+v", got)
	}
}

func TestStepsReadTheModelsTurn(t *testing.T) {
	for _, tc := range []struct {
		name, output string
		want         []string
	}{
		{"a thought then an ask ends the turn", "Thought: I need the quote.\nAsk Func[quote]: GOOG\nFunc[quote] says: $1 (made up)",
			[]string{"thought:Thought: I need the quote.", "ask_func:quote:GOOG"}},
		{"an answer runs on over free lines", "A: It is 84.\nThat is twelve sevens.\nQ: next?",
			[]string{"answer:It is 84.\nThat is twelve sevens."}},
		{"a line the model must not write ends what is read", "Agent[calc] says: 84\nA: 84",
			[]string{"failed:agent a: the model gave no usable line (it wrote \"Agent[calc] says: 84 / A: 84\")"}},
		{"nothing at all is a failure", "  \n", []string{"failed:agent a: the model gave no usable line (it wrote \"\")"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range loop.Steps("a", tc.output, 3) {
				g := s.Kind + ":"
				if s.Name != "" {
					g += s.Name + ":"
				}
				got = append(got, g+s.Text)
				if s.Kind != session.StepFailed && s.Call != 3 {
					t.Errorf("step %+v is not of call 3", s)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("steps %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRequestCarriesTheTranscriptSoFar(t *testing.T) {
	spec := loop.Spec{Handle: "genrand", BasePrompt: genrand.BasePrompt, Examples: codeshot.Split(genrand.FewShots), Model: "gpt-4o"}
	req := loop.Request(spec, "Generate a random number\nbetween 5 and 50", []string{"Q: hi\nA: hello"},
		numbered(step(session.StepAskFunc, "genrand", "5, 50"), step(session.StepFuncSays, "genrand", "17\n")))
	last := req.Messages[len(req.Messages)-1].Content
	if !strings.HasSuffix(last, "Q: hi\nA: hello\n\nQ: Generate a random number between 5 and 50\nAsk Func[genrand]: 5, 50\nFunc[genrand] says: 17") {
		t.Fatalf("the prompt ends with:\n%s", last[max(0, len(last)-300):])
	}
	if req.Model != "gpt-4o" || *req.Temperature != 0 || req.MaxTokens != loop.DefaultMaxTokens || len(req.Stop) == 0 {
		t.Fatalf("request settings %+v", req)
	}
}

// The offline model follows the few-shots: with the transcript the loop builds, it asks genrand for the query's
// bounds, then answers with the func's real result.
func TestOfflineGenrandThroughTheStepMachine(t *testing.T) {
	model := offline.New(embedding.NewLocal(embedding.DefaultLocalDim))
	spec := loop.Spec{Handle: "genrand", BasePrompt: genrand.BasePrompt, Examples: codeshot.Split(genrand.FewShots)}
	query := "Generate a random number between 5 and 50"
	var steps []events.SessionAgentStep
	var streamed strings.Builder
	for i := 0; i < 5; i++ {
		act := loop.Next("genrand", steps, 10)
		switch act.Kind {
		case loop.Model:
			resp, err := model.Complete(context.Background(), loop.Request(spec, query, nil, steps),
				loop.AnswerStreamer(func(d string) { streamed.WriteString(d) }))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range loop.Steps("genrand", resp.Text, act.Call) {
				s.Index = len(steps)
				steps = append(steps, s)
			}
		case loop.CallFunc:
			if act.Name != "genrand" || act.Text != "5, 50" {
				t.Fatalf("func call %+v, want genrand(5, 50)", act)
			}
			steps = append(steps, events.SessionAgentStep{Index: len(steps), Kind: session.StepFuncSays, Name: act.Name, Text: "23"})
		case loop.Wait:
			last := steps[len(steps)-1]
			if last.Kind != session.StepAnswer || last.Text != "The random number is 23." || streamed.String() != last.Text {
				t.Fatalf("answer %+v, streamed %q", last, streamed.String())
			}
			return
		default:
			t.Fatalf("action %+v after %+v", act, steps)
		}
	}
	t.Fatalf("no answer after 5 actions: %+v", steps)
}

func TestOfflineStockQuoteAsksTheQuoteFunc(t *testing.T) {
	fewShots, err := os.ReadFile(filepath.Join("..", "testdata", "stockquote.txt"))
	if err != nil {
		t.Fatal(err)
	}
	model := offline.New(embedding.NewLocal(embedding.DefaultLocalDim))
	spec := loop.Spec{Handle: "stockquote", BasePrompt: "I am an agent that answers questions about stock prices.",
		Examples: codeshot.Split(string(fewShots))}
	resp, err := model.Complete(context.Background(), loop.Request(spec, "What is the stock price for GOOG?", nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := loop.Steps("stockquote", resp.Text, 0)
	if line := session.StepLine(steps[0]); line != "Ask Func[quote]: GOOG" {
		t.Fatalf("first step %q, want %q", line, "Ask Func[quote]: GOOG")
	}
}

func TestAnswerStreamerPassesOnlyTheAnswer(t *testing.T) {
	var out strings.Builder
	f := loop.AnswerStreamer(func(d string) { out.WriteString(d) })
	for _, c := range []string{"Thought: calc", " can.\nA: It", " is 84.\nThat", " is twelve sevens."} {
		f(llm.Delta{Text: c})
	}
	if out.String() != "It is 84.\nThat is twelve sevens." {
		t.Fatalf("streamed %q", out.String())
	}
}
