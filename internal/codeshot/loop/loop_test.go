package loop_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/codeshot"
	"github.com/contrailhq/contrail/internal/codeshot/loop"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/llm/openai"
)

// journal keeps steps in memory, keeping the first step recorded at an index as the contract says.
type journal struct {
	mu    sync.Mutex
	steps []loop.Step
}

func (j *journal) Record(_ context.Context, s loop.Step) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if s.Index < len(j.steps) {
		return nil
	}
	j.steps = append(j.steps, s)
	return nil
}

// httpFuncs calls a real agent's funcs over HTTP, as the platform does, counting the calls that reached it.
type httpFuncs struct {
	client *agentproto.Client
	url    string
	keys   []string
}

func (f *httpFuncs) Call(ctx context.Context, fn, args, key string) (string, error) {
	f.keys = append(f.keys, key)
	m, err := f.client.CallFunc(agentproto.WithIdempotencyKey(ctx, key), f.url, fn, agentproto.Message{Text: args}, agentproto.Claims{})
	return m.Text, err
}

func offlineModel() llm.Provider { return offline.New(embedding.NewLocal(embedding.DefaultLocalDim)) }

// countingGenrand serves the real genrand agent and counts the func's runs.
func countingGenrand(t *testing.T) (*httptest.Server, *atomic.Int32, *[]string) {
	t.Helper()
	a := genrand.Agent(genrand.WithSeed(7, 9))
	var runs atomic.Int32
	var inputs []string
	var mu sync.Mutex
	inner := a.Funcs["genrand"]
	a.Funcs["genrand"] = func(ctx context.Context, c agentkit.Call) (agentproto.Message, error) {
		runs.Add(1)
		mu.Lock()
		inputs = append(inputs, c.Message.Text)
		mu.Unlock()
		return inner(ctx, c)
	}
	srv, err := agentkit.New(a)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts, &runs, &inputs
}

func genrandSpec() loop.Spec {
	return loop.Spec{Handle: "genrand", BasePrompt: genrand.BasePrompt, Examples: codeshot.Split(genrand.FewShots)}
}

func TestOfflineGenrandCallsTheFuncWithTheQuerysBoundsAndAnswersWithItsResult(t *testing.T) {
	t.Parallel()
	ts, runs, inputs := countingGenrand(t)
	funcs := &httpFuncs{client: agentproto.NewClient(), url: ts.URL}
	r := &loop.Runner{Model: offlineModel(), Funcs: funcs}
	var streamed strings.Builder
	j := &journal{}
	answer, steps, err := r.Run(context.Background(), genrandSpec(), loop.Query{
		Text: "Generate a random number between 5 and 50", Key: "q1", Stream: func(d string) { streamed.WriteString(d) },
	}, j)
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || (*inputs)[0] != "5, 50" {
		t.Fatalf("genrand ran %d times with %v, want once with \"5, 50\"", runs.Load(), *inputs)
	}
	if len(steps) != 3 || steps[0].Kind != loop.KindAskFunc || steps[1].Kind != loop.KindFuncSays || steps[2].Kind != loop.KindAnswer {
		t.Fatalf("steps = %+v", steps)
	}
	n := steps[1].Text
	if answer != "The random number is "+n+"." {
		t.Fatalf("answer %q does not carry the func's result %s", answer, n)
	}
	if streamed.String() != answer {
		t.Fatalf("streamed %q, answered %q", streamed.String(), answer)
	}
	if len(j.steps) != 3 || funcs.keys[0] != "q1/0" {
		t.Fatalf("journal %+v, keys %v", j.steps, funcs.keys)
	}
}

func TestOfflineStockQuoteAsksTheQuoteFunc(t *testing.T) {
	t.Parallel()
	fewShots, err := os.ReadFile(filepath.Join("..", "testdata", "stockquote.txt"))
	if err != nil {
		t.Fatal(err)
	}
	quotes := &recordingFuncs{answer: "$105.22"}
	r := &loop.Runner{Model: offlineModel(), Funcs: quotes}
	answer, steps, err := r.Run(context.Background(), loop.Spec{Handle: "stockquote",
		BasePrompt: "I am an agent that answers questions about stock prices.", Examples: codeshot.Split(string(fewShots))},
		loop.Query{Text: "What is the stock price for GOOG?", Key: "q"}, &journal{})
	if err != nil {
		t.Fatal(err)
	}
	if steps[0].Line() != "Ask Func[quote]: GOOG" {
		t.Fatalf("first step %q, want %q", steps[0].Line(), "Ask Func[quote]: GOOG")
	}
	if !strings.Contains(answer, "GOOG") || !strings.Contains(answer, "$105.22") {
		t.Fatalf("answer %q", answer)
	}
}

type recordingFuncs struct {
	answer string
	err    error
	calls  []string
}

func (f *recordingFuncs) Call(_ context.Context, fn, args, key string) (string, error) {
	f.calls = append(f.calls, fn+"("+args+")#"+key)
	return f.answer, f.err
}

