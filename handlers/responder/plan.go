package responder

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/compaction"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// plan is what a turn asks the model.
type plan struct {
	req llm.Request
	// spent is set when max_output_tokens is used up before the call.
	spent bool
	// capped says the completion was bounded by max_output_tokens (a "length" finish is then incomplete).
	capped bool
	// servers are the server-side tools offered, by the function name the model calls them by.
	servers map[string]serverTool
	// callsLeft is how many more server-side tool calls the response's max_tool_calls lets this turn make (-1: no
	// bound). At 0 the server tools are not offered, so that the model answers from what the calls gave.
	callsLeft int
	// results gives the results of the response's searches by a marker's key (file_search), when a tool cites
	// them: the answer's markers of those are taken out of its text and made file_citation annotations.
	results func(key string) []events.FileSearchResult
}

type serverTool struct {
	tool events.ResponseTool
	x    Executor
}

func (p plan) server(name string) (events.ResponseTool, Executor, bool) {
	st, ok := p.servers[name]
	return st.tool, st.x, ok
}

// stripper takes the citing markers out of the answer's text as the model streams it (nil: nothing to cite).
func (p plan) stripper() *turn.Stripper {
	if p.results == nil {
		return nil
	}
	return turn.NewStripper(p.results)
}

// cited is the answer's text without the markers that cite a search's result, and their file_citation
// annotations: the file's name and where the marker was, in characters, as the Responses API gives them.
func (p plan) cited(text string) (string, []events.ItemAnnotation) {
	if p.results == nil {
		return text, nil
	}
	text, citations := turn.StripCitations(text, p.results)
	return text, annotations(citations)
}

func annotations(citations []turn.Citation) []events.ItemAnnotation {
	var out []events.ItemAnnotation
	for _, c := range citations {
		out = append(out, events.ItemAnnotation{Type: "file_citation", FileID: c.Result.FileID, Filename: c.Result.FileName,
			Index: c.Start})
	}
	return out
}

// Citer is an executor whose items the final answer cites (file_search): it gives the results a marker's key
// names among the items recorded so far.
type Citer interface {
	Results(items []events.Item) func(key string) []events.FileSearchResult
}

// plan builds the model request of the response's current turn: the instructions, the history, the response's
// input, then its own output so far.
func (l *Loop) plan(s response.State, history []events.Item, files shown) (plan, error) {
	rq := s.Request
	p := plan{servers: map[string]serverTool{}}
	req := llm.Request{Model: rq.Model, Temperature: rq.Temperature, TopP: rq.TopP}
	items := slices.Concat(history, rq.Input, s.Output)
	for _, t := range rq.Tools {
		if t.Type == "function" {
			req.Tools = append(req.Tools, turn.FunctionTool(t.Name, t.Description, t.Parameters, t.Strict))
			continue
		}
		x, ok := l.cfg.Executors[t.Type]
		if !ok {
			return p, fmt.Errorf("this node cannot run the %s tool", t.Type)
		}
		if mo, ok := x.(MultiOfferer); ok {
			for _, offered := range mo.OfferAll(t, items) {
				if _, taken := p.servers[offered.Name]; taken {
					continue
				}
				req.Tools = append(req.Tools, offered)
				p.servers[offered.Name] = serverTool{tool: t, x: x}
			}
			continue
		}
		offered, ok := x.Offer(t)
		if !ok {
			return p, fmt.Errorf("this node cannot run the %s tool", t.Type)
		}
		req.Tools = append(req.Tools, offered)
		p.servers[offered.Name] = serverTool{tool: t, x: x}
		if c, ok := x.(Citer); ok {
			p.results = c.Results(s.Output)
		}
	}
	p.callsLeft = -1
	if m := rq.MaxToolCalls; m != nil {
		made := 0
		for _, it := range s.Output {
			if strings.HasSuffix(it.Type, "_call") && it.Type != "function_call" {
				made++
			}
		}
		p.callsLeft = max(*m-made, 0)
		if p.callsLeft == 0 {
			req.Tools = slices.DeleteFunc(req.Tools, func(t llm.Tool) bool { _, server := p.servers[t.Name]; return server })
		}
	}
	if len(req.Tools) > 0 {
		choice, err := response.ToolChoiceOf(rq.ToolChoice, rq.Tools)
		if err != nil {
			return p, err
		}
		req.Tools = slices.DeleteFunc(req.Tools, func(t llm.Tool) bool {
			if st, server := p.servers[t.Name]; server {
				return !choice.Lets(st.tool)
			}
			return !choice.Lets(events.ResponseTool{Type: "function", Name: t.Name})
		})
		// Tools the model called in this response are in its output: a forced choice has been obeyed.
		called := slices.ContainsFunc(s.Output, func(it events.Item) bool { return strings.HasSuffix(it.Type, "_call") })
		req.ToolChoice = turn.AfterCalls(choice.Choice, called)
		parallel := rq.ParallelToolCalls
		req.ParallelToolCalls = &parallel
	}
	req.ResponseFormat = responseFormat(rq.Text)

	if rq.Instructions != "" {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: rq.Instructions})
	}
	conv, summary, err := l.messages(items, files)
	if err != nil {
		return p, err
	}
	if rq.Truncation == "auto" {
		if conv, err = fit(req, conv, summary, rq.MaxOutputTokens); err != nil {
			return p, err
		}
	}
	req.Messages = append(req.Messages, conv...)

	if p.capped, p.spent = turn.CapCompletion(&req, rq.MaxOutputTokens, s.Usage.CompletionTokens); p.spent {
		return p, nil
	}
	p.req = req
	return p, nil
}

