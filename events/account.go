package events

// Account events. An account owns everything its keys create; keys are stored as hashes only.

// AccountCreated opens an account.
type AccountCreated struct {
	Name string `json:"name"`
	// Admin accounts may manage other accounts.
	Admin bool `json:"admin,omitempty"`
	// DailyQueryLimit is the number of queries a day; 0 means the platform default.
	DailyQueryLimit int `json:"daily_query_limit,omitempty"`
}

func (AccountCreated) EventType() string { return "account.created" }

// AccountKeyIssued records a new API key. The key itself is shown once to whoever asked for it and never stored:
// Hash is its SHA-256 (keys are long random strings, so a fast hash is not a weakness), Hint its first characters.
type AccountKeyIssued struct {
	KeyID string `json:"key_id"`
	Name  string `json:"name,omitempty"`
	Hash  string `json:"hash"`
	Hint  string `json:"hint"`
}

func (AccountKeyIssued) EventType() string { return "account.key_issued" }

// AccountKeyRevoked stops a key from working.
type AccountKeyRevoked struct {
	KeyID string `json:"key_id"`
	// Hash is the revoked key's hash, so that the lookup by hash can be closed without a second index.
	Hash string `json:"hash"`
}

func (AccountKeyRevoked) EventType() string { return "account.key_revoked" }

// AccountLimitsChanged sets the account's usage limits. A zero field keeps its value.
type AccountLimitsChanged struct {
	DailyQueryLimit int `json:"daily_query_limit,omitempty"`
	// RequestsPerMinute bounds each key of the account; 0 keeps the current value.
	RequestsPerMinute int `json:"requests_per_minute,omitempty"`
}

func (AccountLimitsChanged) EventType() string { return "account.limits_changed" }

// UsernameClaimed gives a name to the account that goes by it in agent IDs ("<username>/<handle>", as Fixie wrote
// them). Account names need not be unique; the first account to need its name as a username holds it.
type UsernameClaimed struct {
	Username string `json:"username"`
	Account  string `json:"account"`
}

func (UsernameClaimed) EventType() string { return "username.claimed" }

func accountEvents() []Event {
	return []Event{AccountCreated{}, AccountKeyIssued{}, AccountKeyRevoked{}, AccountLimitsChanged{}, UsernameClaimed{}}
}
