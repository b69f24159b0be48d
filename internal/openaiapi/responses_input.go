package openaiapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/compaction"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
)

// newResponse is a POST /v1/responses request read and checked.
type newResponse struct {
	events.ResponseCreated
	Stream bool
}

// includeValues are the include values the API defines; the face accepts them all and honours those it can.
var includeValues = []string{"file_search_call.results", "code_interpreter_call.outputs", "message.output_text.logprobs",
	"reasoning.encrypted_content", "message.input_image.image_url", "computer_call_output.output.image_url",
	"web_search_call.action.sources", "web_search_call.results"}

// checkInclude refuses an include value the API does not define, naming it: a value silently ignored would be
// an answer without what the client asked for, and no word why.
func checkInclude(values []string) error {
	for i, v := range values {
		if !slices.Contains(includeValues, v) {
			return errs.InvalidField(fmt.Sprintf("include[%d]", i), "Invalid value: '%s'.", clip(v))
		}
	}
	return nil
}

// includeQuery is the include values a read's query asks for (include or include[], repeated), checked.
func includeQuery(r *http.Request) ([]string, error) {
	values := queryList(r, "include")
	return values, checkInclude(values)
}

// readNewResponse reads a create request. Fields the API has and Contrail ignores are accepted; fields it does
// not know are ignored, as OpenAI ignores them (the Agents SDK sends some of its own).
func (f *Face) readNewResponse(r *http.Request) (newResponse, error) {
	in, err := readFields(r)
	if err != nil {
		return newResponse{}, err
	}
	return f.decodeNewResponse(r, in)
}

// decodeNewResponse reads a create request's fields, from a POST's body or a WebSocket's response.create message;
// r is the request that carries the caller (the POST, or the socket's upgrade).
func (f *Face) decodeNewResponse(r *http.Request, in fields) (newResponse, error) {
	var out newResponse
	rq := &out.ResponseCreated
	if err := f.readAsked(r, in, rq); err != nil {
		return out, err
	}
	if err := readSampling(in, rq); err != nil {
		return out, err
	}
	if err := readResponseContext(in, rq, &out.Stream); err != nil {
		return out, err
	}
	if err := readResponseExtras(in, rq); err != nil {
		return out, err
	}
	return out, nil
}

// readAsked reads what the model is asked: the model, the instructions, the input, the tools and the text format.
func (f *Face) readAsked(r *http.Request, in fields, rq *events.ResponseCreated) (err error) {
	if rq.Model, err = in.str("model"); err != nil {
		return err
	}
	if rq.Model == "" {
		return errs.Missing("model")
	}
	if f.d.Models != nil {
		if _, _, err := f.d.Models.Resolve(rq.Model); err != nil {
			return errs.InvalidField("model", "The requested model '%s' does not exist.", clip(rq.Model))
		}
	}
	if rq.Instructions, err = in.str("instructions"); err != nil {
		return err
	}
	if rq.Input, err = readInput(in); err != nil {
		return err
	}
	if rq.Tools, err = f.readResponseTools(r, in); err != nil {
		return err
	}
	if rq.ToolChoice, err = readToolChoice(in, rq.Tools); err != nil {
		return err
	}
	rq.ParallelToolCalls = true
	if _, err := get(in, "parallel_tool_calls", &rq.ParallelToolCalls); err != nil {
		return err
	}
	if rq.Text, err = readTextConfig(in); err != nil {
		return err
	}
	return nil
}

// readSampling reads the model's settings: temperature, top_p and the bounds on its output and tool calls.
func readSampling(in fields, rq *events.ResponseCreated) (err error) {
	if rq.Temperature, err = in.optFloat("temperature"); err != nil {
		return err
	}
	if t := rq.Temperature; t != nil && (*t < 0 || *t > 2) {
		return errs.InvalidField("temperature", "Invalid 'temperature': expected a value between 0 and 2, but got %g instead.", *t)
	}
	if rq.TopP, err = in.optFloat("top_p"); err != nil {
		return err
	}
	if t := rq.TopP; t != nil && (*t < 0 || *t > 1) {
		return errs.InvalidField("top_p", "Invalid 'top_p': expected a value between 0 and 1, but got %g instead.", *t)
	}
	if rq.MaxOutputTokens, err = in.optInt("max_output_tokens"); err != nil {
		return err
	}
	if m := rq.MaxOutputTokens; m != nil && *m < 1 {
		return errs.InvalidField("max_output_tokens", "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 1, but got %d instead.", *m)
	}
	if rq.MaxToolCalls, err = in.optInt("max_tool_calls"); err != nil {
		return err
	}
	if m := rq.MaxToolCalls; m != nil && *m < 1 {
		return errs.InvalidField("max_tool_calls", "Invalid 'max_tool_calls': integer below minimum value. Expected a value >= 1, but got %d instead.", *m)
	}
	return checkUnused(in)
}

