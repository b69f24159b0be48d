// Package agentkit is the agent's side of Fixie's agent HTTP protocol, for writing agents in Go: it serves an
// agent's metadata at GET / (as JSON), dispatches POST /{func} to Go funcs and POST / to a standalone agent's
// responder (streaming JSON lines), answers failures in the Fixie SDK's error shapes (ERR_FUNC_NOT_DEFINED,
// ERR_AGENT_UNHANDLED_EXCEPTION), and can verify the platform's EdDSA JWTs against its JWKS, as the SDK did.
//
// The sample agents (cmd/agents) and the platform's tests use it to run real agents, in-process with httptest or
// as their own processes. It must not import anything of the platform beyond agentproto and codeshot.
package agentkit
