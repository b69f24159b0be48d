package agent

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/contrailhq/contrail/events"
)

// HandleAggregate is the aggregate type that gives one handle of one account to one agent: its optimistic
// concurrency is what keeps two agents of an account from taking the same handle at once.
const HandleAggregate = "agenthandle"

// Aggregate is the aggregate type of agents in the log.
const Aggregate = "agent"

// HandleID names the claim aggregate of an account's handle. It is a hash, so any handle and account make a valid
// subject token of fixed length.
func HandleID(account, handle string) string {
	sum := sha256.Sum256([]byte(account + "\x00" + handle))
	return "h" + hex.EncodeToString(sum[:16])
}

// HandleClaim is who holds a handle of an account.
type HandleClaim struct {
	Claimed bool
	AgentID string
}

// Apply folds one event of the claim.
func (h *HandleClaim) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.AgentHandleClaimed:
		h.Claimed, h.AgentID = true, d.AgentID
	case events.AgentHandleReleased:
		if h.AgentID == d.AgentID {
			h.Claimed, h.AgentID = false, ""
		}
	}
}