// checkUnused checks the settings the API defines and Contrail does not pass on to the model (the penalties,
// top_logprobs) or keep (safety_identifier, prompt_cache_key): a wrong type or range is a 400 naming the field, as
// OpenAI answers it; a right one is accepted, and the response says what was used (0, null).
func checkUnused(in fields) error {
	for _, name := range []string{"presence_penalty", "frequency_penalty"} {
		v, err := in.optFloat(name)
		if err != nil {
			return err
		}
		if v != nil && (*v < -2 || *v > 2) {
			return errs.InvalidField(name, "Invalid '%s': expected a value between -2 and 2, but got %g instead.", name, *v)
		}
	}
	n, err := in.optInt("top_logprobs")
	if err != nil {
		return err
	}
	if n != nil && (*n < 0 || *n > 20) {
		return errs.InvalidField("top_logprobs", "Invalid 'top_logprobs': expected a value between 0 and 20, but got %d instead.", *n)
	}
	for _, name := range []string{"safety_identifier", "prompt_cache_key"} {
		if _, err := in.str(name); err != nil {
			return err
		}
	}
	return nil
}

// readResponseContext reads what the response is kept with and how it is answered: metadata, the previous response
// or the conversation it follows, store, background and stream.
func readResponseContext(in fields, rq *events.ResponseCreated, stream *bool) (err error) {
	if rq.Metadata, err = in.metadata("metadata"); err != nil {
		return err
	}
	if rq.PreviousResponseID, err = in.str("previous_response_id"); err != nil {
		return err
	}
	if rq.PreviousResponseID != "" {
		if err := ids.Check("previous_response_id", ids.Response, rq.PreviousResponseID); err != nil {
			return err
		}
	}
	if rq.ConversationID, err = readConversationRef(in); err != nil {
		return err
	}
	if rq.PreviousResponseID != "" && rq.ConversationID != "" {
		return errs.InvalidField("conversation", "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.")
	}
	rq.Store = true
	if _, err := get(in, "store", &rq.Store); err != nil {
		return err
	}
	if _, err := get(in, "background", &rq.Background); err != nil {
		return err
	}
	if rq.Background && !rq.Store {
		return errs.InvalidField("background", "Background mode requires 'store' to be true.")
	}
	if _, err := get(in, "stream", stream); err != nil {
		return err
	}
	return nil
}

