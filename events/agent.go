package events

// Agent events. An agent is registered by an account (its owner) under a handle unique among that account's agents;
// a handle is claimed through its own small aggregate ("agenthandle", one per account and handle), whose optimistic
// concurrency is what keeps two agents of one account from taking the same handle at once.

// AgentRegistered adds an agent to the registry.
type AgentRegistered struct {
	Handle      string `json:"handle"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// Kind says how the agent is reached: "standalone" (an HTTP agent answering queries at QueryURL), "codeshot"
	// (few-shots run by the platform, funcs at FuncURL). Built-in agents are never registered.
	Kind        string `json:"kind,omitempty"`
	QueryURL    string `json:"query_url,omitempty"`
	FuncURL     string `json:"func_url,omitempty"`
	MoreInfoURL string `json:"more_info_url,omitempty"`
	Published   bool   `json:"published,omitempty"`
	// Queries are sample queries: what the router compares a query with, and what `queries` shows.
	Queries []string `json:"queries,omitempty"`
	// BasePrompt and FewShots are a Code Shot agent's prompt, as its agent served them.
	BasePrompt string   `json:"base_prompt,omitempty"`
	FewShots   []string `json:"few_shots,omitempty"`
	// Conversational agents see the session's history (Fixie's `conversational`).
	Conversational bool `json:"conversational,omitempty"`
	// Model is the model string its language processing uses ("provider/name" or a bare name); "" = the default.
	Model string `json:"model,omitempty"`
	// Audience is the audience of the tokens the platform signs for the agent; "" = the platform's public URL.
	Audience string `json:"audience,omitempty"`
}

func (AgentRegistered) EventType() string { return "agent.registered" }

// AgentUpdated changes some of an agent's fields: a nil field keeps its value.
type AgentUpdated struct {
	Handle         *string   `json:"handle,omitempty"`
	Name           *string   `json:"name,omitempty"`
	Description    *string   `json:"description,omitempty"`
	Kind           *string   `json:"kind,omitempty"`
	QueryURL       *string   `json:"query_url,omitempty"`
	FuncURL        *string   `json:"func_url,omitempty"`
	MoreInfoURL    *string   `json:"more_info_url,omitempty"`
	Published      *bool     `json:"published,omitempty"`
	Queries        *[]string `json:"queries,omitempty"`
	BasePrompt     *string   `json:"base_prompt,omitempty"`
	FewShots       *[]string `json:"few_shots,omitempty"`
	Conversational *bool     `json:"conversational,omitempty"`
	Model          *string   `json:"model,omitempty"`
	Audience       *string   `json:"audience,omitempty"`
}

func (AgentUpdated) EventType() string { return "agent.updated" }

// AgentDeleted removes an agent from the registry. Its handle is released; sessions that used it get a failure
// message when they next query it.
type AgentDeleted struct {
	Handle string `json:"handle"`
}

func (AgentDeleted) EventType() string { return "agent.deleted" }

// AgentHandleClaimed gives a handle of an account to an agent.
type AgentHandleClaimed struct {
	Handle  string `json:"handle"`
	AgentID string `json:"agent_id"`
}

func (AgentHandleClaimed) EventType() string { return "agenthandle.claimed" }

// AgentHandleReleased frees a handle (the agent was renamed or deleted).
type AgentHandleReleased struct {
	Handle  string `json:"handle"`
	AgentID string `json:"agent_id"`
}

func (AgentHandleReleased) EventType() string { return "agenthandle.released" }

func agentEvents() []Event {
	return []Event{AgentRegistered{}, AgentUpdated{}, AgentDeleted{}, AgentHandleClaimed{}, AgentHandleReleased{}}
}
