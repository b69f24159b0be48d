package events

import "encoding/json"

// Response events (the OpenAI Responses API). A response is one aggregate: the request that created it, the items
// its model loop produced (each an event, committed before the response is said to be done), and its end. The
// loop that drives it is a consumer of these events (handlers/responder), so a response survives the loss of the
// node that served its request.
//
// Status moves queued (background only) -> in_progress -> completed | incomplete | failed | cancelled.

// Response statuses, as OpenAI names them.
const (
	ResponseStatusQueued     = "queued"
	ResponseStatusInProgress = "in_progress"
	ResponseStatusCompleted  = "completed"
	ResponseStatusIncomplete = "incomplete"
	ResponseStatusFailed     = "failed"
	ResponseStatusCancelled  = "cancelled"
)

// Item is an item of the Responses and Conversations APIs, in OpenAI's JSON: a message, a function call or its
// output, a file_search or code_interpreter call, an item_reference. Only the fields of its type are set.
type Item struct {
	Type   string `json:"type"`
	ID     string `json:"id,omitempty"`
	Status string `json:"status,omitempty"`
	// message
	Role    string        `json:"role,omitempty"`
	Content []ItemContent `json:"content,omitempty"`
	// function_call, function_call_output
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// Output is a function_call_output's output: a JSON string, or an array of content parts.
	Output json.RawMessage `json:"output,omitempty"`
	// file_search_call
	Queries []string           `json:"queries,omitempty"`
	Results []FileSearchResult `json:"results,omitempty"`
	// code_interpreter_call
	Code        string       `json:"code,omitempty"`
	ContainerID string       `json:"container_id,omitempty"`
	Outputs     []CodeOutput `json:"outputs,omitempty"`
	// mcp_list_tools, mcp_call, mcp_approval_request, mcp_approval_response (the mcp tool): the server's label,
	// the tools it listed (each {name, description, input_schema, annotations}), a call's error, the approval
	// request a call or a response answers, and the answer.
	ServerLabel       string          `json:"server_label,omitempty"`
	Tools             json.RawMessage `json:"tools,omitempty"`
	Error             string          `json:"error,omitempty"`
	ApprovalRequestID string          `json:"approval_request_id,omitempty"`
	Approve           *bool           `json:"approve,omitempty"`
	Reason            string          `json:"reason,omitempty"`
	// EncryptedContent is a compaction item's sealed summary as the client sent it (internal/compaction); the
	// item's Content holds the summary opened, which is what the model reads.
	EncryptedContent string `json:"encrypted_content,omitempty"`
	// Chunks are the byte lengths of the pieces in which the model streamed a message's text (or a function call's
	// arguments): a stream synthesised from the log splits the text the same way, so its sequence numbers are the
	// ones the live stream had.
	Chunks []int `json:"chunks,omitempty"`
}

// ItemContent is a part of a message item: input_text, output_text, input_image, input_file or refusal.
type ItemContent struct {
	Type        string           `json:"type"`
	Text        string           `json:"text,omitempty"`
	Annotations []ItemAnnotation `json:"annotations,omitempty"`
	ImageURL    string           `json:"image_url,omitempty"`
	FileID      string           `json:"file_id,omitempty"`
	FileURL     string           `json:"file_url,omitempty"`
	Filename    string           `json:"filename,omitempty"`
	Detail      string           `json:"detail,omitempty"`
	Refusal     string           `json:"refusal,omitempty"`
}

// ItemAnnotation is a citation in an output_text: file_citation (file_id, filename, index: where in the text).
type ItemAnnotation struct {
	Type     string `json:"type"`
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
	Index    int    `json:"index"`
}

// Text joins the item's text parts (input_text, output_text).
func (it Item) Text() string {
	if len(it.Content) == 1 {
		return it.Content[0].Text
	}
	var out string
	for _, c := range it.Content {
		if c.Text == "" {
			continue
		}
		if out != "" {
			out += "\n"
		}
		out += c.Text
	}
	return out
}

// ResponseTool is a tool of a response: a function (Name, Description, Parameters, Strict), file_search
// (VectorStoreIDs, Filters, MaxNumResults, RankingOptions) or code_interpreter (Container).
type ResponseTool struct {
	Type           string          `json:"type"`
	Name           string          `json:"name,omitempty"`
	Description    string          `json:"description,omitempty"`
	Parameters     json.RawMessage `json:"parameters,omitempty"`
	Strict         *bool           `json:"strict,omitempty"`
	VectorStoreIDs []string        `json:"vector_store_ids,omitempty"`
	Filters        json.RawMessage `json:"filters,omitempty"`
	MaxNumResults  int             `json:"max_num_results,omitempty"`
	RankingOptions json.RawMessage `json:"ranking_options,omitempty"`
	Container      json.RawMessage `json:"container,omitempty"`
	// mcp: the server, which of its tools the model may see (AllowedTools: a list of names or {tool_names}), which
	// calls wait for the user's approval (RequireApproval: "always", "never" or {always, never: {tool_names}}).
	// The request's headers (tokens) are never stored in clear: SealedHeaders is them sealed by the node.
	ServerLabel       string          `json:"server_label,omitempty"`
	ServerURL         string          `json:"server_url,omitempty"`
	ServerDescription string          `json:"server_description,omitempty"`
	AllowedTools      json.RawMessage `json:"allowed_tools,omitempty"`
	RequireApproval   json.RawMessage `json:"require_approval,omitempty"`
	SealedHeaders     string          `json:"sealed_headers,omitempty"`
}

