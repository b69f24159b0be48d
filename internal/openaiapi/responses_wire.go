package openaiapi

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/compaction"
)

// obj is a JSON object the face writes; Go maps keep the fields openai-node's types require present (null where
// OpenAI sends null), which a struct with omitempty would drop.
type obj = map[string]any

// wireResponse is the Response object as openai-node 7.x types it. Where OpenAI gives a value, so does this (1 for
// temperature and top_p, "auto", "disabled", false, []), never null: the Open Responses validator refuses nulls
// there. Every field the Open Responses specification requires of a ResponseResource is present, null only where
// it allows (responses_compliance_test.go checks them).
func wireResponse(s *response.State) obj {
	rq := s.Request
	out := obj{
		"id": s.ID, "object": "response", "created_at": s.CreatedAt.Unix(), "status": s.Status,
		"background": rq.Background, "error": nil, "incomplete_details": nil, "instructions": nil,
		"max_output_tokens": nil, "max_tool_calls": nil, "metadata": obj{}, "model": rq.Model,
		"output": wireItems(s.Output, rq.Include), "parallel_tool_calls": rq.ParallelToolCalls,
		"previous_response_id": nil, "conversation": nil, "reasoning": obj{"effort": nil, "summary": nil},
		"service_tier": "default", "store": rq.Store, "temperature": 1.0, "top_p": 1.0, "tool_choice": "auto",
		"tools": wireTools(rq.Tools), "truncation": "disabled", "top_logprobs": 0, "frequency_penalty": 0.0,
		"presence_penalty": 0.0, "text": obj{"format": obj{"type": "text"}, "verbosity": "medium"}, "usage": nil,
		"user": nil, "completed_at": nil, "safety_identifier": nil, "prompt_cache_key": nil,
		// openai-node 7 types it as required; null is OpenAI's "no access program asked for"
		"access_programs": nil,
	}
	if rq.Instructions != "" {
		out["instructions"] = rq.Instructions
	}
	if rq.MaxOutputTokens != nil {
		out["max_output_tokens"] = *rq.MaxOutputTokens
	}
	if rq.MaxToolCalls != nil {
		out["max_tool_calls"] = *rq.MaxToolCalls
	}
	if len(rq.Metadata) > 0 {
		out["metadata"] = rq.Metadata
	}
	if rq.PreviousResponseID != "" {
		out["previous_response_id"] = rq.PreviousResponseID
	}
	if rq.ConversationID != "" {
		out["conversation"] = obj{"id": rq.ConversationID}
	}
	if len(rq.Reasoning) > 0 {
		out["reasoning"] = withDefaults(rq.Reasoning, obj{"effort": nil, "summary": nil})
	}
	if rq.ServiceTier != "" {
		out["service_tier"] = rq.ServiceTier
	}
	if rq.Temperature != nil {
		out["temperature"] = *rq.Temperature
	}
	if rq.TopP != nil {
		out["top_p"] = *rq.TopP
	}
	if len(rq.ToolChoice) > 0 {
		out["tool_choice"] = rq.ToolChoice
	}
	if rq.Truncation != "" {
		out["truncation"] = rq.Truncation
	}
	if len(rq.Text) > 0 {
		text := withDefaults(rq.Text, obj{"format": obj{"type": "text"}, "verbosity": "medium"})
		if f, ok := text["format"].(json.RawMessage); ok {
			var head struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(f, &head) == nil && head.Type == "json_schema" {
				// the model was given no description and strict false (Chat's default) when the request left them out
				text["format"] = withDefaults(f, obj{"description": nil, "strict": false})
			}
		}
		out["text"] = text
	}
	if rq.User != "" {
		out["user"] = rq.User
	}
	if response.Terminal(s.Status) {
		u := s.Usage
		out["usage"] = obj{"input_tokens": u.PromptTokens, "input_tokens_details": obj{"cached_tokens": 0},
			"output_tokens": u.CompletionTokens, "output_tokens_details": obj{"reasoning_tokens": 0},
			"total_tokens": u.TotalTokens}
		if s.Status == events.ResponseStatusCompleted {
			out["completed_at"] = s.CompletedAt.Unix()
		}
	}
	switch s.Status {
	case events.ResponseStatusFailed:
		out["error"] = obj{"code": s.ErrorCode, "message": s.ErrorMessage}
	case events.ResponseStatusIncomplete:
		out["incomplete_details"] = obj{"reason": s.IncompleteReason}
	}
	return out
}

