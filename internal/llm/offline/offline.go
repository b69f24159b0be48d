// Package offline is the built-in model Contrail answers with when no real model is configured. It is not a
// language model and never claims to be one: it follows the few-shot examples of Code Shot agents mechanically and
// deterministically where they fit a question with certainty, says that it cannot answer (and how to configure a
// real model) where they do not, answers "help" with the agents the front agent lists in its prompt, and any other
// chat with a plain notice of what it is and how to configure a real model. Because it is deterministic it also
// serves tests.
//
// It imports the llm types, the tokenizer and the embedding interface; nothing else of Contrail.
package offline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// Notice is the offline model's answer to a chat that is not a Code Shot prompt: in two sentences, what it can do
// and how to configure a real model.
const Notice = "I am Contrail's offline model, not a language model: I can only follow a Code Shot agent's " +
	`examples, and answer "help" with the agents you can ask. For anything else, set OPENAI_BASE_URL and ` +
	"OPENAI_API_KEY for any OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp) and restart Contrail, or " +
	`give the agent a model as "provider/name", e.g. "openai/gpt-4o-mini".`

// NeedsModel starts the offline model's answer to a question its examples do not fit with certainty.
const NeedsModel = "I cannot answer that without a real model"

// needsModel is that answer in full: what the offline model can do, why this is not it, and how to configure a
// model.
func needsModel(why string) string {
	return NeedsModel + ": Contrail's offline model only follows this agent's examples, putting your values in " +
		"their place, and they do not fit this question (" + why + "). To configure a model, set OPENAI_BASE_URL " +
		"and OPENAI_API_KEY for any OpenAI-compatible server and restart Contrail, choosing the model with --model " +
		"(CONTRAIL_MODEL)."
}

// noExamples is the answer to a Code Shot prompt with no examples to follow; it is an answer line, so that the
// Code Shot loop ends.
const noExamples = "A: This agent has no few-shot examples, and Contrail's offline model can only follow examples. " +
	"Configure a real model (OPENAI_BASE_URL and OPENAI_API_KEY) to answer it."

// maxCached bounds the embeddings kept between calls. A Code Shot query takes several steps with the same
// examples; remembering their vectors spares a remote embedder the same request each step.
const maxCached = 4096

// Provider is the offline model. It is safe for concurrent use.
type Provider struct {
	emb embedding.Embedder

	mu    sync.Mutex
	cache map[string][]float32
	// tokens counts usage, remembering the counts of long texts (a chat's history is counted on every turn).
	tokens *tokens.Counter
}

// New returns the offline model. emb measures how near a query is to each example's question; with a nil emb it
// compares their words instead.
func New(emb embedding.Embedder) *Provider {
	return &Provider{emb: emb, cache: map[string][]float32{}, tokens: tokens.NewCounter(4096)}
}

// Name is "offline".
func (p *Provider) Name() string { return llm.ProviderOffline }

// Complete answers req. A Code Shot prompt (see llm.CodeShotPrompt) gets the transcript's next line; anything
// else gets Notice. With onDelta the answer is streamed a few words at a time.
//
// Tools: the offline model cannot decide to call a tool. With tool_choice "auto" or "none" it answers in text.
// With tool_choice naming a function whose parameters require nothing, it calls that function with "{}" (the
// only call it can make without inventing arguments); with "required", or a named function that needs arguments,
// it fails with ErrBadRequest, since answering in text would break the caller's contract.
func (p *Provider) Complete(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, fmt.Errorf("offline: %w", err)
	}
	resp := llm.Response{Model: llm.ProviderOffline, FinishReason: llm.FinishStop}
	call, err := toolCall(req)
	if err != nil {
		return llm.Response{}, err
	}
	if call != nil {
		resp.ToolCalls = []llm.ToolCall{*call}
		resp.FinishReason = llm.FinishToolCalls
		if onDelta != nil {
			onDelta(llm.Delta{ToolCall: &llm.ToolCallDelta{Index: 0, ID: call.ID, Name: call.Name, Arguments: call.Arguments}})
		}
	} else {
		text, err := p.answer(ctx, req)
		if err != nil {
			return llm.Response{}, err
		}
		// What is not an answer says so: the notice, and "I cannot answer that" (see Refused).
		resp.Refused = text == Notice || strings.HasPrefix(strings.TrimPrefix(text, "A: "), NeedsModel) || text == noExamples
		text, resp.FinishReason = limit(req, text)
		resp.Text = text
		if onDelta != nil {
			for _, w := range chunks(text) {
				if err := ctx.Err(); err != nil {
					return resp, fmt.Errorf("offline: %w", err)
				}
				onDelta(llm.Delta{Text: w})
			}
		}
	}
	resp.Usage = p.tokens.Usage(req, resp)
	return resp, nil
}

