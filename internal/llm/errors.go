package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The kinds of failure a caller can act on. Providers wrap them (test with errors.Is); a caller retries or
// backs off on ErrRateLimited and ErrUnavailable and reports ErrBadRequest to whoever chose the request.
var (
	// ErrRateLimited: the provider refused the request for now (HTTP 429) and said so; waiting may help.
	ErrRateLimited = errors.New("llm: rate limited")
	// ErrUnavailable: the provider could not be reached or failed on its side (connection error, HTTP 5xx, a
	// stream cut short); the same request may succeed later.
	ErrUnavailable = errors.New("llm: provider unavailable")
	// ErrBadRequest: the provider rejected the request itself (HTTP 4xx other than 429: a bad parameter, an unknown
	// model, a missing or wrong API key) or cannot do what it asks; sending it again will not help.
	ErrBadRequest = errors.New("llm: bad request")
	// ErrUnknownProvider: a model string names a provider that is not configured. It is also an ErrBadRequest.
	ErrUnknownProvider = errors.New("llm: unknown provider")
)

// HTTPError is a provider's error answer: the HTTP status and what the server said. It matches ErrRateLimited,
// ErrUnavailable or ErrBadRequest under errors.Is according to the status.
type HTTPError struct {
	// Provider is the name of the provider that got the answer, e.g. "openai".
	Provider string
	// Status is the HTTP status code. An error reported inside a stream that had already begun has status 0 and is
	// treated as ErrUnavailable.
	Status int
	// Message, Type and Code are the server's error object fields ({"error":{"message","type","code"}}); Message
	// holds the raw body when the server did not answer with such an object.
	Message string
	Type    string
	Code    string
	// RetryAfter is how long the server asked the client to wait (Retry-After or retry-after-ms), zero if it did
	// not say.
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		b.WriteString(e.Provider)
		b.WriteString(": ")
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d", e.Status)
	} else {
		b.WriteString("error in stream")
	}
	if e.Type != "" || e.Code != "" {
		b.WriteString(" (")
		b.WriteString(strings.Join(nonEmpty(e.Type, e.Code), ", "))
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Unwrap gives the kind of failure the status stands for, so that errors.Is(err, ErrRateLimited) works.
func (e *HTTPError) Unwrap() error { return KindOfStatus(e.Status) }

// Retryable says whether sending the same request again may succeed.
func (e *HTTPError) Retryable() bool {
	kind := e.Unwrap()
	return kind == ErrRateLimited || kind == ErrUnavailable
}

// KindOfStatus maps an HTTP status to the kind of failure it stands for: 429 is ErrRateLimited; 5xx, 408 (the
// server timed out waiting) and 0 (no status, e.g. an error inside a stream) are ErrUnavailable; any other 4xx is
// ErrBadRequest. A status that is not an error maps to nil.
func KindOfStatus(status int) error {
	switch {
	case status == http.StatusTooManyRequests:
		return ErrRateLimited
	case status == 0, status == http.StatusRequestTimeout, status >= 500:
		return ErrUnavailable
	case status >= 400:
		return ErrBadRequest
	default:
		return nil
	}
}

// UnknownProviderError says that a model string names a provider that is not configured. It matches both
// ErrUnknownProvider and ErrBadRequest.
type UnknownProviderError struct {
	Model      string
	Provider   string
	Configured []string
	// Hint tells how to configure the provider, when known.
	Hint string
}

func (e *UnknownProviderError) Error() string {
	msg := fmt.Sprintf("model %q: provider %q is not configured (configured: %s)",
		e.Model, e.Provider, strings.Join(e.Configured, ", "))
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Is makes errors.Is(err, ErrUnknownProvider) and errors.Is(err, ErrBadRequest) hold.
func (e *UnknownProviderError) Is(target error) bool {
	return target == ErrUnknownProvider || target == ErrBadRequest
}

func nonEmpty(ss ...string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