// withDefaults is a request's object as the response echoes it: the fields it gave over the defaults, so that a
// field the specification requires (reasoning's summary beside its effort) is there even when the request left it
// out. A field given as null keeps its default.
func withDefaults(raw json.RawMessage, defaults obj) obj {
	var given map[string]json.RawMessage
	if json.Unmarshal(raw, &given) != nil {
		return defaults
	}
	for k, v := range given {
		if string(v) != "null" {
			defaults[k] = v
		}
	}
	return defaults
}

func wireTools(tools []events.ResponseTool) []obj {
	out := make([]obj, 0, len(tools))
	for _, t := range tools {
		switch t.Type {
		case "function":
			o := obj{"type": "function", "name": t.Name, "description": nil, "parameters": nil, "strict": true}
			if t.Description != "" {
				o["description"] = t.Description
			}
			if len(t.Parameters) > 0 {
				o["parameters"] = t.Parameters
			}
			if t.Strict != nil {
				o["strict"] = *t.Strict
			}
			out = append(out, o)
		case "file_search":
			o := obj{"type": "file_search", "vector_store_ids": t.VectorStoreIDs, "filters": nil,
				"max_num_results": 20, "ranking_options": obj{"ranker": "auto", "score_threshold": 0}}
			if len(t.Filters) > 0 {
				o["filters"] = t.Filters
			}
			if t.MaxNumResults > 0 {
				o["max_num_results"] = t.MaxNumResults
			}
			if len(t.RankingOptions) > 0 {
				o["ranking_options"] = t.RankingOptions
			}
			out = append(out, o)
		case "code_interpreter":
			out = append(out, obj{"type": "code_interpreter", "container": t.Container})
		case "mcp":
			// headers are never shown back: the request's are sealed in the log
			o := obj{"type": "mcp", "server_label": t.ServerLabel, "server_url": t.ServerURL, "allowed_tools": nil,
				"require_approval": "always", "headers": nil, "server_description": nil}
			if len(t.AllowedTools) > 0 {
				o["allowed_tools"] = t.AllowedTools
			}
			if len(t.RequireApproval) > 0 {
				o["require_approval"] = t.RequireApproval
			}
			if t.ServerDescription != "" {
				o["server_description"] = t.ServerDescription
			}
			out = append(out, o)
		default:
			out = append(out, obj{"type": t.Type})
		}
	}
	return out
}

func wireItems(items []events.Item, include []string) []obj {
	out := make([]obj, 0, len(items))
	for _, it := range items {
		out = append(out, wireItem(it, include))
	}
	return out
}

