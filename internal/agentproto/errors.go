package agentproto

import (
	"errors"
)

// Kinds of failure. Every error the Client returns is an *Error whose Kind is one of these, so that
// errors.Is(err, agentproto.ErrTimeout) tells a session what to show and whether trying again makes sense.
var (
	// ErrInvalid: the call itself was malformed (an agent URL that is not http(s), a func name that is not a word).
	ErrInvalid = errors.New("invalid agent call")
	// ErrToken: no token could be minted for the call; nothing was sent.
	ErrToken = errors.New("no token for agent call")
	// ErrUnreachable: the agent could not be connected to (after the retries that are safe).
	ErrUnreachable = errors.New("agent unreachable")
	// ErrTimeout: the agent did not answer in time. The request may have been acted on.
	ErrTimeout = errors.New("agent timed out")
	// ErrCanceled: the caller gave up (its context was canceled).
	ErrCanceled = errors.New("agent call canceled")
	// ErrFuncNotDefined: the agent has no such func (HTTP 404, ERR_FUNC_NOT_DEFINED).
	ErrFuncNotDefined = errors.New("func not defined")
	// ErrAgentFailed: the agent failed while handling the call (HTTP 500, ERR_AGENT_UNHANDLED_EXCEPTION).
	ErrAgentFailed = errors.New("agent failed")
	// ErrUnauthorized: the agent refused the platform's token (HTTP 401 or 403).
	ErrUnauthorized = errors.New("agent refused token")
	// ErrStatus: the agent answered another HTTP error status.
	ErrStatus = errors.New("agent error status")
	// ErrAgentError: the agent answered successfully but its reply carries an "error" object.
	ErrAgentError = errors.New("agent reported error")
	// ErrBadResponse: the reply could not be read or understood (not JSON or YAML, missing fields, too large).
	ErrBadResponse = errors.New("bad agent response")
)

// Error is a failed call to an agent.
type Error struct {
	// Kind is one of the Err* values of this package.
	Kind error
	// Op is what was being done: "fetch metadata", "call func" or "query".
	Op string
	// Agent is the agent's URL.
	Agent string
	// Func is the func called, for "call func".
	Func string
	// Status is the HTTP status the agent answered, or 0 when it did not answer.
	Status int
	// Code and AgentMessage come from the agent's "error" object, when it sent one.
	Code         string
	AgentMessage string
	// Reply is the message the agent sent along with its error ("I'm sorry, ..."), when it sent one.
	Reply *Message
	// Message says what went wrong in words a user can act on; Error returns it.
	Message string
	// Err is the underlying cause, if any (a network error, context.DeadlineExceeded, a decoding error).
	Err error
}

func (e *Error) Error() string { return e.Message }

// Unwrap exposes both the Kind and the cause to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
