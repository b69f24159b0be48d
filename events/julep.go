package events

import (
	"bytes"
	hexenc "encoding/hex"
	"encoding/json"
	"maps"

	"github.com/oklog/ulid/v2"
)

// Julep's objects (seed 004): agents ("jagent", an LLM persona with instructions and tools, not a registry agent),
// users ("juser"), docs ("doc", text snippets of an agent or a user with their vectors), and the Julep side of
// sessions: a Julep session is a session (aggregate "session") whose creation carries a JulepSessionSpec, and whose
// chats are turns recorded as session events. Their IDs are UUIDs, as Julep's are, and as in Julep each account has
// its own: the aggregate of an account's object is JulepAggregateID(account, uuid), so that two accounts that pick
// the same UUID (create-or-update at an ID a program derives) have two objects, and neither learns of the other's.

// JulepAgentSpec is what a Julep agent is made of: the fields of Julep's CreateAgentRequest.
type JulepAgentSpec struct {
	Name  string `json:"name"`
	About string `json:"about,omitempty"`
	Model string `json:"model,omitempty"`
	// Instructions is a JSON string or a JSON list of strings, as the client sent it (templates tell them apart).
	Instructions    json.RawMessage `json:"instructions,omitempty"`
	DefaultSettings json.RawMessage `json:"default_settings,omitempty"`
	// DefaultSystemTemplate is the system template of the agent's sessions that set none; nil: Julep's default.
	DefaultSystemTemplate *string         `json:"default_system_template,omitempty"`
	Metadata              json.RawMessage `json:"metadata,omitempty"`
	CanonicalName         string          `json:"canonical_name,omitempty"`
	Project               string          `json:"project,omitempty"`
}

// JulepAgentCreated makes a Julep agent.
type JulepAgentCreated struct {
	Spec JulepAgentSpec `json:"spec"`
}

func (JulepAgentCreated) EventType() string { return "jagent.created" }

// JulepAgentUpdated replaces the agent's spec with the one it holds: the whole spec after a PATCH (its named
// fields changed, its metadata merged) or a PUT.
type JulepAgentUpdated struct {
	Spec JulepAgentSpec `json:"spec"`
}

func (JulepAgentUpdated) EventType() string { return "jagent.updated" }

// JulepAgentDeleted deletes the agent; its tools go with it.
type JulepAgentDeleted struct{}

func (JulepAgentDeleted) EventType() string { return "jagent.deleted" }

// JulepTool is a tool of an agent or of one chat: a function the client runs, a system operation on the
// platform's own resources, an HTTP call to an allowed host, or an integration (not run here yet).
type JulepTool struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Description string            `json:"description,omitempty"`
	Function    *JulepFunctionDef `json:"function,omitempty"`
	System      *JulepSystemDef   `json:"system,omitempty"`
	APICall     *JulepAPICallDef  `json:"api_call,omitempty"`
	Integration json.RawMessage   `json:"integration,omitempty"`
}