func (p *Provider) answer(ctx context.Context, req llm.Request) (string, error) {
	cs, ok := llm.ParseCodeShotPrompt(req.Messages)
	if !ok {
		return chat(req.Messages), nil
	}
	return p.NextLine(ctx, cs)
}

// chat answers a chat that is not a Code Shot prompt: "help" and "What can you do?" with the agents the system
// message lists (see llm.AgentsHeading), anything else with Notice.
func chat(msgs []llm.Message) string {
	var system, last string
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleSystem:
			system += m.Content + "\n"
		case llm.RoleUser:
			last = m.Content
		}
	}
	_, list, found := strings.Cut(system, llm.AgentsHeading)
	if !found || !AsksForHelp(last) {
		return Notice
	}
	list, _, _ = strings.Cut(strings.TrimLeft(list, "\n"), "\n\n")
	list = strings.TrimSpace(list)
	if list == "" || list == "(none)" {
		return "I am Contrail's offline model: I answer by passing your question to an agent whose examples fit it, " +
			"and no agent is registered for you yet (register one with `contrail agents register`). " + realModel
	}
	return "I am Contrail's offline model: I answer by passing your question to the agent whose examples fit it. " +
		"You can ask these agents:\n" + list + "\n" + realModel
}

// realModel says how to configure a real model, for anything no agent answers.
const realModel = "For anything else, set OPENAI_BASE_URL and OPENAI_API_KEY for any OpenAI-compatible server " +
	"and restart Contrail."

// helpQuestions are the ways of asking what the platform can do, lower-cased, without punctuation or courtesies.
var helpQuestions = phraseSet("help|help me|what can you do|what can you do for me|what can you help with|" +
	"what can you help me with|what can i ask|what can i ask you|what do you do|what are you able to do|" +
	"how can you help|how can you help me|what agents are there|which agents are there|list agents|list the agents")

// greetings are words a help question may have around it ("Hi, what can you do?", "help please").
var greetings = wordSet("please hi hello hey thanks so")

func phraseSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, p := range strings.Split(s, "|") {
		m[p] = true
	}
	return m
}

// AsksForHelp reports whether a message asks what the platform can do ("help", "What can you do?"). The front
// agent answers it itself, with the agents the user can ask, instead of routing it.
func AsksForHelp(text string) bool {
	var kept []string
	for _, w := range words(text) {
		if w.kind != opTok && !in(greetings, w) {
			kept = append(kept, strings.ToLower(w.text))
		}
	}
	return helpQuestions[strings.Join(kept, " ")]
}

// limit applies the request's stop sequences and token bound to the answer, as a real server does.
func limit(req llm.Request, text string) (string, string) {
	finish := llm.FinishStop
	at := -1
	for _, s := range req.Stop {
		if i := strings.Index(text, s); s != "" && i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at >= 0 {
		text = text[:at]
	}
	if req.MaxTokens > 0 {
		if cut, ok := tokens.Truncate(req.Model, text, req.MaxTokens); ok {
			text, finish = cut, llm.FinishLength
		}
	}
	return text, finish
}

// toolCall is the call the request forces, if any; see Complete.
func toolCall(req llm.Request) (*llm.ToolCall, error) {
	switch req.ToolChoice {
	case "", "auto", "none":
		return nil, nil
	case "required":
		return nil, fmt.Errorf("offline: tool_choice %q: the offline model cannot choose a tool call; configure a real model: %w",
			req.ToolChoice, llm.ErrBadRequest)
	}
	for _, t := range req.Tools {
		if t.Name != req.ToolChoice {
			continue
		}
		if requiresArguments(t.Parameters) {
			return nil, fmt.Errorf("offline: tool_choice %q: the function requires arguments, which the offline model cannot make up; configure a real model: %w",
				req.ToolChoice, llm.ErrBadRequest)
		}
		// The ID is derived from the conversation, so the same request gets the same call.
		h := sha256.New()
		for _, m := range req.Messages {
			fmt.Fprintf(h, "%s\x00%s\x00", m.Role, m.Content)
		}
		h.Write([]byte(t.Name))
		return &llm.ToolCall{ID: "call_offline_" + hex.EncodeToString(h.Sum(nil))[:24], Name: t.Name, Arguments: "{}"}, nil
	}
	return nil, fmt.Errorf("offline: tool_choice names %q, which is not among the request's tools: %w", req.ToolChoice, llm.ErrBadRequest)
}

func requiresArguments(schema json.RawMessage) bool {
	if len(schema) == 0 {
		return false
	}
	var s struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return true // a schema we cannot read may well require something
	}
	return len(s.Required) > 0
}

