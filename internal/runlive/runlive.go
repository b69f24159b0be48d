// Package runlive is the live side of an Assistants run: what the run worker publishes while the model answers
// (which message or step the answer goes to, and each piece of text or of tool-call arguments) on the thread's
// live subject, for a streaming client to see as it happens. It is not the record: the log gets the whole answer
// when the model is done, and a stream fills in from the log whatever it missed here.
//
// It imports nothing of Contrail's.
package runlive

// Kinds of frame.
const (
	// KindMessage announces the message (and its message-creation step) the turn's text goes to.
	KindMessage = "message"
	// KindText is a piece of the message's text.
	KindText = "text"
	// KindToolStep announces the tool-calls step the turn's calls go to.
	KindToolStep = "tool_step"
	// KindTool is a piece of one tool call: its ID and name with the first piece, and the next piece of its
	// arguments.
	KindTool = "tool"
)

// Frame is one thing a run worker publishes. Offset places a piece of text (in the message's text) or of arguments
// (in the call's arguments), in bytes, so that a reader that missed a piece knows not to append the next one.
type Frame struct {
	Kind  string `json:"kind"`
	RunID string `json:"run_id"`
	// After is the stream sequence of the event that started the turn: a reader shows the frame only once it has
	// shown the log up to there, so that live frames never overtake the events before them.
	After       uint64 `json:"after"`
	At          int64  `json:"at"` // Unix seconds, the created_at of what a frame announces
	AssistantID string `json:"assistant_id,omitempty"`
	StepID      string `json:"step_id,omitempty"`
	MessageID   string `json:"message_id,omitempty"`
	Index       int    `json:"index,omitempty"`
	CallID      string `json:"call_id,omitempty"`
	Name        string `json:"name,omitempty"`
	Offset      int    `json:"offset"`
	Text        string `json:"text,omitempty"`
}