func TestResumeAfterACrashRedoesNothingRecorded(t *testing.T) {
	t.Parallel()
	ts, runs, _ := countingGenrand(t)
	funcs := &httpFuncs{client: agentproto.NewClient(), url: ts.URL}
	model := llmtest.NewServer(t)
	provider, err := openai.New(model.URL, "k", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	model.Enqueue(llmtest.Text("Ask Func[genrand]: 5, 50"))
	r := &loop.Runner{Model: provider, Funcs: funcs}
	spec := genrandSpec()
	spec.Model = "gpt-4o"

	// First attempt: the process dies right after the func answered (the journal has the call, not the result),
	// which a failing journal stands in for.
	j := &journal{}
	failing := journalFunc(func(ctx context.Context, s loop.Step) error {
		if s.Kind == loop.KindFuncSays {
			return errors.New("node died")
		}
		return j.Record(ctx, s)
	})
	if _, _, err := r.Run(context.Background(), spec, loop.Query{Text: "Generate a random number between 5 and 50", Key: "q9"}, failing); err == nil {
		t.Fatal("the first attempt should have failed with the journal")
	}
	if runs.Load() != 1 || len(j.steps) != 1 {
		t.Fatalf("after the crash: %d runs, journal %+v", runs.Load(), j.steps)
	}
	// Second attempt resumes from the journal: the model is not asked for the Ask line again, the func is called
	// again with the same key (the agent answers from memory), and the model writes the answer.
	model.Enqueue(llmtest.Text("A: Your number is ready."))
	answer, steps, err := r.Run(context.Background(), spec, loop.Query{Text: "Generate a random number between 5 and 50", Key: "q9", Done: j.steps}, j)
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 {
		t.Fatalf("genrand ran %d times: the resumed call was not deduplicated", runs.Load())
	}
	if funcs.keys[0] != funcs.keys[1] {
		t.Fatalf("the repeated call used key %q, the first %q", funcs.keys[1], funcs.keys[0])
	}
	if len(model.Requests()) != 2 || answer != "Your number is ready." || len(steps) != 3 {
		t.Fatalf("model asked %d times, answer %q, steps %+v", len(model.Requests()), answer, steps)
	}
	last := model.Requests()[1].LastMessage().Content
	if !regexp.MustCompile(`Q: Generate a random number between 5 and 50\nAsk Func\[genrand\]: 5, 50\nFunc\[genrand\] says: \d+$`).MatchString(last) {
		t.Fatalf("the resumed prompt ends with:\n%s", last[max(0, len(last)-200):])
	}
}

type journalFunc func(context.Context, loop.Step) error

func (f journalFunc) Record(ctx context.Context, s loop.Step) error { return f(ctx, s) }

func TestLoopingAgentEndsAtTheCapWithAClearMessage(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	model.HandleFunc(func(llmtest.Request) llmtest.Reply { return llmtest.Text("Ask Func[spin]: again") })
	provider, _ := openai.New(model.URL, "k", nil, nil)
	funcs := &recordingFuncs{answer: "spun"}
	r := &loop.Runner{Model: provider, Funcs: funcs, MaxCalls: 4}
	_, steps, err := r.Run(context.Background(), loop.Spec{Handle: "spinner", Model: "gpt-4o"}, loop.Query{Text: "spin", Key: "q"}, &journal{})
	var failed *loop.FailedError
	if !errors.As(err, &failed) || !strings.Contains(failed.Text, "no answer within 4 steps") {
		t.Fatalf("err = %v", err)
	}
	if len(funcs.calls) != 4 || len(model.Requests()) != 4 || steps[len(steps)-1].Kind != loop.KindFailed {
		t.Fatalf("%d func calls, %d model calls, last step %+v", len(funcs.calls), len(model.Requests()), steps[len(steps)-1])
	}
}

func TestFuncFailureEndsTheQueryWithTheReason(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	model.Enqueue(llmtest.Text("Thought: I need the quote.\nAsk Func[quote]: GOOG\nFunc[quote] says: $1 (made up)"))
	provider, _ := openai.New(model.URL, "k", nil, nil)
	funcs := &recordingFuncs{err: errors.New("agent stockquote has no func quote")}
	r := &loop.Runner{Model: provider, Funcs: funcs}
	_, steps, err := r.Run(context.Background(), loop.Spec{Handle: "stockquote", Model: "gpt-4o"}, loop.Query{Text: "GOOG?", Key: "q"}, &journal{})
	if !errors.Is(err, loop.ErrFailed) || !strings.Contains(err.Error(), "func quote failed: agent stockquote has no func quote") {
		t.Fatalf("err = %v", err)
	}
	// The thought and the ask were recorded; the made-up reply line was not.
	if len(steps) != 3 || steps[0].Kind != loop.KindThought || steps[1].Kind != loop.KindAskFunc || steps[2].Kind != loop.KindFailed {
		t.Fatalf("steps = %+v", steps)
	}
}

func TestAskAgentDelegatesAndMultiLineAnswersStream(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	model.Enqueue(llmtest.Text("Thought: the calc agent can do this.\nAsk Agent[calc]: 12 * 7"),
		llmtest.Text("A: It is 84.\nThat is twelve sevens.").WithChunks("A: It", " is 84.\nThat", " is twelve sevens."))
	provider, _ := openai.New(model.URL, "k", nil, nil)
	asked := &recordingAgents{answer: "84"}
	var streamed strings.Builder
	r := &loop.Runner{Model: provider, Agents: asked}
	answer, steps, err := r.Run(context.Background(), loop.Spec{Handle: "fixie", Model: "gpt-4o"}, loop.Query{Text: "what is 12 times 7?", Key: "q",
		Stream: func(d string) { streamed.WriteString(d) }}, &journal{})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked.calls) != 1 || asked.calls[0] != "calc:12 * 7" {
		t.Fatalf("asked %v", asked.calls)
	}
	if answer != "It is 84.\nThat is twelve sevens." || streamed.String() != answer {
		t.Fatalf("answer %q, streamed %q", answer, streamed.String())
	}
	if steps[2].Line() != "Agent[calc] says: 84" {
		t.Fatalf("steps %+v", steps)
	}
}

type recordingAgents struct {
	answer string
	calls  []string
}

func (a *recordingAgents) Ask(_ context.Context, handle, query string) (string, error) {
	a.calls = append(a.calls, handle+":"+query)
	return a.answer, nil
}
