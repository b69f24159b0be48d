package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/contrailhq/contrail/internal/errs"
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

// Located is a provider that talks to a server of its own, and can say where it is (for messages a user acts on).
type Located interface {
	BaseURL() string
}

// Explain turns provider p's failure into an error a user can act on (internal/errs): which model server failed, how,
// and what to do about it. An error that already carries a code, or that a context ended, is returned as it is.
func Explain(p Provider, err error) error {
	if err == nil || errs.As(err) != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	where := fmt.Sprintf("the %s model provider", p.Name())
	if l, ok := p.(Located); ok {
		where = fmt.Sprintf("the model server at %s (provider %s)", l.BaseURL(), p.Name())
	}
	var httpErr *HTTPError
	isHTTP := errors.As(err, &httpErr)
	switch {
	case errors.Is(err, ErrRateLimited):
		wait := time.Duration(0)
		if isHTTP {
			wait = httpErr.RetryAfter
		}
		return &errs.Error{Code: errs.RateLimited, RetryAfter: wait, Err: err,
			Message: where + " is limiting requests (HTTP 429): try again later, or raise the limit with its operator"}
	case errors.Is(err, ErrUnavailable):
		return &errs.Error{Code: errs.Unavailable, Err: err, Message: fmt.Sprintf("%s cannot answer (%s): check that it is "+
			"running and that OPENAI_BASE_URL points at it, or unset OPENAI_BASE_URL to use the built-in offline model", where, cause(err))}
	case isHTTP && (httpErr.Status == http.StatusUnauthorized || httpErr.Status == http.StatusForbidden):
		return &errs.Error{Code: errs.Unavailable, Err: err, Message: fmt.Sprintf("%s refused the platform's API key (%s): "+
			"check OPENAI_API_KEY", where, cause(err))}
	case errors.Is(err, ErrBadRequest):
		return &errs.Error{Code: errs.Invalid, Err: err, Message: fmt.Sprintf("%s refused the request (%s)", where, cause(err))}
	}
	return err
}

// cause is the heart of a failure, for a message: the server's answer, or the network's error without the
// request around it ("connect: connection refused").
func cause(err error) string {
	var httpErr *HTTPError
	if errors.As(err, &httpErr) {
		msg := strings.TrimPrefix(httpErr.Error(), httpErr.Provider+": ")
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return msg
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}