// NextLine is the next line of a Code Shot transcript:
//
//  1. Take the examples' questions ("Q:" lines), nearest to the transcript's question first (embedding
//     similarity; the first of equals).
//  2. Diff the example's question with the real one token by token (see compare): the spans that differ are what
//     to put in ("SYMBOL" → "GOOG", "0" → "5", "locker code" → "gym PIN", "4" → "-4"). Once the transcript holds a
//     func's or agent's real result where the example holds its own, diff those too, so that the example's result
//     is replaced by the real one in the lines that follow ("6" → "-2").
//  3. Take the example's line after as many lines as the transcript already has past its question, and replace
//     each span it repeats whole by the real text's (see plan.read and plan.fill).
//
// The offline model must never be confidently wrong, so an example is followed only where its lines carry every
// difference: a span they do not repeat, or repeat only in pieces ("5 plus 3" written "5 + 3" is no place for
// "2 minus 2"), changes what is asked; words the question adds or leaves out must be fillers or courtesies; its
// calls carry every value that changed. Of the examples that fit, the closest gives the line. When none does, the
// answer says that this needs a real model and how to configure one — or, once a func or agent has answered,
// passes its answer on as it is. A transcript already longer than the example gets the example's answer line
// again.
func (p *Provider) NextLine(ctx context.Context, cs llm.CodeShotPrompt) (string, error) {
	if len(cs.Transcript) == 0 {
		return "", fmt.Errorf("offline: Code Shot prompt has no transcript: %w", llm.ErrBadRequest)
	}
	question := llm.ParseCodeShotLine(cs.Transcript[0]).Text
	produced := cs.Transcript[1:]

	var cands []candidate
	texts := []string{question}
	for _, ex := range cs.Examples {
		lines := strings.Split(ex, "\n")
		for i, l := range lines {
			if pl := llm.ParseCodeShotLine(l); pl.Kind == llm.LineQuery {
				cands = append(cands, candidate{lines: lines, question: i, text: pl.Text})
				texts = append(texts, pl.Text)
			}
		}
	}
	if len(cands) == 0 {
		return noExamples, nil
	}
	sims, err := p.similarities(ctx, texts)
	if err != nil {
		return "", err
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return sims[order[a]] > sims[order[b]] })
	why, best, bestFit := "", "", fit{}
	for _, i := range order {
		line, f, reason := cands[i].follow(question, produced)
		switch {
		case reason != "":
			if why == "" {
				why = reason
			}
		case best == "" || f.better(bestFit):
			best, bestFit = line, f
		}
	}
	if best != "" {
		return best, nil
	}
	return cannotAnswer(produced, why), nil
}

// candidate is an example question and the example it belongs to.
type candidate struct {
	lines    []string
	question int // index of the Q: line
	text     string
}

// fit is how closely an example fits a question: the tokens they share that say something, and the spans where
// they differ. Of the examples that fit, the closest gives the line (the nearest by similarity of equals): "3 minus
// 5" follows "10 minus 4", whatever an embedder thinks of "9-5".
type fit struct{ anchored, spans int }

func (f fit) better(g fit) bool {
	if f.anchored != g.anchored {
		return f.anchored > g.anchored
	}
	return f.spans < g.spans
}