// JulepFunctionDef is a function tool's signature.
type JulepFunctionDef struct {
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// JulepSystemDef is a system tool: an operation on one of the platform's resources (search the agent's docs...).
type JulepSystemDef struct {
	Resource    string          `json:"resource"`
	Operation   string          `json:"operation"`
	Subresource string          `json:"subresource,omitempty"`
	ResourceID  string          `json:"resource_id,omitempty"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
}

// JulepAPICallDef is an api_call tool: an HTTP request the platform makes (only to hosts its operator allows).
type JulepAPICallDef struct {
	Method                 string            `json:"method"`
	URL                    string            `json:"url"`
	Headers                map[string]string `json:"headers,omitempty"`
	Params                 json.RawMessage   `json:"params,omitempty"`
	JSON                   json.RawMessage   `json:"json,omitempty"`
	Content                string            `json:"content,omitempty"`
	Data                   json.RawMessage   `json:"data,omitempty"`
	ParamsSchema           json.RawMessage   `json:"params_schema,omitempty"`
	Schema                 json.RawMessage   `json:"schema,omitempty"`
	Timeout                float64           `json:"timeout,omitempty"`
	FollowRedirects        *bool             `json:"follow_redirects,omitempty"`
	IncludeResponseContent bool              `json:"include_response_content,omitempty"`
}

// JulepAgentToolCreated adds a tool to an agent.
type JulepAgentToolCreated struct {
	ToolID string    `json:"tool_id"`
	Tool   JulepTool `json:"tool"`
}

func (JulepAgentToolCreated) EventType() string { return "jagent.tool_created" }

// JulepAgentToolUpdated replaces a tool of an agent (the whole tool after a PATCH or PUT).
type JulepAgentToolUpdated struct {
	ToolID string    `json:"tool_id"`
	Tool   JulepTool `json:"tool"`
}

func (JulepAgentToolUpdated) EventType() string { return "jagent.tool_updated" }

// JulepAgentToolDeleted removes a tool of an agent.
type JulepAgentToolDeleted struct {
	ToolID string `json:"tool_id"`
}

func (JulepAgentToolDeleted) EventType() string { return "jagent.tool_deleted" }

// JulepUserSpec is what a Julep user is made of.
type JulepUserSpec struct {
	Name     string          `json:"name,omitempty"`
	About    string          `json:"about,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Project  string          `json:"project,omitempty"`
}

// JulepUserCreated makes a Julep user.
type JulepUserCreated struct {
	Spec JulepUserSpec `json:"spec"`
}

func (JulepUserCreated) EventType() string { return "juser.created" }

// JulepUserUpdated replaces the user's spec with the one it holds (the whole spec after a PATCH or PUT).
type JulepUserUpdated struct {
	Spec JulepUserSpec `json:"spec"`
}

func (JulepUserUpdated) EventType() string { return "juser.updated" }

// JulepUserDeleted deletes the user.
type JulepUserDeleted struct{}

func (JulepUserDeleted) EventType() string { return "juser.deleted" }

// DocOwner is whose a doc is: an agent's or a user's.
type DocOwner struct {
	Role string `json:"role"` // "agent" or "user"
	ID   string `json:"id"`
}

// DocSnippet is one snippet of a doc (a string of its content) and its embedding.
type DocSnippet struct {
	Index  int `json:"index"`
	Tokens int `json:"tokens,omitempty"`
	// Vector is the snippet's embedding as little-endian float32s (base64 in the JSON): stored with the doc so that
	// another node, or this one after a restart, indexes it without embedding it again.
	Vector []byte `json:"vector,omitempty"`
}

// DocCreated adds a doc to an agent or a user. It carries the vectors of its snippets, made by Embedder when the
// doc was created, so the doc was searchable when its create call returned and stays so everywhere without
// embedding again.
type DocCreated struct {
	Owner DocOwner `json:"owner"`
	Title string   `json:"title"`
	// Content is a JSON string or a JSON list of strings, as sent; each string is a snippet.
	Content          json.RawMessage `json:"content"`
	Metadata         json.RawMessage `json:"metadata,omitempty"`
	EmbedInstruction string          `json:"embed_instruction,omitempty"`
	Snippets         []DocSnippet    `json:"snippets"`
	// Embedder names the embedder of the vectors (embedding.Embedder.Name); vectors of another are made again.
	Embedder string `json:"embedder"`
	Dim      int    `json:"dim"`
}

func (DocCreated) EventType() string { return "doc.created" }

// DocDeleted deletes a doc.
type DocDeleted struct {
	Owner DocOwner `json:"owner"`
}

func (DocDeleted) EventType() string { return "doc.deleted" }

// JulepRecallOptions are how a Julep session recalls docs in a chat.
type JulepRecallOptions struct {
	Mode              string          `json:"mode"` // vector, text or hybrid
	Limit             int             `json:"limit"`
	NumSearchMessages int             `json:"num_search_messages"`
	MaxQueryLength    int             `json:"max_query_length"`
	Confidence        float64         `json:"confidence"`
	Alpha             float64         `json:"alpha"`
	MMRStrength       float64         `json:"mmr_strength"`
	MetadataFilter    json.RawMessage `json:"metadata_filter,omitempty"`
	Lang              string          `json:"lang,omitempty"`
	IncludeEmbeddings bool            `json:"include_embeddings,omitempty"`
}

// JulepSessionSpec is what makes a session a Julep session: its agents and users and Julep's settings. It rides
// on session.created (SessionCreated.Julep) and session.julep_updated.
type JulepSessionSpec struct {
	Agents           []string            `json:"agents"`
	Users            []string            `json:"users,omitempty"`
	Situation        *string             `json:"situation,omitempty"`
	SystemTemplate   *string             `json:"system_template,omitempty"`
	RenderTemplates  bool                `json:"render_templates"`
	TokenBudget      *int                `json:"token_budget,omitempty"`
	ContextOverflow  string              `json:"context_overflow,omitempty"` // "", "truncate" or "adaptive"
	AutoRunTools     bool                `json:"auto_run_tools,omitempty"`
	ForwardToolCalls bool                `json:"forward_tool_calls,omitempty"`
	RecallOptions    *JulepRecallOptions `json:"recall_options,omitempty"`
	Metadata         json.RawMessage     `json:"metadata,omitempty"`
}

// SessionJulepUpdated replaces a Julep session's spec with the one it holds (the whole spec after a PATCH or PUT).
type SessionJulepUpdated struct {
	Spec JulepSessionSpec `json:"spec"`
}

func (SessionJulepUpdated) EventType() string { return "session.julep_updated" }

// JulepToolCall is a call of a tool the model made (OpenAI's function call).
type JulepToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// JulepMessage is a chat message of a Julep session.
type JulepMessage struct {
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []JulepToolCall `json:"tool_calls,omitempty"`
}

// JulepChatSettings are the generation settings of a chat (the agent's default_settings under the request's).
type JulepChatSettings struct {
	Model            string          `json:"model,omitempty"`
	Temperature      *float64        `json:"temperature,omitempty"`
	TopP             *float64        `json:"top_p,omitempty"`
	MaxTokens        int             `json:"max_tokens,omitempty"`
	Stop             []string        `json:"stop,omitempty"`
	Seed             *int64          `json:"seed,omitempty"`
	ResponseFormat   json.RawMessage `json:"response_format,omitempty"`
	ToolChoice       json.RawMessage `json:"tool_choice,omitempty"`
	FrequencyPenalty *float64        `json:"frequency_penalty,omitempty"`
	PresencePenalty  *float64        `json:"presence_penalty,omitempty"`
}

// SessionChatRequested is a chat of a Julep session: what was asked and how. The chat handler answers it
// (handlers/julep); its turn is recorded step by step as the events below, each derived from this one's ID.
type SessionChatRequested struct {
	TurnID string `json:"turn_id"`
	// Agent is the agent that answers (the session's first unless the request chose another).
	Agent    string         `json:"agent"`
	Messages []JulepMessage `json:"messages"`
	// Save keeps the turn's messages in the session's history; Recall searches docs for it.
	Save        bool `json:"save"`
	Recall      bool `json:"recall"`
	RecallTools bool `json:"recall_tools,omitempty"`
	Stream      bool `json:"stream,omitempty"`
	// AutoRunTools overrides the session's setting when set.
	AutoRunTools *bool             `json:"auto_run_tools,omitempty"`
	Settings     JulepChatSettings `json:"settings"`
	// Tools are tools of this chat only, beside the agent's.
	Tools    []JulepTool     `json:"tools,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

func (SessionChatRequested) EventType() string { return "session.chat_requested" }

// JulepDocRef is a doc snippet a chat recalled, with its score (Julep's distance: 1 - similarity).
type JulepDocRef struct {
	DocID        string          `json:"doc_id"`
	OwnerRole    string          `json:"owner_role"`
	OwnerID      string          `json:"owner_id"`
	Title        string          `json:"title"`
	SnippetIndex int             `json:"snippet_index"`
	Snippet      string          `json:"snippet"`
	Score        float64         `json:"score"`
	Distance     float64         `json:"distance"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
}

// SessionChatPrepared records how a turn's prompt was made: the rendered system message, the rendered input, the
// docs recalled with their scores, which history went in (entries from HistoryFrom on, after the summary of the
// first SummaryUpto entries when one was used; Dropped entries truncated away) and how many tokens it came to.
type SessionChatPrepared struct {
	TurnID       string         `json:"turn_id"`
	Model        string         `json:"model"`
	System       string         `json:"system,omitempty"`
	Input        []JulepMessage `json:"input"`
	Docs         []JulepDocRef  `json:"docs,omitempty"`
	RecallQuery  string         `json:"recall_query,omitempty"`
	HistoryFrom  int            `json:"history_from"`
	SummaryUpto  int            `json:"summary_upto,omitempty"`
	Dropped      int            `json:"dropped,omitempty"`
	PromptTokens int            `json:"prompt_tokens"`
	// Tools are the names of the tools offered to the model.
	Tools []string `json:"tools,omitempty"`
}

func (SessionChatPrepared) EventType() string { return "session.chat_prepared" }

// JulepUsage counts a chat's tokens.
type JulepUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// SessionChatModelCalled is a model call of a turn that asked for tools the platform runs (auto_run_tools): the
// calls are run next, each recorded as session.chat_tool_ran, and the model is called again with their results.
type SessionChatModelCalled struct {
	TurnID    string          `json:"turn_id"`
	Call      int             `json:"call"`
	Text      string          `json:"text,omitempty"`
	ToolCalls []JulepToolCall `json:"tool_calls"`
	Usage     JulepUsage      `json:"usage"`
	Model     string          `json:"model,omitempty"`
}

func (SessionChatModelCalled) EventType() string { return "session.chat_model_called" }

// SessionChatToolRan is the result of a tool call the platform ran.
type SessionChatToolRan struct {
	TurnID     string `json:"turn_id"`
	Call       int    `json:"call"`
	Index      int    `json:"index"`
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name"`
	Type       string `json:"type"`
	Output     string `json:"output"`
	Error      string `json:"error,omitempty"`
}

func (SessionChatToolRan) EventType() string { return "session.chat_tool_ran" }

// SessionChatAnswered ends a turn with the model's last answer: text, or tool calls for the client to run.
type SessionChatAnswered struct {
	TurnID    string          `json:"turn_id"`
	Text      string          `json:"text"`
	ToolCalls []JulepToolCall `json:"tool_calls,omitempty"`
	Finish    string          `json:"finish_reason"`
	// Usage sums the turn's model calls.
	Usage JulepUsage `json:"usage"`
	Model string     `json:"model,omitempty"`
	Calls int        `json:"calls"`
}

func (SessionChatAnswered) EventType() string { return "session.chat_answered" }

// SessionChatFailed ends a turn without an answer, saying why; Code classifies it in internal/errs's words.
type SessionChatFailed struct {
	TurnID string `json:"turn_id"`
	Error  string `json:"error"`
	Code   string `json:"code,omitempty"`
}

func (SessionChatFailed) EventType() string { return "session.chat_failed" }

// SessionSummarized records a summary of the history's first Upto entries (the summary before it included), made
// in the background when the history passed 75% of an adaptive session's token budget; later prompts use it in
// place of those entries.
type SessionSummarized struct {
	Upto         int    `json:"upto"`
	Summary      string `json:"summary"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	Model        string `json:"model,omitempty"`
	// Turn is the turn whose answer set it off.
	Turn string `json:"turn,omitempty"`
}

func (SessionSummarized) EventType() string { return "session.summarized" }

// SessionSummaryFailed records that the history of an adaptive session could not be summarized: the model cannot
// summarise (the offline model), declined, failed, or was cut off before the summary ended. No summary replaces
// the older turns: they stay in the prompt, and are truncated, oldest first, once the history is over the token
// budget (each turn's session.chat_prepared says how many). It is recorded once for a reason and a starting point.
type SessionSummaryFailed struct {
	// From is how many entries the latest summary covered; Upto how many the failed one was to cover.
	From   int    `json:"from"`
	Upto   int    `json:"upto"`
	Model  string `json:"model,omitempty"`
	Reason string `json:"reason"`
	// Turn is the turn whose answer set it off.
	Turn string `json:"turn,omitempty"`
}

func (SessionSummaryFailed) EventType() string { return "session.summary_failed" }

func julepEvents() []Event {
	return []Event{
		JulepAgentCreated{}, JulepAgentUpdated{}, JulepAgentDeleted{},
		JulepAgentToolCreated{}, JulepAgentToolUpdated{}, JulepAgentToolDeleted{},
		JulepUserCreated{}, JulepUserUpdated{}, JulepUserDeleted{},
		DocCreated{}, DocDeleted{},
		SessionJulepUpdated{}, SessionChatRequested{}, SessionChatPrepared{}, SessionChatModelCalled{},
		SessionChatToolRan{}, SessionChatAnswered{}, SessionChatFailed{}, SessionSummarized{},
		SessionSummaryFailed{},
	}
}

// NewUUID returns a fresh UUID (version 7: a ULID's time and randomness in UUID form), the IDs Julep's objects
// have.
func NewUUID() string { return uuidOf(ulid.Make()) }

// DeriveUUID is DeriveID in UUID form: the same cause and label always give the same UUID.
func DeriveUUID(cause, label string) string {
	return uuidOf(ulid.MustParseStrict(DeriveID(cause, label)))
}

// uuidOf writes a ULID's 128 bits as a version 7 UUID: a ULID is laid out as UUIDv7 is (48 bits of milliseconds,
// then randomness), so only the version and variant bits change.
func uuidOf(u ulid.ULID) string {
	b := [16]byte(u)
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hexenc.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hexenc.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hexenc.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hexenc.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hexenc.Encode(out[24:], b[10:])
	return string(out[:])
}

// MergeObjects is Julep's PATCH of a JSON object (metadata): the patch's keys over the old's, a shallow merge as
// Postgres's jsonb || does. An empty or null patch changes nothing; a patch or an old value that is not an object
// makes the patch the new value. It is the one rule every aggregate whose events carry metadata follows.
func MergeObjects(old, patch json.RawMessage) json.RawMessage {
	p := bytes.TrimSpace(patch)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return old
	}
	var a, b map[string]json.RawMessage
	if json.Unmarshal(patch, &b) != nil || b == nil {
		return patch
	}
	if len(bytes.TrimSpace(old)) > 0 && (json.Unmarshal(old, &a) != nil) {
		return patch
	}
	merged := maps.Clone(a)
	if merged == nil {
		merged = map[string]json.RawMessage{}
	}
	maps.Copy(merged, b)
	out, err := json.Marshal(merged)
	if err != nil {
		return patch
	}
	return out
}

// JulepAggregateID is the aggregate ID of an account's Julep object with the given UUID: "<account>-<uuid>", a
// subject token (account IDs and UUIDs are letters, digits, '_' and '-').
func JulepAggregateID(account, id string) string { return account + "-" + id }

// JulepAccountOf is the account of a Julep object's aggregate ID.
func JulepAccountOf(aggregateID string) string {
	if len(aggregateID) > 37 {
		return aggregateID[:len(aggregateID)-37]
	}
	return ""
}

// JulepPublicID is the UUID of a Julep object's aggregate ID: what clients call it.
func JulepPublicID(aggregateID string) string {
	if len(aggregateID) >= 36 {
		return aggregateID[len(aggregateID)-36:]
	}
	return aggregateID
}
