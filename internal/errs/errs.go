// Package errs is Contrail's one error vocabulary: the core returns errors carrying a code and a message meant for
// the user; each face maps the code to its own shape (the OpenAI error object on /v1, extensions.code in GraphQL,
// Julep's shape on /julep). An error without a code is internal: logged in full, shown as "internal error".
package errs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"
)

// Code classifies an error for every face.
type Code string

// The codes.
const (
	Invalid      Code = "invalid"
	NotFound     Code = "not_found"
	Conflict     Code = "conflict"
	Unauthorized Code = "unauthorized"
	Forbidden    Code = "forbidden"
	RateLimited  Code = "rate_limited"
	TooLarge     Code = "too_large"
	// MethodNotAllowed is a request of a method the route does not have (405).
	MethodNotAllowed Code = "method_not_allowed"
	Unavailable      Code = "unavailable"
	Internal         Code = "internal"
	DeadlineExpired  Code = "timeout"
)

// Error is an error a user can read.
type Error struct {
	Code Code
	// Message is meant for the user of the face.
	Message string
	// Field names the input at fault, when there is one ("messages[0].content").
	Field string
	// RetryAfter is how long to wait before trying again (rate limits).
	RetryAfter time.Duration
	// Err is the cause, for logs; never shown.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// MaxArg bounds what one string argument of E, InvalidField, NotFoundf and Limit puts into a message, in bytes; an
// error or Stringer argument (a report the platform wrote, which may quote a little of the input) may take up to
// MaxErrArg. A message may quote what was sent (a bad value, a name, an ID) so that the user sees which, but never
// whole: a request may carry megabytes, and an error that repeats them back is a second copy in every log and
// client.
const (
	MaxArg    = 200
	MaxErrArg = 2000
)

// clip shortens every argument longer than its bound, at a rune boundary, saying how long it was.
func clip(args []any) []any {
	var out []any
	for i, a := range args {
		var s string
		limit := MaxErrArg
		switch v := a.(type) {
		case string:
			s, limit = v, MaxArg
		case error:
			s = v.Error()
		case fmt.Stringer:
			s = v.String()
		default:
			continue
		}
		if len(s) <= limit {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		out[i] = fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
	}
	if out == nil {
		return args
	}
	return out
}

// E builds an error with a code and a formatted message (each argument clipped to MaxArg).
func E(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, clip(args)...)}
}

// InvalidField reports bad input in one field (each argument clipped to MaxArg).
func InvalidField(field, format string, args ...any) *Error {
	return &Error{Code: Invalid, Field: field, Message: fmt.Sprintf(format, clip(args)...)}
}

// Missing reports a required field that was not given.
func Missing(field string) *Error {
	return &Error{Code: Invalid, Field: field, Message: fmt.Sprintf("missing required parameter: '%s'", field)}
}

// NotFoundf reports an object that does not exist, or that the caller may not see: the two are the same answer,
// so that another account's objects are not revealed.
func NotFoundf(kind, id string) *Error {
	return &Error{Code: NotFound, Message: fmt.Sprintf("no %s found with id '%s'", clip([]any{kind, id})...)}
}

// Limit reports a usage limit reached.
func Limit(retryAfter time.Duration, format string, args ...any) *Error {
	return &Error{Code: RateLimited, RetryAfter: retryAfter, Message: fmt.Sprintf(format, clip(args)...)}
}

// CodeOf returns the code of err, Internal when it has none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return DeadlineExpired
	}
	return Internal
}

// As returns the coded error inside err, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// MessageOf returns what the user may read of err: its message, or "internal error".
func MessageOf(err error) string {
	if e := As(err); e != nil && e.Code != Internal {
		return e.Message
	}
	return "internal error"
}

// HTTPStatus maps a code to the HTTP status every REST face uses.
func HTTPStatus(code Code) int {
	switch code {
	case Invalid:
		return http.StatusBadRequest
	case NotFound:
		return http.StatusNotFound
	case Conflict:
		return http.StatusConflict
	case Unauthorized:
		return http.StatusUnauthorized
	case Forbidden:
		return http.StatusForbidden
	case RateLimited:
		return http.StatusTooManyRequests
	case TooLarge:
		return http.StatusRequestEntityTooLarge
	case MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case Unavailable:
		return http.StatusServiceUnavailable
	case DeadlineExpired:
		return http.StatusGatewayTimeout
	default:
		return http.StatusInternalServerError
	}
}