// fit is what "truncation": "auto" sends of conv after req's messages (the instructions) and tools: the oldest items
// are dropped, a call with its outputs (turn.Group), until the request fits the model's context window with room
// for the answer (max_output_tokens, or outputReserve); the newest item always stays. The tokens are counted as
// OpenAI's tokenizers count them, an estimate for other models (internal/llm/tokens).
//
// summary is the index in conv of the newest compaction item's summary (-1: none). It is pinned like the
// instructions: it stands for the whole conversation before it, which the model no longer sees otherwise, so
// dropping it would have the model answer without that context and nobody told. The items before it (the user
// messages /compact keeps, an older summary) are what it supersedes: they stay while they fit, as the client sent
// them, and being the oldest they are the first dropped. When the summary and the newest item alone do not fit,
// the request fails as a request too long for the model fails without truncation (invalid_prompt), rather than
// going out without the summary; for a model whose window is only guessed, it goes out with the summary and the
// model decides.
func fit(req llm.Request, conv []llm.Message, summary int, maxOutput *int) ([]llm.Message, error) {
	window, known := tokens.ContextWindow(req.Model)
	reserve := outputReserve
	if maxOutput != nil {
		reserve = *maxOutput
	}
	fixed := tokens.CountMessages(req.Model, req.Messages) + tokens.CountTools(req.Model, req.Tools)
	budget := window - reserve - fixed
	entries := turn.Group(conv)
	sizes := make([]int, len(entries))
	pinned, at := -1, 0
	total := 0
	for i, e := range entries {
		sizes[i] = tokens.CountMessages(req.Model, e.Messages)
		total += sizes[i]
		if summary >= at && summary < at+len(e.Messages) {
			pinned = i
		}
		at += len(e.Messages)
	}
	keep := make([]bool, len(entries))
	for i := range keep {
		keep[i] = true
	}
	for i := 0; total > budget && i < len(entries)-1; i++ {
		if i == pinned {
			continue
		}
		keep[i] = false
		total -= sizes[i]
	}
	// A window only guessed (a model tokens does not know) may be larger than the guess: the request then goes out
	// with the summary, and the model says whether it fits.
	if total > budget && pinned >= 0 && known {
		return nil, fmt.Errorf("the input does not fit the context window of the model %s (%d tokens, %d of them left for the "+
			"answer) even with truncation: with the instructions and tools, the summary of the compaction item and the "+
			"newest item alone take %d tokens", req.Model, window, reserve, fixed+total)
	}
	var kept []turn.Entry
	for i, e := range entries {
		if keep[i] {
			kept = append(kept, e)
		}
	}
	return turn.Flatten(kept), nil
}

// outputReserve is the room "truncation": "auto" leaves for the answer when the request sets no max_output_tokens.
const outputReserve = 4096

