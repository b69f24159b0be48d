package offline_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/cmd/agents/samples/calc"
	"github.com/contrailhq/contrail/cmd/agents/samples/chart"
	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/codeshot"
	"github.com/contrailhq/contrail/internal/codeshot/loop"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
	"github.com/contrailhq/contrail/internal/llm/offline"
)

// weatherFewShots are a weather agent's, as a user would write them.
const weatherFewShots = `Q: What's the weather in Denver?
Ask Func[weather]: Denver
Func[weather] says: Sunny, 25 degrees
A: It is sunny in Denver, 25 degrees.

Q: Will it rain in Denver tomorrow?
Ask Func[forecast]: Denver
Func[forecast] says: No rain expected
A: No rain expected in Denver tomorrow.`

// agentFuncs calls a sample agent's funcs in process, and remembers each call and what it answered.
type agentFuncs struct {
	agent agentkit.Agent
	calls []string // "calc(2 + 2) = 4"
	args  []string // "2 + 2"
}

func (f *agentFuncs) Call(ctx context.Context, fn, args, _ string) (string, error) {
	call, ok := f.agent.Funcs[fn]
	if !ok {
		return "", fmt.Errorf("no func %s", fn)
	}
	out, err := call(ctx, agentkit.Call{Message: agentproto.Message{Text: args}})
	if err != nil {
		return "", err
	}
	f.calls = append(f.calls, fmt.Sprintf("%s(%s) = %s", fn, args, out.Text))
	f.args = append(f.args, args)
	return out.Text, nil
}

// result is how one question went.
type result struct {
	answer string
	calls  []string // what each func was called with, and answered
	args   []string
}

// refused reports whether the answer says it needs a real model and how to configure one.
func (r result) refused() bool {
	for _, want := range []string{offline.NeedsModel, "OPENAI_BASE_URL", "OPENAI_API_KEY", "--model"} {
		if !strings.Contains(r.answer, want) {
			return false
		}
	}
	return true
}