// readResponseExtras reads truncation, include, and the fields accepted and echoed (reasoning, user, service_tier);
// a prompt object is refused.
func readResponseExtras(in fields, rq *events.ResponseCreated) (err error) {
	if rq.Truncation, err = in.str("truncation"); err != nil {
		return err
	}
	switch rq.Truncation {
	case "", "disabled", "auto":
	default:
		return errs.InvalidField("truncation", "Invalid value: '%s'. Supported values are: 'auto' and 'disabled'.", clip(rq.Truncation))
	}
	if _, err := get(in, "include", &rq.Include); err != nil {
		return err
	}
	if err := checkInclude(rq.Include); err != nil {
		return err
	}
	if rq.Reasoning, err = in.raw("reasoning", false); err != nil {
		return err
	}
	if rq.User, err = in.str("user"); err != nil {
		return err
	}
	if rq.ServiceTier, err = in.str("service_tier"); err != nil {
		return err
	}
	if in.has("prompt") && !in.null("prompt") {
		return errs.InvalidField("prompt", "Prompt objects are not supported; send instructions and input instead.")
	}
	return nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// readConversationRef reads conversation: an ID or {id}.
func readConversationRef(in fields) (string, error) {
	raw, err := in.raw("conversation", true)
	if err != nil || raw == nil {
		return "", err
	}
	var id string
	if raw[0] == '{' {
		var o struct {
			ID string `json:"id"`
		}
		if err := decodeValue(raw, "conversation", &o); err != nil {
			return "", err
		}
		if err := ids.Check("conversation.id", ids.Conversation, o.ID); err != nil {
			return "", err
		}
		return o.ID, nil
	}
	if err := decodeValue(raw, "conversation", &id); err != nil {
		return "", err
	}
	return id, ids.Check("conversation", ids.Conversation, id)
}

// readInput reads input: a string (one user message) or a list of items.
func readInput(in fields) ([]events.Item, error) {
	raw, ok := in.m["input"]
	if !ok || in.null("input") {
		return nil, nil
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] == '"' {
		var s string
		if err := decodeValue(raw, "input", &s); err != nil {
			return nil, err
		}
		return []events.Item{userMessage(s)}, nil
	}
	if raw[0] != '[' {
		return nil, errs.InvalidField("input", "Invalid type for 'input': expected a string or an array of input items.")
	}
	return readItems(raw, "input")
}

func userMessage(text string) events.Item {
	return events.Item{Type: "message", Role: "user", Content: []events.ItemContent{{Type: "input_text", Text: text}}}
}

// maxItemText bounds one text of an item.
const maxItemText = 1 << 20

// wireInItem is an input item as clients send it: every field any item type has, each optional.
type wireInItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Status    string          `json:"status"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Queries   []string        `json:"queries"`
	Code      string          `json:"code"`
	Container string          `json:"container_id"`
	// the mcp items
	ServerLabel       string          `json:"server_label"`
	Tools             json.RawMessage `json:"tools"`
	Error             *string         `json:"error"`
	ApprovalRequestID string          `json:"approval_request_id"`
	Approve           *bool           `json:"approve"`
	Reason            *string         `json:"reason"`
	EncryptedContent  string          `json:"encrypted_content"`
}

// readItems reads a list of items (input, a conversation's items).
func readItems(raw json.RawMessage, param string) ([]events.Item, error) {
	var raws []json.RawMessage
	if err := decodeValue(raw, param, &raws); err != nil {
		return nil, err
	}
	out := make([]events.Item, 0, len(raws))
	for i, r := range raws {
		at := fmt.Sprintf("%s[%d]", param, i)
		var w wireInItem
		if err := decodeValue(r, at, &w); err != nil {
			return nil, err
		}
		it, err := w.item(at)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

func (w wireInItem) item(at string) (events.Item, error) {
	it := events.Item{Type: w.Type, ID: w.ID, Status: w.Status}
	if it.Type == "" && w.Role != "" {
		it.Type = "message"
	}
	switch it.Type {
	case "message":
		switch w.Role {
		case "user", "assistant", "system", "developer":
		case "":
			return it, errs.Missing(at + ".role")
		default:
			return it, errs.InvalidField(at+".role", "Invalid value: '%s'. Supported values are: 'assistant', 'system', 'developer', and 'user'.", clip(w.Role))
		}
		it.Role = w.Role
		content, err := readContent(w.Content, at+".content", w.Role)
		if err != nil {
			return it, err
		}
		it.Content = content
		if it.Status == "" {
			it.Status = events.ResponseStatusCompleted
		}
	case "function_call":
		if w.CallID == "" {
			return it, errs.Missing(at + ".call_id")
		}
		if w.Name == "" {
			return it, errs.Missing(at + ".name")
		}
		it.CallID, it.Name, it.Arguments = w.CallID, w.Name, w.Arguments
		if it.Status == "" {
			it.Status = events.ResponseStatusCompleted
		}
	case "function_call_output":
		if w.CallID == "" {
			return it, errs.Missing(at + ".call_id")
		}
		o := bytes.TrimSpace(w.Output)
		if len(o) == 0 || string(o) == "null" {
			return it, errs.Missing(at + ".output")
		}
		if o[0] != '"' && o[0] != '[' {
			return it, errs.InvalidField(at+".output", "Invalid type for '%s.output': expected a string or an array.", at)
		}
		if len(o) > maxItemText {
			return it, errs.InvalidField(at+".output", "'%s.output' is longer than %d bytes", at, maxItemText)
		}
		it.CallID, it.Output = w.CallID, o
		if it.Status == "" {
			it.Status = events.ResponseStatusCompleted
		}
	case "item_reference":
		if err := ids.Check(at+".id", ids.Token, w.ID); err != nil {
			return it, err
		}
	case "file_search_call":
		it.Queries = w.Queries
	case "code_interpreter_call":
		it.Code, it.ContainerID = w.Code, w.Container
	case "mcp_approval_response":
		if err := ids.Check(at+".approval_request_id", ids.Token, w.ApprovalRequestID); err != nil {
			return it, err
		}
		if w.Approve == nil {
			return it, errs.Missing(at + ".approve")
		}
		it.ApprovalRequestID, it.Approve = w.ApprovalRequestID, w.Approve
		if w.Reason != nil {
			it.Reason = clip(*w.Reason)
		}
	case "mcp_list_tools", "mcp_call", "mcp_approval_request":
		// items of an earlier response a client sends back: kept as they were, so the model sees the calls and a
		// follow-up does not list the tools again.
		it.ServerLabel, it.Tools, it.Name, it.Arguments, it.ApprovalRequestID = w.ServerLabel, w.Tools, w.Name, w.Arguments, w.ApprovalRequestID
		if o := bytes.TrimSpace(w.Output); len(o) > 0 && string(o) != "null" {
			it.Output = o
		}
		if w.Error != nil {
			it.Error = *w.Error
		}
	case compaction.ItemType:
		// opened (and refused when not ours) where the account is known: Face.openCompactions
		if w.EncryptedContent == "" {
			return it, errs.Missing(at + ".encrypted_content")
		}
		if len(w.EncryptedContent) > 2*compaction.MaxSummary {
			return it, errs.InvalidField(at+".encrypted_content", "'%s.encrypted_content' is longer than %d bytes", at, 2*compaction.MaxSummary)
		}
		it.EncryptedContent = w.EncryptedContent
	case "":
		return it, errs.Missing(at + ".type")
	default:
		// reasoning and other items the Agents SDK re-sends: kept by type, not shown to the model.
		if !ids.Valid(ids.Token, it.Type) {
			return it, errs.InvalidField(at+".type", "Invalid value for '%s.type'.", at)
		}
	}
	return it, nil
}

// wireInPart is a content part as clients send it.
type wireInPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL string `json:"image_url"`
	FileID   string `json:"file_id"`
	FileURL  string `json:"file_url"`
	FileData string `json:"file_data"`
	Filename string `json:"filename"`
	Detail   string `json:"detail"`
	Refusal  string `json:"refusal"`
}

// readContent reads a message's content: a string, or a list of parts. Assistant messages re-sent by a client
// carry output_text parts (with annotations and whatever else it kept): their text is what counts.
func readContent(raw json.RawMessage, at, role string) ([]events.ItemContent, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errs.Missing(at)
	}
	textType := "input_text"
	if role == "assistant" {
		textType = "output_text"
	}
	if raw[0] == '"' {
		var s string
		if err := decodeValue(raw, at, &s); err != nil {
			return nil, err
		}
		if len(s) > maxItemText {
			return nil, errs.InvalidField(at, "'%s' is longer than %d bytes", at, maxItemText)
		}
		return []events.ItemContent{{Type: textType, Text: s}}, nil
	}
	var parts []json.RawMessage
	if err := decodeValue(raw, at, &parts); err != nil {
		return nil, errs.InvalidField(at, "Invalid type for '%s': expected a string or an array of content parts.", at)
	}
	out := make([]events.ItemContent, 0, len(parts))
	for i, pr := range parts {
		pat := fmt.Sprintf("%s[%d]", at, i)
		var p wireInPart
		if err := decodeValue(pr, pat, &p); err != nil {
			return nil, err
		}
		if len(p.Text) > maxItemText {
			return nil, errs.InvalidField(pat+".text", "'%s.text' is longer than %d bytes", pat, maxItemText)
		}
		switch p.Type {
		case "input_text", "output_text", "text":
			if p.Type == "text" {
				p.Type = textType
			}
			out = append(out, events.ItemContent{Type: p.Type, Text: p.Text})
		case "refusal":
			out = append(out, events.ItemContent{Type: p.Type, Refusal: p.Refusal})
		case "input_image":
			if err := checkURL(pat+".image_url", p.ImageURL, maxImageURL); err != nil {
				return nil, err
			}
			if p.ImageURL == "" && p.FileID == "" {
				return nil, errs.InvalidField(pat+".image_url", "Invalid '%s': an input_image needs an image_url or a file_id.", pat)
			}
			switch p.Detail {
			case "", "auto", "low", "high", "original":
			default:
				return nil, errs.InvalidField(pat+".detail", "Invalid value: '%s'. Supported values are: 'low', 'high', 'auto' and 'original'.", clip(p.Detail))
			}
			out = append(out, events.ItemContent{Type: p.Type, ImageURL: p.ImageURL, FileID: p.FileID, Detail: p.Detail})
		case "input_file":
			// The model is shown a file's text, read from the caller's file (handlers/responder readFiles). A file by
			// URL would be fetched from anywhere, and one inline would ride in the response's event: refused, so
			// that no file is taken and then not shown.
			switch {
			case p.FileURL != "":
				return nil, errs.InvalidField(pat+".file_url", "Invalid '%s.file_url': input files by URL are not supported on this server; upload the file (POST /v1/files) and give its file_id.", pat)
			case p.FileData != "":
				return nil, errs.InvalidField(pat+".file_data", "Invalid '%s.file_data': inline input files are not supported on this server; upload the file (POST /v1/files) and give its file_id.", pat)
			case p.FileID == "":
				return nil, errs.Missing(pat + ".file_id")
			}
			out = append(out, events.ItemContent{Type: p.Type, FileID: p.FileID, Filename: p.Filename})
		case "":
			return nil, errs.Missing(pat + ".type")
		default:
			return nil, errs.InvalidField(pat+".type", "Invalid value: '%s'. Supported values are: 'input_text', 'input_image', 'input_file', 'output_text' and 'refusal'.", clip(p.Type))
		}
		if id := out[len(out)-1].FileID; id != "" {
			if err := ids.Check(pat+".file_id", ids.File, id); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// An image's URL is kept whole in the response's first event, as the model is to be sent it: a data URL clipped
// would be a broken image. Its bound leaves room in the event (at most 1 MiB, JetStream's default max_payload) for
// the rest of the request.
const maxImageURL = 512 << 10

// checkURL refuses a URL longer than max, naming the parameter.
func checkURL(param, u string, max int) error {
	if len(u) > max {
		return errs.InvalidField(param, "Invalid '%s': at most %d bytes on this server, got %d.", param, max, len(u))
	}
	return nil
}

// readResponseTools reads tools: function tools always, server tools this node can run.
func (f *Face) readResponseTools(r *http.Request, in fields) ([]events.ResponseTool, error) {
	raws, ok, err := list[json.RawMessage](in, "tools")
	if err != nil || !ok {
		return nil, err
	}
	out := make([]events.ResponseTool, 0, len(raws))
	names := map[string]bool{}
	labels := map[string]bool{}
	for i, raw := range raws {
		at := fmt.Sprintf("tools[%d]", i)
		var t events.ResponseTool
		if err := decodeValue(raw, at, &t); err != nil {
			return nil, err
		}
		switch t.Type {
		case "function":
			if err := ids.CheckName(at+".name", t.Name, 64); err != nil {
				return nil, err
			}
			if !ids.Valid(ids.Token, t.Name) {
				return nil, errs.InvalidField(at+".name", "Invalid '%s.name': a function name is letters, digits, '_' and '-'.", at)
			}
			if names[t.Name] {
				return nil, errs.InvalidField(at+".name", "Duplicate function name '%s'.", t.Name)
			}
			names[t.Name] = true
			if p := bytes.TrimSpace(t.Parameters); len(p) > 0 && string(p) != "null" && p[0] != '{' {
				return nil, errs.InvalidField(at+".parameters", "Invalid type for '%s.parameters': expected an object.", at)
			}
		case "file_search":
			if len(t.VectorStoreIDs) == 0 {
				return nil, errs.Missing(at + ".vector_store_ids")
			}
			for j, id := range t.VectorStoreIDs {
				if err := ids.Check(fmt.Sprintf("%s.vector_store_ids[%d]", at, j), ids.VectorStore, id); err != nil {
					return nil, err
				}
			}
			if t.MaxNumResults < 0 || t.MaxNumResults > 50 {
				return nil, errs.InvalidField(at+".max_num_results", "Invalid '%s.max_num_results': expected a value between 1 and 50.", at)
			}
			// Checked here, as a vector store search checks them: found wrong only when the model searched, a
			// filter would fail the search inside a completed response, and wrong-typed options would be ignored.
			if f := bytes.TrimSpace(t.Filters); len(f) > 0 && string(f) != "null" {
				if _, err := docindex.ParseFilter(t.Filters, at+".filters"); err != nil {
					return nil, err
				}
			}
			if o := bytes.TrimSpace(t.RankingOptions); len(o) > 0 && string(o) != "null" {
				var ranking struct {
					rankingOptions
					HybridSearch *hybridSearch `json:"hybrid_search"`
				}
				if err := decodeValue(t.RankingOptions, at+".ranking_options", &ranking); err != nil {
					return nil, err
				}
				if err := ranking.check(at + ".ranking_options"); err != nil {
					return nil, err
				}
				if err := ranking.HybridSearch.check(at + ".ranking_options.hybrid_search"); err != nil {
					return nil, err
				}
			}
			if !f.d.ResponseTools[t.Type] {
				return nil, errs.InvalidField(at+".type", "The file_search tool is not available on this server.")
			}
		case "code_interpreter":
			if len(t.Container) == 0 {
				return nil, errs.Missing(at + ".container")
			}
			if !f.d.ResponseTools[t.Type] {
				return nil, errs.InvalidField(at+".type", "The code_interpreter tool is not available on this server (no sandbox).")
			}
			if err := f.checkContainer(r, at, t); err != nil {
				return nil, err
			}
		case "mcp":
			if err := f.readMCPTool(raw, at, principal(r).AccountID, &t, labels); err != nil {
				return nil, err
			}
		case "":
			return nil, errs.Missing(at + ".type")
		default:
			return nil, errs.InvalidField(at+".type", "Tool type '%s' is not supported. Supported values are: 'function', 'file_search' and 'code_interpreter'.", clip(t.Type))
		}
		out = append(out, t)
	}
	return out, nil
}

// hybridSearch is a file_search tool's ranking_options.hybrid_search: how a search weighs embedding matches against
// keyword matches.
type hybridSearch struct {
	EmbeddingWeight *float64 `json:"embedding_weight"`
	TextWeight      *float64 `json:"text_weight"`
}

// check takes the weights this server searches with, equal ones (vsindex weighs the two halves alike): other
// weights would be taken and not applied, so they are refused, naming the field. None given is nothing to check.
func (h *hybridSearch) check(at string) error {
	if h == nil {
		return nil
	}
	switch {
	case h.EmbeddingWeight == nil:
		return errs.Missing(at + ".embedding_weight")
	case h.TextWeight == nil:
		return errs.Missing(at + ".text_weight")
	case *h.EmbeddingWeight <= 0 || *h.TextWeight <= 0 || *h.EmbeddingWeight != *h.TextWeight:
		return errs.InvalidField(at, "Invalid '%s': this server weighs embedding and text matches equally; give equal positive weights or leave hybrid_search out.", at)
	}
	return nil
}

// readToolChoice reads tool_choice: its JSON types here, so that a wrong one is named as OpenAI names it, then what
// it means against the tools (response.ToolChoiceOf, which the model loop reads it with too).
func readToolChoice(in fields, tools []events.ResponseTool) (json.RawMessage, error) {
	raw, err := in.raw("tool_choice", true)
	if err != nil || raw == nil {
		return nil, err
	}
	if raw[0] == '"' {
		var s string
		err = decodeValue(raw, "tool_choice", &s)
	} else {
		var o response.ToolChoiceObject
		err = decodeValue(raw, "tool_choice", &o)
	}
	if err != nil {
		return nil, err
	}
	if _, err := response.ToolChoiceOf(raw, tools); err != nil {
		return nil, err
	}
	return raw, nil
}

// readTextConfig reads text: {format: {type: text | json_object | json_schema {name, schema, strict}}, verbosity}.
func readTextConfig(in fields) (json.RawMessage, error) {
	raw, err := in.raw("text", false)
	if err != nil || raw == nil {
		return nil, err
	}
	var t struct {
		Format *struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"format"`
		Verbosity string `json:"verbosity"`
	}
	if err := decodeValue(raw, "text", &t); err != nil {
		return nil, err
	}
	if t.Format != nil {
		switch t.Format.Type {
		case "text", "json_object":
		case "json_schema":
			if t.Format.Name == "" {
				return nil, errs.Missing("text.format.name")
			}
			if s := bytes.TrimSpace(t.Format.Schema); len(s) == 0 || s[0] != '{' {
				return nil, errs.InvalidField("text.format.schema", "Invalid type for 'text.format.schema': expected an object.")
			}
		case "":
			return nil, errs.Missing("text.format.type")
		default:
			return nil, errs.InvalidField("text.format.type", "Invalid value: '%s'. Supported values are: 'text', 'json_object' and 'json_schema'.", clip(t.Format.Type))
		}
	}
	return raw, nil
}

