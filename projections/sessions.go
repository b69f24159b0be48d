package projections

import (
	"time"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
)

// Sessions is the read model of sessions and their messages:
//
//	<account>.<session id>                      -> SessionView (List "<account>.>" for one account's sessions)
//	msg.<account>.<session id>.<message id>     -> MessageView
//
// The account comes first so that a read with the caller's account can only find the caller's sessions.
type Sessions struct{}

// SessionView is a session as reads see it. Its messages are documents of their own, in the chat log's order by
// their sequence: a list of them here made every message rewrite a document as long as the session.
type SessionView struct {
	ID                  string                         `json:"id"`
	Account             string                         `json:"account"`
	Name                string                         `json:"name,omitempty"`
	Description         string                         `json:"description,omitempty"`
	FrontendAgentID     string                         `json:"frontend_agent_id"`
	FrontendAgentHandle string                         `json:"frontend_agent_handle,omitempty"`
	Created             time.Time                      `json:"created"`
	Modified            time.Time                      `json:"modified"`
	Embeds              map[string]events.MessageEmbed `json:"embeds,omitempty"`
}

// MessageView is one message of a session, as domain/session shows it.
type MessageView = session.Message

// Name implements Projection.
func (Sessions) Name() string { return "sessions" }

// Version implements Versioned: 2 took the list of message IDs out of the session's document.
func (Sessions) Version() int { return 2 }

// EventTypes implements Projection. A query's steps, dispatches and routings are not messages: the read model
// does not read them.
func (Sessions) EventTypes() []string {
	return []string{"session.created", "session.message_posted", "session.reply_posted", "session.reply_failed",
		"session.deleted"}
}

// SessionKey is where an account's session is.
func SessionKey(account, id string) string { return account + "." + id }

// SessionsFilter lists an account's sessions.
func SessionsFilter(account string) string { return account + ".*" }

// SessionMessageKey is where a message of a session is.
func SessionMessageKey(account, session, id string) string {
	return "msg." + account + "." + session + "." + id
}

// SessionMessagesFilter lists the messages of a session.
func SessionMessagesFilter(account, session string) string {
	return "msg." + account + "." + session + ".*"
}

// Apply implements Projection.
func (Sessions) Apply(tx *Tx, e events.Envelope) error {
	key := SessionKey(e.Account, e.AggregateID)
	switch d := e.Event.(type) {
	case events.SessionCreated:
		if d.Julep != nil {
			return nil // a Julep session is read through julep_sessions, not as a Fixie session
		}
		return tx.Put(key, SessionView{ID: e.AggregateID, Account: e.Account, Name: d.Name, Description: d.Description,
			FrontendAgentID: d.FrontendAgentID, FrontendAgentHandle: d.FrontendAgentHandle, Created: e.Time,
			Modified: e.Time})
	case events.SessionMessagePosted, events.SessionReplyPosted, events.SessionReplyFailed:
		m, _ := session.ChatMessage(e)
		return addMessage(tx, e, m)
	case events.SessionDeleted:
		var s SessionView
		ok, err := tx.Get(key, &s)
		if err != nil || !ok {
			return err
		}
		msgs, err := tx.Keys(SessionMessagesFilter(e.Account, e.AggregateID))
		if err != nil {
			return err
		}
		for _, k := range msgs {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return tx.Delete(key)
	}
	return nil
}

func addMessage(tx *Tx, e events.Envelope, m MessageView) error {
	key := SessionKey(e.Account, e.AggregateID)
	err := Modify(tx, key, func(s *SessionView, exists bool) error {
		if !exists {
			return ErrSkip
		}
		s.Modified = e.Time
		for k, em := range m.Embeds {
			if s.Embeds == nil {
				s.Embeds = map[string]events.MessageEmbed{}
			}
			s.Embeds[k] = em
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tx.Put(SessionMessageKey(e.Account, e.AggregateID, m.ID), m)
}
