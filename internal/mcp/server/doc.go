// Package server is Contrail as an MCP server, at /mcp (the Model Context Protocol over streamable HTTP, built on
// the official Go SDK): a desktop assistant or an IDE connects with an account's API key as a Bearer token and
// finds the account's agents (ask_<handle>), its Julep tasks (task_<name>) and a search of each of its vector
// stores (search_<store id>) as tools, and a session's transcript and an execution's transitions as resources.
//
// The server is stateless: every request builds the account's tools afresh, as they are when it comes, so any node
// answers any request and no session of one account can be reached with another's key. Tools call the same
// commands the other faces call (a query is a session post, answered by the query handlers; a task run is an
// execution, run by the task engine) and wait for the answer on a watch of the aggregate.
//
// Faces call commands for writes and read models or the log for reads; they never append events themselves.
package server