// TestNeverConfidentlyWrong asks the sample agents what a new user asks, through the Code Shot loop on the offline
// model with every embedder the platform may run it with, and checks that each answer is right or says that it
// needs a real model — never the examples' values in a confident sentence.
func TestNeverConfidentlyWrong(t *testing.T) {
	t.Parallel()
	stock := agentkit.Agent{
		BasePrompt: "I am an agent that answers questions about stock prices.",
		FewShots:   stockExamples(t),
		Funcs: map[string]agentkit.Func{"quote": func(_ context.Context, c agentkit.Call) (agentproto.Message, error) {
			return agentproto.Message{Text: map[string]string{"GOOG": "105.22", "MSFT": "$411.20"}[c.Message.Text]}, nil
		}},
	}
	weather := agentkit.Agent{
		BasePrompt: "I tell the weather.",
		FewShots:   codeshot.Split(weatherFewShots),
		Funcs: map[string]agentkit.Func{
			"weather": func(context.Context, agentkit.Call) (agentproto.Message, error) {
				return agentproto.Message{Text: "Rain, 9 degrees"}, nil
			},
			"forecast": func(context.Context, agentkit.Call) (agentproto.Message, error) {
				return agentproto.Message{Text: "Snow"}, nil
			},
		},
	}
	exactly := func(answer string, args ...string) func(result) error {
		return func(r result) error {
			if r.answer != answer || !slices.Equal(r.args, args) {
				return fmt.Errorf("want %q after calls %q", answer, args)
			}
			return nil
		}
	}
	// rightOrRefused accepts the right answer (after exactly these calls) or a refusal before any call.
	rightOrRefused := func(answer string, args ...string) func(result) error {
		return func(r result) error {
			if r.refused() && len(r.args) == 0 {
				return nil
			}
			if r.answer != answer || !slices.Equal(r.args, args) {
				return fmt.Errorf("want %q after calls %q, or a refusal before any call", answer, args)
			}
			return nil
		}
	}
	// aboutOslo accepts funcs called with "Oslo" only and an answer that holds none of the examples' values, or a
	// refusal before any call.
	aboutOslo := func(r result) error {
		if r.refused() && len(r.args) == 0 {
			return nil
		}
		for _, a := range r.args {
			if a != "Oslo" {
				return fmt.Errorf("a func was called with %q", a)
			}
		}
		for _, v := range []string{"Denver", "25", "sunny", "No rain"} {
			if len(r.args) == 0 || strings.Contains(r.answer, v) {
				return fmt.Errorf("want funcs called with Oslo and an answer from what they said, or a refusal")
			}
		}
		return nil
	}
	cases := []struct {
		agent    agentkit.Agent
		question string
		check    func(result) error
	}{
		// Seen by a new user: each answered with the examples' values.
		{calc.Agent(), "what is 2+2", rightOrRefused("2 + 2 is 4.", "2 + 2")},
		{calc.Agent(), "100 divided by 4", rightOrRefused("100 divided by 4 is 25.", "100 / 4")},
		{calc.Agent(), "square root of 144", rightOrRefused("The square root of 144 is 12.", "sqrt(144)")},
		{calc.Agent(), "What's the capital of France?", rightOrRefused("")},
		{calc.Agent(), "What is 12 modulo 7?", rightOrRefused("")},
		{calc.Agent(), "What is 12 times 7 squared?", rightOrRefused("")},
		{chart.Agent(), "Draw a bar chart of 5, 10, 15", rightOrRefused("Here is the chart #chart", "5, 10, 15")},
		{weather, "What's the weather in Oslo?", rightOrRefused("It is Rain in Oslo, 9 degrees.", "Oslo")},
		{weather, "Is it going to rain in Oslo?", aboutOslo},
		{weather, "How cold is it in Oslo right now?", aboutOslo},
		{weather, "weather Oslo", aboutOslo},
		{weather, "Will it rain in Oslo in 3 days?", rightOrRefused("")},
		// What the examples fit, answered.
		{genrand.Agent(genrand.WithSeed(1, 2)), "Generate a random number between 5 and 50", nil},
		{genrand.Agent(genrand.WithSeed(1, 2)), "random number between 5 and 50", nil},
		{calc.Agent(), "What is 12 times 7?", exactly("12 times 7 is 84.", "12 * 7")},
		{stock, "What is the stock price for GOOG?", exactly("The stock price for GOOG is $105.22.", "GOOG")},
		{stock, "MSFT share price", exactly("The share price for MSFT is $411.20.", "MSFT")},
	}
	embedders := map[string]func(t *testing.T) embedding.Embedder{
		"words":    func(*testing.T) embedding.Embedder { return nil },
		"test-bag": func(*testing.T) embedding.Embedder { return &bagEmbedder{} },
		"local":    func(*testing.T) embedding.Embedder { return embedding.NewLocal(0) },
		"use-lite": func(t *testing.T) embedding.Embedder { return uselitetest.Model(t) },
	}
	for name, emb := range embedders {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			model := offline.New(emb(t))
			for _, c := range cases {
				funcs := &agentFuncs{agent: c.agent}
				answer, _, err := loop.Run(t.Context(), model, funcs, loop.Spec{Handle: "agent", BasePrompt: c.agent.BasePrompt,
					Examples: c.agent.FewShots, Model: "offline"}, c.question, 0)
				got := result{answer: answer, calls: funcs.calls, args: funcs.args}
				if err != nil {
					got.answer = "failed: " + err.Error()
				}
				check := c.check
				if check == nil { // genrand: the bounds asked for, and the number drawn
					check = func(r result) error {
						if len(r.calls) != 1 || r.args[0] != "5, 50" {
							return fmt.Errorf("want one call with %q", "5, 50")
						}
						drawn := r.calls[0][strings.LastIndex(r.calls[0], " ")+1:]
						return exactly("The random number is "+drawn+".", "5, 50")(r)
					}
				}
				if err := check(got); err != nil {
					t.Errorf("%q: answered %q after calls %q: %v", c.question, got.answer, got.calls, err)
				}
			}
		})
	}
}