// follow gives the transcript's next line from this example and how closely it fits, or why the example does not
// fit the question.
func (c candidate) follow(question string, produced []string) (string, fit, string) {
	// The example's lines after its question, up to its next question (conversational examples hold several).
	var seg []string
	for _, l := range c.lines[c.question+1:] {
		if llm.ParseCodeShotLine(l).Kind == llm.LineQuery {
			break
		}
		seg = append(seg, l)
	}
	if len(seg) == 0 {
		return "", fit{}, "the nearest example has no answer"
	}
	p := newPlan(c.text, seg)
	if why := p.read(0, question); why != "" {
		return "", fit{}, why
	}
	// The transcript so far must be what this example gives: the lines written from it again, and the results
	// where it has results.
	results := 0
	for i, got := range produced {
		if i >= len(seg) {
			break
		}
		ex, real := p.lines[i].pl, llm.ParseCodeShotLine(got)
		if ex.Kind != real.Kind || ex.Name != real.Name {
			return "", fit{}, "the answer so far went another way than the examples"
		}
		if p.lines[i].says {
			results++
			if why := p.read(results, real.Text); why != "" {
				return "", fit{}, why + " (" + p.srcs[results].name + ")"
			}
			continue
		}
		if p.fill(i) != real.String() {
			return "", fit{}, "the answer so far went another way than the examples"
		}
	}
	k := len(seg) - 1
	if n := len(produced); n < len(seg) {
		k = n
	} else {
		for i := len(seg) - 1; i >= 0; i-- {
			if p.lines[i].pl.Kind == llm.LineAnswer {
				k = i
				break
			}
		}
	}
	return p.fill(k), fit{p.srcs[0].d.anchored, len(p.srcs[0].chosen)}, ""
}

// cannotAnswer is the answer when no example fits: once funcs or agents have answered, what they said; before,
// that this needs a real model, why, and how to configure one. Either way an "A:" line, so that the query ends.
func cannotAnswer(produced []string, why string) string {
	var results []string
	for _, l := range produced {
		if pl := llm.ParseCodeShotLine(l); pl.Kind == llm.LineFuncSays || pl.Kind == llm.LineAgentSays {
			results = append(results, pl.Text)
		}
	}
	if len(results) > 0 {
		return "A: " + strings.Join(results, "; ")
	}
	return "A: " + needsModel(why)
}

// similarities gives, for each of texts[1:], its similarity to texts[0].
func (p *Provider) similarities(ctx context.Context, texts []string) ([]float64, error) {
	if p.emb == nil {
		q := bag(texts[0])
		out := make([]float64, len(texts)-1)
		for i, t := range texts[1:] {
			out[i] = cosine(q, bag(t))
		}
		return out, nil
	}
	vecs, err := p.embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(texts)-1)
	for i, v := range vecs[1:] {
		var dot float64
		for k := range min(len(v), len(vecs[0])) {
			dot += float64(v[k]) * float64(vecs[0][k])
		}
		out[i] = dot
	}
	return out, nil
}

// embed embeds texts, reusing the vectors of texts it has embedded before.
func (p *Provider) embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []string
	var at []int
	p.mu.Lock()
	for i, t := range texts {
		if v, ok := p.cache[t]; ok {
			out[i] = v
		} else {
			missing = append(missing, t)
			at = append(at, i)
		}
	}
	p.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	vecs, err := p.emb.Embed(ctx, missing)
	if err != nil {
		return nil, fmt.Errorf("offline: embed the question and the examples with %s: %w", p.emb.Name(), err)
	}
	if len(vecs) != len(missing) {
		return nil, fmt.Errorf("offline: embedder %s returned %d vectors for %d texts", p.emb.Name(), len(vecs), len(missing))
	}
	p.mu.Lock()
	if len(p.cache)+len(missing) > maxCached {
		clear(p.cache)
	}
	for k, i := range at {
		out[i] = vecs[k]
		p.cache[missing[k]] = vecs[k]
	}
	p.mu.Unlock()
	return out, nil
}

// bag counts the lower-cased words of s.
func bag(s string) map[string]float64 {
	b := map[string]float64{}
	for _, w := range words(s) {
		b[strings.ToLower(w.text)]++
	}
	return b
}

func cosine(a, b map[string]float64) float64 {
	var dot, na, nb float64
	for k, x := range a {
		dot += x * b[k]
		na += x * x
	}
	for _, y := range b {
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// chunks splits text into word-sized pieces, each word with the whitespace before it.
// pieces is about how many pieces an answer is streamed in: a word a piece for a short answer, a few words a piece
// for a long one (a real model streams tokens, but every piece is a frame to every subscriber).
const pieces = 12

func chunks(text string) []string {
	chunkBytes := len(text) / pieces
	space := func(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' }
	var out []string
	start := 0
	for i := 1; i < len(text); i++ {
		// A piece ends at the first word boundary past chunkBytes.
		if space(text[i]) && !space(text[i-1]) && i-start >= chunkBytes {
			out = append(out, text[start:i])
			start = i
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
