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
		{calc.Agent(), "what is 2+2", rightOrRefused("2+2 is 4.", "2+2")},
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

// memoryFewShots are a user's agent that remembers what it is told.
const memoryFewShots = `Q: Remember that my locker code is 4512
Ask Func[remember]: locker code = 4512
Func[remember] says: saved
A: I will remember that your locker code is 4512.`

// noteFewShots are a user's agent whose call carries the value only: the words around it are for the answer.
const noteFewShots = `Q: Remember that my locker code is 4512
Ask Func[note]: 4512
Func[note] says: saved
A: I will remember that your locker code is 4512.`

// convertFewShots are a user's unit converter: the number and its unit are one value.
const convertFewShots = `Q: Convert 10km to miles
Ask Func[convert]: 10km in miles
Func[convert] says: 6.21 miles
A: 10km is 6.21 miles.`

// TestOfflineTable is the offline model's table: what a user asks the sample agents (and two agents of their own),
// and what the offline model answers, after which func calls. "refused" is the answer that says it needs a real
// model and how to configure one, before any call. Signs, decimals and units stay with their numbers; a question
// the examples do not repeat whole is refused, never answered with the examples' values or operation.
func TestOfflineTable(t *testing.T) {
	t.Parallel()
	memory := func() agentkit.Agent {
		return agentkit.Agent{
			BasePrompt: "I remember what you tell me.",
			FewShots:   codeshot.Split(memoryFewShots),
			Funcs: map[string]agentkit.Func{"remember": func(context.Context, agentkit.Call) (agentproto.Message, error) {
				return agentproto.Message{Text: "saved"}, nil
			}},
		}
	}
	convert := func() agentkit.Agent {
		return agentkit.Agent{
			BasePrompt: "I convert kilometres to miles.",
			FewShots:   codeshot.Split(convertFewShots),
			Funcs: map[string]agentkit.Func{"convert": func(_ context.Context, c agentkit.Call) (agentproto.Message, error) {
				var km float64
				if _, err := fmt.Sscanf(c.Message.Text, "%gkm in miles", &km); err != nil {
					return agentproto.Message{}, agentkit.BadInput("cannot convert %q", c.Message.Text)
				}
				return agentproto.Message{Text: fmt.Sprintf("%.2f miles", km*0.621371)}, nil
			}},
		}
	}
	note := func() agentkit.Agent {
		return agentkit.Agent{BasePrompt: "I take notes.", FewShots: codeshot.Split(noteFewShots),
			Funcs: map[string]agentkit.Func{"note": func(context.Context, agentkit.Call) (agentproto.Message, error) {
				return agentproto.Message{Text: "saved"}, nil
			}}}
	}
	weather := func() agentkit.Agent {
		return agentkit.Agent{BasePrompt: "I tell the weather.",
			FewShots: codeshot.Split("Q: What is the weather in Paris?\nAsk Func[weather]: Paris\nFunc[weather] says: Sunny, 23 degrees\nA: Paris: Sunny, 23 degrees"),
			Funcs: map[string]agentkit.Func{"weather": func(context.Context, agentkit.Call) (agentproto.Message, error) {
				return agentproto.Message{Text: "Light rain and wind, -2 degrees"}, nil
			}}}
	}
	stock := func() agentkit.Agent {
		return agentkit.Agent{FewShots: stockExamples(t),
			Funcs: map[string]agentkit.Func{"quote": func(context.Context, agentkit.Call) (agentproto.Message, error) {
				return agentproto.Message{Text: "$1.00"}, nil
			}}}
	}
	seeded := func() agentkit.Agent { return genrand.Agent(genrand.WithSeed(1, 2)) }
	const refused = "refused"
	cases := []struct {
		agent    func() agentkit.Agent
		question string
		answer   string   // or refused
		calls    []string // what the funcs were called with
	}{
		// Wrong before: the sign of a value, and of the func's result, was dropped.
		{calc.Agent, "What is 3 minus 5?", "3 minus 5 is -2.", []string{"3 - 5"}},
		{calc.Agent, "-3 times 4", "-3 times 4 is -12.", []string{"-3 * 4"}},
		{calc.Agent, "10 minus -4", "10 minus -4 is 14.", []string{"10 - -4"}},
		{calc.Agent, "What is -2.5 times -4?", "-2.5 times -4 is 10.", []string{"-2.5 * -4"}},
		{calc.Agent, "What is 5-8?", "5-8 is -3.", []string{"5-8"}},
		// Refused before: followed as a person would.
		{calc.Agent, "7 times 12", "7 times 12 is 84.", []string{"7 * 12"}},
		{calc.Agent, "3 plus 4", "3 plus 4 is 7.", []string{"3 + 4"}},
		{calc.Agent, "what is 3 plus 4?", "3 plus 4 is 7.", []string{"3 + 4"}},
		{calc.Agent, "what is 2+2", "2+2 is 4.", []string{"2+2"}},
		{calc.Agent, "What is 7*12?", "7*12 is 84.", []string{"7*12"}},
		{calc.Agent, "what is 7 * 12", "7*12 is 84.", []string{"7*12"}},
		{calc.Agent, "What is 100/8?", "100/8 is 12.5.", []string{"100/8"}},
		{calc.Agent, "What is 2^3?", "2^3 is 8.", []string{"2^3"}},
		{calc.Agent, "What is 2 to the power of -1?", "2 to the power of -1 is 0.5.", []string{"2 ^ -1"}},
		{memory, "Remember that my gym PIN is 0091", "I will remember that your gym PIN is 0091.", []string{"gym PIN = 0091"}},
		{seeded, "Generate a random number between zero and nine", "The random number is {drawn}.", []string{"zero, nine"}},
		// Decimals, units, and the examples' own questions.
		{calc.Agent, "What is 1.5 plus 2.25?", "1.5 plus 2.25 is 3.75.", []string{"1.5 + 2.25"}},
		{calc.Agent, "100 divided by 8", "100 divided by 8 is 12.5.", []string{"100 / 8"}},
		{calc.Agent, "What is 12 times 7?", "12 times 7 is 84.", []string{"12 * 7"}},
		{convert, "Convert -3.5km to miles", "-3.5km is -2.17 miles.", []string{"-3.5km in miles"}},
		{seeded, "random number between 5 and 50", "The random number is {drawn}.", []string{"5, 50"}},
		{seeded, "Generate a random number between -5 and 5", "The random number is {drawn}.", []string{"-5, 5"}},
		// A name of several words for one; a result repeated whole, replaced whole.
		{weather, "What is the weather in New York City?", "New York City: Light rain and wind, -2 degrees", []string{"New York City"}},
		{stock, "What is the current price for BRK.B?", "The current price for BRK.B is $1.00.", []string{"BRK.B"}},
		// Paraphrases that change what is asked: refused, and no func is called.
		{calc.Agent, "square root of 144", refused, nil},
		{calc.Agent, "What is 12 modulo 7?", refused, nil},
		{calc.Agent, "What is 12 times 7 squared?", refused, nil},
		{calc.Agent, "What is 3 less than 5?", refused, nil},
		{calc.Agent, "What is half of 12 times 7?", refused, nil},
		{calc.Agent, "What is 3 minus 5 times 2?", refused, nil},
		{calc.Agent, "Subtract 5 from 3", refused, nil},
		{calc.Agent, "What's the capital of France?", refused, nil},
		{calc.Agent, "help", refused, nil},
		{memory, "Forget that my locker code is 4512", refused, nil},
		{note, "Remember that my gym PIN is 0091", "I will remember that your gym PIN is 0091.", []string{"0091"}},
		{note, "Forget that my locker code is 4512", refused, nil},
		{seeded, "Generate a random number below 50", refused, nil},
		{seeded, "Generate 3 random numbers between 0 and 19", refused, nil},
		{weather, "What is the weather in Paris tomorrow?", refused, nil},
		{stock, "What was the price for AAPL yesterday?", refused, nil},
	}
	embedders := map[string]func(t *testing.T) embedding.Embedder{
		"words":    func(*testing.T) embedding.Embedder { return nil },
		"local":    func(*testing.T) embedding.Embedder { return embedding.NewLocal(0) },
		"use-lite": func(t *testing.T) embedding.Embedder { return uselitetest.Model(t) },
	}
	for name, emb := range embedders {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			model := offline.New(emb(t))
			for _, c := range cases {
				a := c.agent()
				funcs := &agentFuncs{agent: a}
				answer, _, err := loop.Run(t.Context(), model, funcs, loop.Spec{Handle: "agent", BasePrompt: a.BasePrompt,
					Examples: a.FewShots, Model: "offline"}, c.question, 0)
				got := result{answer: answer, calls: funcs.calls, args: funcs.args}
				if err != nil {
					got.answer = "failed: " + err.Error()
				}
				shown, want := got.answer, c.answer
				if got.refused() {
					shown = refused
				}
				if len(got.calls) > 0 { // genrand: the number drawn
					call := got.calls[len(got.calls)-1]
					want = strings.ReplaceAll(want, "{drawn}", call[strings.LastIndex(call, " ")+1:])
				}
				if shown != want || !slices.Equal(got.args, c.calls) {
					t.Errorf("%q: answered %q after calls %q; want %q after calls %q", c.question, got.answer, got.args, want, c.calls)
				} else if name == "words" {
					t.Logf("| %s | %s |", c.question, shown)
				}
			}
		})
	}
}
