package runworker

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// plan is what a turn asks the model, or why it cannot ask.
type plan struct {
	req llm.Request
	// incomplete is set when the run's token budget is spent before the call: "max_prompt_tokens" or
	// "max_completion_tokens".
	incomplete string
	// capped reports that the completion was bounded by the run's max_completion_tokens (a "length" finish then
	// ends the run incomplete).
	capped bool
}

// entry is a piece of the conversation placed by when it entered the thread; a thread message is droppable (what
// truncation may drop), the run's own tool calls are not.
type entry struct {
	seq uint64
	turn.Entry
}

// planTurn builds the model request of the run's current turn: the instructions, the thread's messages, and the
// run's tool calls so far with their outputs, in the order they happened; truncated as the run asks, and checked
// against the run's token budgets (which count every turn of the run, as OpenAI counts them, images included by
// tokens.ImageTokens). files are the image files the messages show (Worker.plan).
func planTurn(t *thread.State, r *thread.Run, files turn.Shown) (plan, error) {
	var p plan
	req := llm.Request{Model: r.Model, Temperature: r.Temperature, TopP: r.TopP}
	for _, tool := range r.Tools {
		if tool.Type == turn.FileSearch {
			req.Tools = append(req.Tools, fileSearchTool)
			continue
		}
		if tool.Type == turn.CodeInterpreter {
			req.Tools = append(req.Tools, turn.CodeTool)
			continue
		}
		if tool.Type != "function" || tool.Function == nil {
			continue
		}
		req.Tools = append(req.Tools, turn.FunctionTool(tool.Function.Name, tool.Function.Description,
			tool.Function.Parameters, tool.Function.Strict))
	}
	if len(req.Tools) > 0 {
		choice, err := thread.ToolChoiceOf(r.ToolChoice, r.Tools)
		if err != nil {
			return p, err
		}
		// A step of tool calls with its outputs is a call the model made in this run: a forced choice has been obeyed.
		called := slices.ContainsFunc(r.Steps, func(id string) bool {
			st := t.Steps[id]
			return st != nil && st.Type == events.StepTypeToolCalls && st.Outputs != nil
		})
		req.ToolChoice = turn.AfterCalls(choice, called)
		parallel := r.ParallelToolCalls
		req.ParallelToolCalls = &parallel
	}
	if rf := r.ResponseFormat; len(rf) > 0 && string(rf) != `"auto"` && string(rf) != "null" {
		req.ResponseFormat = json.RawMessage(rf)
	}

	var entries []entry
	for _, m := range t.Live() {
		if msg := messageOf(m, files); msg.Content != "" || len(msg.Images) > 0 {
			entries = append(entries, entry{seq: m.Seq, Entry: turn.Entry{Droppable: true, Messages: []llm.Message{msg}}})
		}
	}
	for _, id := range r.Steps {
		s := t.Steps[id]
		if s.Type != events.StepTypeToolCalls || s.Outputs == nil {
			continue
		}
		calls := make([]llm.ToolCall, 0, len(s.ToolCalls))
		msgs := []llm.Message{{Role: llm.RoleAssistant}}
		for _, c := range s.ToolCalls {
			calls = append(calls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: s.Outputs[c.ID]})
		}
		msgs[0].ToolCalls = calls
		entries = append(entries, entry{seq: s.Seq, Entry: turn.Entry{Messages: msgs}})
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
	conv := make([]turn.Entry, len(entries))
	for i, e := range entries {
		conv[i] = e.Entry
	}
	if r.Truncation.Type == "last_messages" && r.Truncation.LastMessages != nil {
		conv = turn.KeepLast(conv, *r.Truncation.LastMessages)
	}

	build := func(es []turn.Entry) []llm.Message {
		var msgs []llm.Message
		if r.Instructions != "" {
			msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: r.Instructions})
		}
		return append(msgs, turn.Flatten(es)...)
	}
	req.Messages = build(conv)

	if r.MaxPromptTokens != nil {
		budget := *r.MaxPromptTokens - r.Usage.PromptTokens
		count := func(msgs []llm.Message) int {
			return tokens.CountMessages(r.Model, msgs) + tokens.CountTools(r.Model, req.Tools)
		}
		// "auto" drops the oldest thread messages until the prompt fits; the newest one always stays.
		for count(req.Messages) > budget && r.Truncation.Type != "last_messages" && turn.DropOldest(&conv) {
			req.Messages = build(conv)
		}
		if count(req.Messages) > budget {
			p.incomplete = "max_prompt_tokens"
			return p, nil
		}
	}
	capped, spent := turn.CapCompletion(&req, r.MaxCompletionTokens, r.Usage.CompletionTokens)
	if spent {
		p.incomplete = "max_completion_tokens"
		return p, nil
	}
	p.capped = capped
	p.req = req
	return p, nil
}
