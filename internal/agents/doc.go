// Package agents is the agent directory: the built-in agents every account has without registering them (the front
// agent fixie and the router), registered agents as the log holds them (through an eventstore.Repo of domain/agent),
// handle claims, and how a reference a user or an agent writes ("calc", "ada/calc", "agt_...") resolves to an agent
// the caller may use. Handlers that answer queries and the commands that change agents both use it.
//
// It imports events, the domain packages, the read models (published agents by handle), errs and llm; never a face
// or a handler.
package agents
