// Package model holds the Go types the GraphQL schema binds to where a type needs more than its fields: what the
// resolvers of its fields read (the owning account, the ID a message replies to). gqlgen generates the rest into
// graph/generated.
package model

import "time"

// User is an account as GraphQL shows it. Usage figures are resolved for the caller's own account only.
type User struct {
	Username  string `json:"username"`
	AccountID string `json:"-"`
}

// Agent is an agent as GraphQL shows it.
type Agent struct {
	AgentID      string    `json:"agentId"`
	Handle       string    `json:"handle"`
	Name         *string   `json:"name,omitempty"`
	Description  *string   `json:"description,omitempty"`
	Queries      []string  `json:"queries"`
	MoreInfoURL  *string   `json:"moreInfoUrl,omitempty"`
	Published    bool      `json:"published"`
	QueryURL     *string   `json:"queryUrl,omitempty"`
	FuncURL      *string   `json:"funcUrl,omitempty"`
	Kind         string    `json:"kind"`
	BasePrompt   *string   `json:"basePrompt,omitempty"`
	FewShots     []string  `json:"fewShots,omitempty"`
	Model        *string   `json:"model,omitempty"`
	Created      time.Time `json:"created"`
	Modified     time.Time `json:"modified"`
	Cursor       string    `json:"cursor"`
	OwnerAccount string    `json:"-"`
	OwnerName    string    `json:"-"`
}

// Message is a message of a session.
type Message struct {
	ID          string       `json:"id"`
	Text        string       `json:"text"`
	SentBy      Sender       `json:"sentBy"`
	Type        string       `json:"type"`
	Timestamp   time.Time    `json:"timestamp"`
	Embeds      []EmbedEntry `json:"embeds"`
	InReplyToID string       `json:"-"`
	SessionID   string       `json:"-"`
}

// Sender names who sent a message.
type Sender struct {
	Handle string `json:"handle"`
}

// EmbedEntry is an embed under its key.
type EmbedEntry struct {
	Key         string `json:"key"`
	ContentType string `json:"contentType"`
	URI         string `json:"uri"`
	Embed       *Embed `json:"embed,omitempty"`
}

// Embed is an uploaded embed.
type Embed struct {
	ID           string     `json:"id"`
	ContentType  string     `json:"contentType"`
	ContentHash  string     `json:"contentHash"`
	Size         int        `json:"size"`
	Created      *time.Time `json:"created,omitempty"`
	URL          string     `json:"url"`
	OwnerAccount string     `json:"-"`
}