// ResponseCreated records a response's request: the new input items (IDs given), and every setting the loop uses.
// The context of previous_response_id or conversation is read when the model is asked, from those aggregates.
type ResponseCreated struct {
	Model              string            `json:"model"`
	Instructions       string            `json:"instructions,omitempty"`
	Input              []Item            `json:"input"`
	Tools              []ResponseTool    `json:"tools,omitempty"`
	ToolChoice         json.RawMessage   `json:"tool_choice,omitempty"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	Text               json.RawMessage   `json:"text,omitempty"`
	Temperature        *float64          `json:"temperature,omitempty"`
	TopP               *float64          `json:"top_p,omitempty"`
	MaxOutputTokens    *int              `json:"max_output_tokens,omitempty"`
	MaxToolCalls       *int              `json:"max_tool_calls,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
	ConversationID     string            `json:"conversation_id,omitempty"`
	Store              bool              `json:"store"`
	Background         bool              `json:"background,omitempty"`
	Truncation         string            `json:"truncation,omitempty"`
	Include            []string          `json:"include,omitempty"`
	Reasoning          json.RawMessage   `json:"reasoning,omitempty"`
	User               string            `json:"user,omitempty"`
	ServiceTier        string            `json:"service_tier,omitempty"`
}

func (ResponseCreated) EventType() string { return "response.created" }

// ResponseStarted puts the response in progress: a loop took it.
type ResponseStarted struct{}

func (ResponseStarted) EventType() string { return "response.started" }

// ResponseItemAdded records one output item, whole. Turn counts the model calls before the one that made it, so
// that a turn done again after a crash finds what it already recorded.
type ResponseItemAdded struct {
	Item  Item        `json:"item"`
	Turn  int         `json:"turn"`
	Usage *TokenUsage `json:"usage,omitempty"`
}

func (ResponseItemAdded) EventType() string { return "response.item_added" }

// ResponseCallStarted records that a server tool's call with effects outside Contrail (an mcp call, code run in a
// sandbox) is about to be made, before it is: Item is the call as its ResponseItemAdded will record it, in_progress,
// with the same ID. A loop driven again after a crash that finds a call started in the current turn and never
// recorded knows it may have run, and records it as interrupted rather than make it a second time.
type ResponseCallStarted struct {
	Item Item `json:"item"`
	Turn int  `json:"turn"`
}

func (ResponseCallStarted) EventType() string { return "response.call_started" }

// ResponseTurnRecorded closes a model call that produced nothing to show (its usage counts) or whose items are
// all recorded: the next turn's number is one more.
type ResponseTurnRecorded struct {
	Turn  int        `json:"turn"`
	Usage TokenUsage `json:"usage"`
	// End, when set, is the status the turn ends the response with ("completed", "incomplete", "failed") and
	// Reason why: the end itself follows once the response's items are in its conversation, so that a loop
	// interrupted in between knows to end it rather than ask the model again.
	End    string `json:"end,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (ResponseTurnRecorded) EventType() string { return "response.turn_recorded" }

// ResponseCompleted ends a response whose items are all recorded.
type ResponseCompleted struct {
	Usage TokenUsage `json:"usage"`
}

func (ResponseCompleted) EventType() string { return "response.completed" }

// ResponseIncomplete ends a response cut short: Reason is "max_output_tokens" (or "max_tool_calls").
type ResponseIncomplete struct {
	Reason string     `json:"reason"`
	Usage  TokenUsage `json:"usage"`
}

func (ResponseIncomplete) EventType() string { return "response.incomplete" }

// ResponseFailed ends a response that could not finish; Code is OpenAI's ("server_error", "rate_limit_exceeded",
// "invalid_prompt").
type ResponseFailed struct {
	Code    string     `json:"code"`
	Message string     `json:"message"`
	Usage   TokenUsage `json:"usage"`
}

func (ResponseFailed) EventType() string { return "response.failed" }

// ResponseCancelled ends a background response the client cancelled.
type ResponseCancelled struct {
	Usage TokenUsage `json:"usage"`
}

func (ResponseCancelled) EventType() string { return "response.cancelled" }

// ResponseDeleted deletes a response: it is no longer retrievable nor a previous_response_id.
type ResponseDeleted struct{}

func (ResponseDeleted) EventType() string { return "response.deleted" }

func responseEvents() []Event {
	return []Event{ResponseCreated{}, ResponseStarted{}, ResponseItemAdded{}, ResponseCallStarted{}, ResponseTurnRecorded{},
		ResponseCompleted{}, ResponseIncomplete{}, ResponseFailed{}, ResponseCancelled{}, ResponseDeleted{}}
}
