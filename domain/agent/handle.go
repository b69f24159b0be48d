package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

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

// UsernameAggregate is the aggregate type that gives one username to one account: Fixie named agents
// "<username>/<handle>", account names need not be unique, and the first account to need its name as a username
// holds it.
const UsernameAggregate = "username"

// UsernameID names the claim of a username, whatever its case: "Ada" and "ada" are one name. It is a hash, so any
// name makes a valid subject token of fixed length.
func UsernameID(name string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(name)))
	return "u" + hex.EncodeToString(sum[:16])
}

// UsernameClaim is which account holds a username ("" for none).
type UsernameClaim struct{ Account string }

// Apply folds one event of the claim: the first claim holds.
func (u *UsernameClaim) Apply(e events.Envelope) {
	if d, ok := e.Event.(events.UsernameClaimed); ok && u.Account == "" {
		u.Account = d.Account
	}
}