// wireItem is an item in OpenAI's shape, every field its type requires present.
func wireItem(it events.Item, include []string) obj {
	status := it.Status
	if status == "" {
		status = events.ResponseStatusCompleted
	}
	switch it.Type {
	case "message":
		content := make([]obj, 0, len(it.Content))
		for _, c := range it.Content {
			content = append(content, wirePart(c))
		}
		return obj{"type": "message", "id": it.ID, "status": status, "role": it.Role, "content": content}
	case "function_call":
		return obj{"type": "function_call", "id": it.ID, "call_id": it.CallID, "name": it.Name, "arguments": it.Arguments, "status": status}
	case "function_call_output":
		return obj{"type": "function_call_output", "id": it.ID, "call_id": it.CallID, "output": it.Output, "status": status}
	case "file_search_call":
		o := obj{"type": "file_search_call", "id": it.ID, "status": status, "queries": nonNil(it.Queries), "results": nil}
		if slices.Contains(include, "file_search_call.results") {
			res := make([]obj, 0, len(it.Results))
			for _, r := range it.Results {
				res = append(res, obj{"file_id": r.FileID, "filename": r.FileName, "score": r.Score, "text": r.Text, "attributes": obj{}})
			}
			o["results"] = res
		}
		return o
	case "code_interpreter_call":
		o := obj{"type": "code_interpreter_call", "id": it.ID, "status": status, "code": it.Code, "container_id": it.ContainerID, "outputs": nil}
		if slices.Contains(include, "code_interpreter_call.outputs") {
			outs := make([]obj, 0, len(it.Outputs))
			for _, c := range it.Outputs {
				if c.Type == "logs" {
					outs = append(outs, obj{"type": "logs", "logs": c.Logs})
				} else {
					outs = append(outs, obj{"type": "image", "url": "/v1/files/" + c.FileID + "/content"})
				}
			}
			o["outputs"] = outs
		}
		return o
	case "item_reference":
		return obj{"type": "item_reference", "id": it.ID}
	case compaction.ItemType:
		return obj{"type": compaction.ItemType, "id": it.ID, "encrypted_content": it.EncryptedContent}
	case "mcp_list_tools":
		tools := json.RawMessage(`[]`)
		if len(it.Tools) > 0 {
			tools = it.Tools
		}
		o := obj{"type": "mcp_list_tools", "id": it.ID, "server_label": it.ServerLabel, "tools": tools, "error": nil}
		if it.Error != "" {
			o["error"] = it.Error
		}
		return o
	case "mcp_call":
		o := obj{"type": "mcp_call", "id": it.ID, "server_label": it.ServerLabel, "name": it.Name, "arguments": it.Arguments,
			"output": nil, "error": nil, "status": status, "approval_request_id": nil}
		var text string
		if len(it.Output) > 0 && json.Unmarshal(it.Output, &text) == nil {
			o["output"] = text
		}
		if it.Error != "" {
			o["error"] = it.Error
		}
		if it.ApprovalRequestID != "" {
			o["approval_request_id"] = it.ApprovalRequestID
		}
		return o
	case "mcp_approval_request":
		return obj{"type": "mcp_approval_request", "id": it.ID, "server_label": it.ServerLabel, "name": it.Name, "arguments": it.Arguments}
	case "mcp_approval_response":
		o := obj{"type": "mcp_approval_response", "id": it.ID, "approval_request_id": it.ApprovalRequestID, "approve": it.Approve != nil && *it.Approve, "reason": nil}
		if it.Reason != "" {
			o["reason"] = it.Reason
		}
		return o
	}
	return obj{"type": it.Type, "id": it.ID, "status": status}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func wirePart(c events.ItemContent) obj {
	switch c.Type {
	case "output_text":
		return obj{"type": "output_text", "text": c.Text, "annotations": wireAnnotations(c.Annotations), "logprobs": []any{}}
	case "input_text":
		return obj{"type": "input_text", "text": c.Text}
	case "refusal":
		return obj{"type": "refusal", "refusal": c.Refusal}
	case "input_image":
		o := obj{"type": "input_image", "detail": "auto", "file_id": nil, "image_url": nil}
		if c.Detail != "" {
			o["detail"] = c.Detail
		}
		if c.FileID != "" {
			o["file_id"] = c.FileID
		}
		if c.ImageURL != "" {
			o["image_url"] = c.ImageURL
		}
		return o
	case "input_file":
		o := obj{"type": "input_file"}
		if c.FileID != "" {
			o["file_id"] = c.FileID
		}
		if c.Filename != "" {
			o["filename"] = c.Filename
		}
		if c.FileURL != "" {
			o["file_url"] = c.FileURL
		}
		return o
	}
	return obj{"type": c.Type, "text": c.Text}
}

func wireAnnotations(as []events.ItemAnnotation) []obj {
	out := make([]obj, 0, len(as))
	for _, a := range as {
		out = append(out, obj{"type": a.Type, "file_id": a.FileID, "filename": a.Filename, "index": a.Index})
	}
	return out
}

// chunks splits text by the recorded lengths of its streamed pieces; a record that does not fit the text (none
// kept) gives the text whole.
func chunks(text string, lengths []int) []string {
	total := 0
	for _, n := range lengths {
		total += n
	}
	if total != len(text) || len(lengths) == 0 {
		if text == "" {
			return nil
		}
		return []string{text}
	}
	out := make([]string, 0, len(lengths))
	at := 0
	for _, n := range lengths {
		piece := text[at : at+n]
		at += n
		if !utf8.ValidString(piece) {
			return []string{text} // pieces are split on runes by every provider; a record that is not is ignored
		}
		out = append(out, piece)
	}
	return out
}
