package agentproto

import (
	"encoding/json"
	"fmt"
)

// Embed is a binary object attached to a message, passed by reference: uri is a URL the agent can fetch (a signed
// URL, or a data: URI).
type Embed struct {
	ContentType string `json:"content_type"`
	URI         string `json:"uri"`
}

// Message is what a query, a func argument and every reply carry: text that may refer to embeds as #key, and the
// embeds by key.
type Message struct {
	Text   string           `json:"text"`
	Embeds map[string]Embed `json:"embeds"`
}

// MarshalJSON always writes "embeds", as an empty object when there are none: the simplest agents read
// request.json["embeds"] and fail when it is missing.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	p := plain(m)
	if p.Embeds == nil {
		p.Embeds = map[string]Embed{}
	}
	return json.Marshal(p)
}

// AgentError is the "error" object of an agent's reply, as Fixie's SDK sends it.
type AgentError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// Error codes the Fixie SDK sends.
const (
	CodeFuncNotDefined          = "ERR_FUNC_NOT_DEFINED"
	CodeAgentUnhandledException = "ERR_AGENT_UNHANDLED_EXCEPTION"
)

// FuncRequest is the body of POST /{func}.
type FuncRequest struct {
	Message Message `json:"message"`
}

// Reply is the body an agent answers with: {"message": {...}} from a func or a streaming line
// ({"message": {...}, "type": ...}), or {"text": ...} from the simplest agents. Error is set when the agent reports
// one; Detail is FastAPI's own error field ({"detail": ...}).
type Reply struct {
	Message *Message         `json:"message,omitempty"`
	Text    *string          `json:"text,omitempty"`
	Embeds  map[string]Embed `json:"embeds,omitempty"`
	Type    string           `json:"type,omitempty"`
	Error   *AgentError      `json:"error,omitempty"`
	Detail  any              `json:"detail,omitempty"`
}

// message returns the reply's message, whichever shape it came in.
func (r Reply) message() (Message, error) {
	var m Message
	switch {
	case r.Message != nil:
		m = *r.Message
	case r.Text != nil:
		m = Message{Text: *r.Text, Embeds: r.Embeds}
	default:
		return Message{}, fmt.Errorf(`the reply has neither "message" nor "text"`)
	}
	for key, e := range m.Embeds {
		if e.URI == "" || e.ContentType == "" {
			return Message{}, fmt.Errorf("embed %q needs both content_type and uri", key)
		}
	}
	return m, nil
}

// QueryRequest is the body of POST / to a standalone agent. It carries the message twice: under "message", as
// Fixie's SDK reads it, and at the top level, as the simplest agents of Fixie's overview read it
// (request.json["text"], request.json["embeds"]).
type QueryRequest struct {
	Session string           `json:"session,omitempty"`
	Message Message          `json:"message"`
	Text    string           `json:"text"`
	Embeds  map[string]Embed `json:"embeds"`
	Stream  bool             `json:"stream"`
}
