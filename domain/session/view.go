package session

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/contrailhq/contrail/events"
)

// Message is one message of a session's chat log, as every face shows it (and as the sessions read model keeps it).
type Message struct {
	ID        string                         `json:"id"`
	SessionID string                         `json:"session_id"`
	Text      string                         `json:"text"`
	Embeds    map[string]events.MessageEmbed `json:"embeds,omitempty"`
	SentBy    string                         `json:"sent_by"`
	Type      string                         `json:"type"` // events.MessageQuery, MessageResponse or MessageError
	InReplyTo string                         `json:"in_reply_to,omitempty"`
	Time      time.Time                      `json:"time"`
	// Seq is the stream sequence of the event that created the message.
	Seq uint64 `json:"seq"`
	// Code classifies a failure (a message of type error) in internal/errs's words, when it is known.
	Code string `json:"code,omitempty"`
}

// ChatMessage is the message an event adds to a session's chat log, if it adds one: the one mapping from session
// events to messages, used by the fold, the read model, subscriptions and replies awaited.
func ChatMessage(e events.Envelope) (Message, bool) {
	m := Message{SessionID: e.AggregateID, Time: e.Time, Seq: e.Sequence}
	switch d := e.Event.(type) {
	case events.SessionMessagePosted:
		m.ID, m.Text, m.Embeds, m.SentBy, m.Type, m.InReplyTo = d.MessageID, d.Text, d.Embeds, d.SentBy, d.Type, d.InReplyTo
	case events.SessionReplyPosted:
		m.ID, m.Text, m.Embeds, m.SentBy, m.Type, m.InReplyTo = d.MessageID, d.Text, d.Embeds, d.SentBy, events.MessageResponse, d.InReplyTo
	case events.SessionReplyFailed:
		m.ID, m.Text, m.SentBy, m.Type, m.InReplyTo, m.Code = d.MessageID, d.Error, d.SentBy, events.MessageError, d.InReplyTo, d.Code
	default:
		return m, false
	}
	return m, true
}

// StepLine is a recorded step as a line of a Code Shot transcript ("Ask Func[f]: args").
func StepLine(s events.SessionAgentStep) string {
	switch s.Kind {
	case StepAskFunc:
		return "Ask Func[" + s.Name + "]: " + s.Text
	case StepFuncSays:
		return "Func[" + s.Name + "] says: " + OneLine(s.Text)
	case StepAskAgent:
		return "Ask Agent[" + s.Name + "]: " + s.Text
	case StepAgentSays:
		return "Agent[" + s.Name + "] says: " + OneLine(s.Text)
	case StepAnswer:
		return "A: " + s.Text
	default:
		return s.Text
	}
}

// OneLine keeps a func's or agent's answer on one transcript line: a newline in it would read as a new line of the
// transcript.
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// Describe says in one line what a session event did: what `contrail replay session` prints beside its time.
func Describe(e events.Envelope) (string, bool) {
	if line, ok := describeJulep(e); ok {
		return line, true
	}
	switch d := e.Event.(type) {
	case events.SessionCreated:
		return "session opened; front agent " + nonEmpty(d.FrontendAgentHandle, d.FrontendAgentID), true
	case events.SessionMessagePosted:
		line := fmt.Sprintf("%s %s: %q%s [%s]", d.Type, d.SentBy, clip(d.Text, 60), embedNote(d.Embeds), d.MessageID)
		if dispatch, ok := DispatchOf(e); ok {
			line += fmt.Sprintf(" → agent %s; reply will be %s", nonEmpty(dispatch.AgentHandle, dispatch.AgentID), dispatch.ReplyID)
		}
		return line, true
	case events.SessionQueryDispatched:
		path := nonEmpty(d.Path, d.AgentHandle)
		if !strings.Contains(path, ">") {
			return fmt.Sprintf("%s → agent %s; reply will be %s", d.MessageID, nonEmpty(d.AgentHandle, d.AgentID), d.ReplyID), true
		}
		return fmt.Sprintf("%s: asks %s (%s): %q", path[:strings.LastIndexByte(path, '>')], d.AgentHandle, d.Kind, clip(d.Text, 50)), true
	case events.SessionReplyPosted:
		return fmt.Sprintf("reply %s: %q%s [%s]", d.SentBy, clip(d.Text, 60), embedNote(d.Embeds), d.MessageID), true
	case events.SessionReplyFailed:
		return fmt.Sprintf("no reply from %s: %s", d.SentBy, clip(d.Error, 80)), true
	case events.SessionDeleted:
		return "session deleted", true
	case events.SessionAgentStep:
		who := nonEmpty(d.Path, d.Agent)
		switch d.Kind {
		case StepAskFunc, StepFuncSays, StepAskAgent, StepAgentSays:
			return fmt.Sprintf("%s: %s%s", who, clip(StepLine(d), 70), embedNote(d.Embeds)), true
		case StepAnswer:
			return fmt.Sprintf("%s: A: %s%s", who, clip(d.Text, 70), embedNote(d.Embeds)), true
		case StepFailed:
			return fmt.Sprintf("%s failed: %s", who, clip(d.Text, 70)), true
		}
		return fmt.Sprintf("%s: %s", who, clip(d.Text, 70)), true
	case events.SessionRouted:
		if d.Chosen == "" {
			return fmt.Sprintf("routed %q: no agent fits (best %s)", clip(d.Query, 40), bestMatch(d.Matches)), true
		}
		return fmt.Sprintf("routed %q → %s (%s)", clip(d.Query, 40), d.Chosen, bestMatch(d.Matches)), true
	}
	return "", false
}

func bestMatch(ms []events.RouteMatch) string {
	parts := make([]string, 0, 3)
	for i, m := range ms {
		if i == 3 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", m.Handle, m.Score))
	}
	if len(parts) == 0 {
		return "no agents"
	}
	return strings.Join(parts, ", ")
}

func embedNote(embeds map[string]events.MessageEmbed) string {
	if len(embeds) == 0 {
		return ""
	}
	keys := make([]string, 0, len(embeds))
	for k := range embeds {
		keys = append(keys, "#"+k)
	}
	sort.Strings(keys)
	return " with " + strings.Join(keys, ", ")
}

func nonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
