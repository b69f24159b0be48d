package runworker

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
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

// entry is a piece of the conversation placed by when it entered the thread.
type entry struct {
	seq  uint64
	msgs []llm.Message
	// thread marks a thread message (what truncation may drop), as opposed to the run's own tool calls.
	thread bool
}

// planTurn builds the model request of the run's current turn: the instructions, the thread's messages, and the
// run's tool calls so far with their outputs, in the order they happened; truncated as the run asks, and checked
// against the run's token budgets (which count every turn of the run, as OpenAI counts them).
func planTurn(t *thread.State, r *thread.Run) (plan, error) {
	var p plan
	req := llm.Request{Model: r.Model, Temperature: r.Temperature, TopP: r.TopP}
	for _, tool := range r.Tools {
		if tool.Type == "file_search" {
			req.Tools = append(req.Tools, FileSearchTool)
			continue
		}
		if tool.Type == "code_interpreter" {
			req.Tools = append(req.Tools, CodeTool)
			continue
		}
		if tool.Type != "function" || tool.Function == nil {
			continue
		}
		strict := tool.Function.Strict != nil && *tool.Function.Strict
		req.Tools = append(req.Tools, llm.Tool{Name: tool.Function.Name, Description: tool.Function.Description,
			Parameters: tool.Function.Parameters, Strict: strict})
	}
	if len(req.Tools) > 0 {
		choice, err := thread.ToolChoiceOf(r.ToolChoice, r.Tools)
		if err != nil {
			return p, err
		}
		req.ToolChoice = choice
		parallel := r.ParallelToolCalls
		req.ParallelToolCalls = &parallel
	}
	if rf := r.ResponseFormat; len(rf) > 0 && string(rf) != `"auto"` && string(rf) != "null" {
		req.ResponseFormat = json.RawMessage(rf)
	}

	var entries []entry
	for _, m := range t.Live() {
		if text := m.Text(); text != "" {
			entries = append(entries, entry{seq: m.Seq, thread: true, msgs: []llm.Message{{Role: m.Role, Content: text}}})
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
		entries = append(entries, entry{seq: s.Seq, msgs: msgs})
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
	if r.Truncation.Type == "last_messages" && r.Truncation.LastMessages != nil {
		entries = keepLastThreadMessages(entries, *r.Truncation.LastMessages)
	}

	build := func(es []entry) []llm.Message {
		var msgs []llm.Message
		if r.Instructions != "" {
			msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: r.Instructions})
		}
		for _, e := range es {
			msgs = append(msgs, e.msgs...)
		}
		return msgs
	}
	req.Messages = build(entries)

	if r.MaxPromptTokens != nil {
		budget := *r.MaxPromptTokens - r.Usage.PromptTokens
		count := func(msgs []llm.Message) int {
			return tokens.CountMessages(r.Model, msgs) + tokens.CountTools(r.Model, req.Tools)
		}
		// "auto" drops the oldest thread messages until the prompt fits; the newest one always stays.
		for count(req.Messages) > budget && r.Truncation.Type != "last_messages" && dropOldestThreadMessage(&entries) {
			req.Messages = build(entries)
		}
		if count(req.Messages) > budget {
			p.incomplete = "max_prompt_tokens"
			return p, nil
		}
	}
	if r.MaxCompletionTokens != nil {
		left := *r.MaxCompletionTokens - r.Usage.CompletionTokens
		if left <= 0 {
			p.incomplete = "max_completion_tokens"
			return p, nil
		}
		req.MaxTokens, p.capped = left, true
	}
	p.req = req
	return p, nil
}

// keepLastThreadMessages keeps the n most recent thread messages (and every tool call of the run).
func keepLastThreadMessages(entries []entry, n int) []entry {
	kept := make([]entry, 0, len(entries))
	seen := 0
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.thread {
			if seen >= n {
				continue
			}
			seen++
		}
		kept = append(kept, e)
	}
	slices.Reverse(kept)
	return kept
}

// dropOldestThreadMessage removes the oldest thread message unless it is the last one left; it reports whether it
// removed one.
func dropOldestThreadMessage(entries *[]entry) bool {
	threadMsgs := 0
	first := -1
	for i, e := range *entries {
		if e.thread {
			threadMsgs++
			if first < 0 {
				first = i
			}
		}
	}
	if threadMsgs <= 1 {
		return false
	}
	*entries = slices.Delete(*entries, first, first+1)
	return true
}
