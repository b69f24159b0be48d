package events

// Session events. A session is a chat between an account and agents: messages posted by the user are queries; the
// session runner dispatches each to the session's front agent and records the reply (or why there is none).

// MessageEmbed is an embed a message carries under its key. Uploaded embeds are referenced by ID and content hash;
// the URL a reader gets is signed when it is read, so nothing that expires is stored.
type MessageEmbed struct {
	EmbedID     string `json:"embed_id,omitempty"`
	ContentType string `json:"content_type"`
	ContentHash string `json:"content_hash,omitempty"`
	// URI is an external URI an agent answered with (never a data: URI: those are stored as embeds).
	URI string `json:"uri,omitempty"`
}

// Message types, what `type` shows of a message.
const (
	MessageQuery    = "query"
	MessageResponse = "response"
	MessageError    = "error"
)

// SessionCreated opens a session.
type SessionCreated struct {
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// FrontendAgentID is the agent that answers the session's queries.
	FrontendAgentID     string `json:"frontend_agent_id"`
	FrontendAgentHandle string `json:"frontend_agent_handle,omitempty"`
	// Julep makes the session a Julep session (agents, users, Julep's settings; no front agent): its chats are
	// turns (session.chat_requested ...) that the Fixie session runner leaves alone.
	Julep *JulepSessionSpec `json:"julep,omitempty"`
}

func (SessionCreated) EventType() string { return "session.created" }

// SessionMessagePosted is a user's message: a query for the front agent.
type SessionMessagePosted struct {
	MessageID string                  `json:"message_id"`
	Text      string                  `json:"text"`
	Embeds    map[string]MessageEmbed `json:"embeds,omitempty"`
	// SentBy is the handle of the sender as messages show it (the account's name).
	SentBy    string `json:"sent_by"`
	Type      string `json:"type"`
	InReplyTo string `json:"in_reply_to,omitempty"`
	// Dispatch is set on a query posted to a session with no query unanswered: it went to the session's front
	// agent in the same event, as a session.query_dispatched appended after it would have sent it. Its message and
	// reply IDs are the query's, so they are stored empty (session.DispatchOf fills them in). A query posted behind
	// another is dispatched by its own session.query_dispatched when its turn comes.
	Dispatch *SessionQueryDispatched `json:"dispatch,omitempty"`
}

func (SessionMessagePosted) EventType() string { return "session.message_posted" }

// SessionQueryDispatched hands a query to an agent: the session's front agent at the top of the query (appended by
// the session runner when the query's turn comes after another's; a query posted to an idle session carries its
// dispatch itself), or an agent another agent asks (appended by the Code Shot executor). It opens a path of the
// query, which the handler for the agent's kind works on. ReplyID is the ID the reply will have, so that token
// deltas streamed before it exists can name it.
type SessionQueryDispatched struct {
	MessageID   string `json:"message_id"`
	ReplyID     string `json:"reply_id"`
	AgentID     string `json:"agent_id"`
	AgentHandle string `json:"agent_handle"`
	// Path names the agent's work on the query: the front agent's handle at the top, then ">handle" for each
	// delegation ("fixie>calc"). Empty in logs written before paths were dispatched: the top.
	Path string `json:"path,omitempty"`
	// Kind says which handler works on the path: "front" (the built-in front agent on the offline model),
	// "codeshot", "router", "standalone".
	Kind string `json:"kind,omitempty"`
	// Text is what the agent is asked (the query's text at the top, the delegating agent's words below).
	Text string `json:"text,omitempty"`
	// AgentSeq is the stream sequence of the agent's last event when it was dispatched (0 for a built-in), so
	// that every step works with the agent as it was then.
	AgentSeq uint64 `json:"agent_seq,omitempty"`
}

func (SessionQueryDispatched) EventType() string { return "session.query_dispatched" }

// SessionReplyPosted is an agent's answer to a query.
type SessionReplyPosted struct {
	MessageID string                  `json:"message_id"`
	InReplyTo string                  `json:"in_reply_to"`
	Text      string                  `json:"text"`
	Embeds    map[string]MessageEmbed `json:"embeds,omitempty"`
	SentBy    string                  `json:"sent_by"`
	AgentID   string                  `json:"agent_id"`
}

func (SessionReplyPosted) EventType() string { return "session.reply_posted" }

// SessionReplyFailed records that a query got no answer, and why, in words the user can read. It shows in the
// session as a message of type "error", so a failing agent never leaves the user waiting.
type SessionReplyFailed struct {
	MessageID string `json:"message_id"`
	InReplyTo string `json:"in_reply_to"`
	Error     string `json:"error"`
	SentBy    string `json:"sent_by"`
	AgentID   string `json:"agent_id,omitempty"`
	// Code classifies the failure in internal/errs's words ("unavailable": a model server or agent that cannot be
	// reached; "timeout"; ...); empty in events older than the field.
	Code string `json:"code,omitempty"`
}

func (SessionReplyFailed) EventType() string { return "session.reply_failed" }

// SessionDeleted closes a session; its messages are no longer readable and nothing more is answered.
type SessionDeleted struct{}

func (SessionDeleted) EventType() string { return "session.deleted" }

// SessionAgentStep is one step of an agent's work on a query, recorded before the next step starts so that replay
// shows the whole reasoning and a query resumed after a crash redoes nothing recorded: a line of a Code Shot agent's
// model ("Thought: ...", "Ask Func[f]: args", "A: ..."), a func's or another agent's answer, a failure.
type SessionAgentStep struct {
	// ReplyID names the query's reply; the steps of one query share it.
	ReplyID string `json:"reply_id"`
	// Agent is the handle of the agent whose step it is; Path is how it was reached from the front agent
	// ("fixie>genrand") when agents delegate.
	Agent string `json:"agent"`
	Path  string `json:"path,omitempty"`
	// Index numbers the agent's steps on this query from 0.
	Index int    `json:"index"`
	Kind  string `json:"kind"` // thought, ask_func, func_says, ask_agent, agent_says, answer, failed
	Name  string `json:"name,omitempty"`
	Text  string `json:"text"`
	// Call is the model call that produced the step.
	Call int `json:"call,omitempty"`
	// Embeds are what a func or an agent answered with besides text (stored embeds, or external URIs).
	Embeds map[string]MessageEmbed `json:"embeds,omitempty"`
	// Code classifies a failed step in internal/errs's words ("unavailable": a model server or agent that cannot be
	// reached), carried to the query's failure.
	Code string `json:"code,omitempty"`
}

func (SessionAgentStep) EventType() string { return "session.agent_step" }

// RouteMatch is an agent a query was routed to, with its similarity.
type RouteMatch struct {
	AgentID string  `json:"agent_id"`
	Handle  string  `json:"handle"`
	Score   float64 `json:"score"`
}

// SessionRouted records what the router chose for a query: the best agents and their scores (none above the
// threshold: the query goes to the general agent).
type SessionRouted struct {
	ReplyID string       `json:"reply_id"`
	Path    string       `json:"path,omitempty"`
	Query   string       `json:"query"`
	Matches []RouteMatch `json:"matches"`
	// Chosen is the handle the query went to ("" = none fitted).
	Chosen string `json:"chosen"`
}

func (SessionRouted) EventType() string { return "session.routed" }

func sessionEvents() []Event {
	return []Event{SessionCreated{}, SessionMessagePosted{}, SessionQueryDispatched{}, SessionReplyPosted{},
		SessionReplyFailed{}, SessionDeleted{}, SessionAgentStep{}, SessionRouted{}}
}
