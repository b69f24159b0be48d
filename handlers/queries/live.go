package queries

import (
	"encoding/json"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/livejoin"
)

// live returns what passes a streamed answer's pieces on to the session's live subject, joined when they come close
// together (livejoin). Indexes count the pieces sent, so a client sees them in order with none missing.
func (h *Handlers) live(snap snapshot) *livejoin.Joiner {
	subject := h.cfg.Names.LiveSubject(session.Aggregate, snap.session)
	index := 0
	return livejoin.New(func(text string) {
		b, err := json.Marshal(agents.LiveDelta{Type: "delta", MessageID: snap.query.ReplyID, InReplyTo: snap.query.MessageID,
			Index: index, Text: text})
		if err != nil {
			return
		}
		index++
		if err := h.cfg.NC.Publish(subject, b); err != nil {
			h.cfg.Logger.Debug("publish delta", "subject", subject, "err", err)
		}
	})
}