// readMCPTool reads an mcp tool: server_label (unique among the request's), server_url (one of the hosts this
// node may call: a refusal names tools[i].server_url and no request is made), allowed_tools, require_approval, and
// headers, sealed here for the account and server_url so that no event holds them in clear.
func (f *Face) readMCPTool(raw json.RawMessage, at, account string, t *events.ResponseTool, labels map[string]bool) error {
	var w struct {
		ConnectorID     string            `json:"connector_id"`
		Authorization   string            `json:"authorization"`
		Headers         map[string]string `json:"headers"`
		AllowedTools    json.RawMessage   `json:"allowed_tools"`
		RequireApproval json.RawMessage   `json:"require_approval"`
	}
	if err := decodeValue(raw, at, &w); err != nil {
		return err
	}
	if f.d.MCP == nil {
		return errs.InvalidField(at+".type", "The mcp tool is not available on this server.")
	}
	if w.ConnectorID != "" {
		return errs.InvalidField(at+".connector_id", "Connectors are not supported: give a server_url.")
	}
	if t.ServerLabel == "" {
		return errs.Missing(at + ".server_label")
	}
	if !ids.Valid(ids.Token, t.ServerLabel) || len(t.ServerLabel) > 64 {
		return errs.InvalidField(at+".server_label", "Invalid '%s.server_label': letters, digits, '_' and '-', at most 64.", at)
	}
	if labels[t.ServerLabel] {
		return errs.InvalidField(at+".server_label", "Duplicate server_label '%s'.", t.ServerLabel)
	}
	labels[t.ServerLabel] = true
	if t.ServerURL == "" {
		return errs.Missing(at + ".server_url")
	}
	if err := f.d.MCP.Check(at+".server_url", t.ServerURL); err != nil {
		return err
	}
	if _, err := mcpNames(w.AllowedTools, at+".allowed_tools", true); err != nil {
		return err
	}
	if err := checkRequireApproval(w.RequireApproval, at+".require_approval"); err != nil {
		return err
	}
	t.AllowedTools, t.RequireApproval = w.AllowedTools, w.RequireApproval
	if w.Authorization != "" {
		if w.Headers == nil {
			w.Headers = map[string]string{}
		}
		w.Headers["Authorization"] = "Bearer " + w.Authorization
	}
	if len(w.Headers) > 0 {
		sealed, err := f.d.MCP.SealHeaders(account, t.ServerURL, w.Headers)
		if err != nil {
			return err
		}
		t.SealedHeaders = sealed
	}
	return nil
}

