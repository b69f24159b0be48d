package agents

import "github.com/contrailhq/contrail/domain/agent"

// Agent kinds: how a query reaches the agent.
const (
	KindBuiltin    = agent.KindBuiltin
	KindCodeShot   = agent.KindCodeShot
	KindStandalone = agent.KindStandalone
)

// LiveDelta is a piece of a reply's text while an agent streams it, as published on the session's live subject
// (natsx.Names.LiveSubject("session", id)). It is not an event: nobody listening, it is lost; the reply event that
// follows holds the whole text.
type LiveDelta struct {
	Type string `json:"type"` // "delta"
	// MessageID is the ID the reply will have; InReplyTo the query it answers.
	MessageID string `json:"message_id"`
	InReplyTo string `json:"in_reply_to"`
	// Index counts the deltas of one streamed answer from 0, so a listener can tell a gap.
	Index int    `json:"index"`
	Text  string `json:"text"`
}