// messages turns items into chat messages: consecutive function calls become one assistant message with its tool
// calls, each output a tool message; an item_reference stands for the earlier item of its ID. files are the image
// files the messages show (readImages). summary is the index of the newest compaction item's message, -1 if none:
// what fit pins.
func (l *Loop) messages(items []events.Item, files shown) (out []llm.Message, summary int, err error) {
	summary = -1
	byID := map[string]events.Item{}
	var pending *llm.Message // an assistant message gathering tool calls
	flush := func() {
		if pending != nil {
			out = append(out, *pending)
			pending = nil
		}
	}
	call := func(c llm.ToolCall) {
		if pending == nil {
			pending = &llm.Message{Role: llm.RoleAssistant}
		}
		pending.ToolCalls = append(pending.ToolCalls, c)
	}
	for _, it := range items {
		if it.Type == "item_reference" {
			ref, ok := byID[it.ID]
			if !ok {
				// Left out, the model would answer without what the client meant it to read, and nobody would know.
				return nil, 0, fmt.Errorf("item_reference '%s' names no item before it in the response's context (its input, the previous responses or the conversation)", it.ID)
			}
			it = ref
		} else if it.ID != "" {
			byID[it.ID] = it
		}
		switch it.Type {
		case "message", "":
			flush()
			role := it.Role
			switch role {
			case "developer", "system":
				role = llm.RoleSystem
			case "assistant":
			default:
				role = llm.RoleUser
			}
			imgs, notes := images(it, files.images)
			out = append(out, llm.Message{Role: role, Content: it.Text() + fileTexts(it, files) + notes, Images: imgs})
		case "function_call":
			call(llm.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case "function_call_output":
			flush()
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: it.CallID, Content: outputText(it.Output)})
		case compaction.ItemType:
			// the summary the face opened (an item it could not open was refused): it stands for the items compacted
			flush()
			if t := it.Text(); t != "" {
				summary = len(out)
				out = append(out, llm.Message{Role: llm.RoleUser, Content: compaction.ContextText(t)})
			}
		case "mcp_list_tools", "mcp_approval_request":
			// the tools are offered as functions; a request waits for its answer (below) or its call
		case "mcp_call":
			call(llm.ToolCall{ID: it.ID, Name: it.Name, Arguments: it.Arguments})
			flush()
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: it.ID, Content: MCPOutput(it)})
		case "mcp_approval_response":
			// a call the user refused: the model reads that it was refused
			req, ok := byID[it.ApprovalRequestID]
			if !ok || it.Approve == nil || *it.Approve {
				continue
			}
			call(llm.ToolCall{ID: req.ID, Name: req.Name, Arguments: req.Arguments})
			flush()
			text := "The user did not approve this call of " + req.Name + "."
			if it.Reason != "" {
				text += " Reason: " + it.Reason
			}
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: req.ID, Content: text})
		default:
			x, ok := l.executorFor(it.Type)
			if !ok {
				continue // reasoning and other items the model is not shown
			}
			args, _ := json.Marshal(map[string]any{"queries": it.Queries, "code": it.Code})
			id := it.CallID
			if id == "" {
				id = it.ID
			}
			call(llm.ToolCall{ID: id, Name: offeredName(x, it), Arguments: string(args)})
			flush()
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: x.Output(it)})
		}
	}
	flush()
	return out, summary, nil
}

// offeredName is the function name a server tool's item was called by.
func offeredName(x Executor, it events.Item) string {
	t, _ := x.Offer(events.ResponseTool{Type: it.Type})
	return t.Name
}

// responseFormat turns text.format into Chat's response_format: json_schema's flat {name, schema, strict} goes
// under "json_schema"; json_object as it is; text is the default, sent as nothing.
func responseFormat(text json.RawMessage) json.RawMessage {
	var t struct {
		Format struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Schema      json.RawMessage `json:"schema"`
			Strict      *bool           `json:"strict,omitempty"`
		} `json:"format"`
	}
	if len(text) == 0 || json.Unmarshal(text, &t) != nil {
		return nil
	}
	switch t.Format.Type {
	case "json_schema":
		inner := map[string]any{"name": t.Format.Name, "schema": t.Format.Schema}
		if t.Format.Description != "" {
			inner["description"] = t.Format.Description
		}
		if t.Format.Strict != nil {
			inner["strict"] = *t.Format.Strict
		}
		out, _ := json.Marshal(map[string]any{"type": "json_schema", "json_schema": inner})
		return out
	case "json_object":
		return json.RawMessage(`{"type":"json_object"}`)
	}
	return nil
}

// MCPOutput is what the model reads of an mcp_call: its output, or its error.
func MCPOutput(it events.Item) string {
	if it.Error != "" {
		return "Error: " + it.Error
	}
	var text string
	if json.Unmarshal(it.Output, &text) == nil {
		return text
	}
	return string(it.Output)
}