// mcpNames reads a list of tool names, or {tool_names: [...]}; nil when not given.
func mcpNames(raw json.RawMessage, at string, allowObjectOnly bool) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var names []string
	if raw[0] == '{' && allowObjectOnly {
		var o struct {
			ToolNames []string `json:"tool_names"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return nil, errs.InvalidField(at, "Invalid '%s': expected a list of tool names or {tool_names: [...]}.", at)
		}
		names = o.ToolNames
	} else if err := json.Unmarshal(raw, &names); err != nil {
		return nil, errs.InvalidField(at, "Invalid '%s': expected a list of tool names or {tool_names: [...]}.", at)
	}
	if names == nil {
		names = []string{}
	}
	return names, nil
}

// checkRequireApproval reads require_approval: "always", "never", or {always: {tool_names}, never: {tool_names}}.
func checkRequireApproval(raw json.RawMessage, at string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s != "always" && s != "never" {
			return errs.InvalidField(at, "Invalid value for '%s': expected 'always', 'never' or an object.", at)
		}
		return nil
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal(raw, &o); err != nil {
		return errs.InvalidField(at, "Invalid value for '%s': expected 'always', 'never' or an object.", at)
	}
	for k, v := range o {
		if k != "always" && k != "never" {
			return errs.InvalidField(at+"."+clip(k), "Unknown parameter: '%s.%s'.", at, clip(k))
		}
		if _, err := mcpNames(v, at+"."+k, true); err != nil {
			return err
		}
	}
	return nil
}
