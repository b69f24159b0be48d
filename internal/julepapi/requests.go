package julepapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// RequestsBucket maps a request to its ID, so that a retry of it gets the same one.
const RequestsBucket = "julep_requests"

// requestTTL is how long a request is remembered: longer than the SDKs' retries take (six attempts of at most two
// minutes each, with at most ten seconds between them).
const requestTTL = time.Hour

// RequestsBucketSpec is the bucket's spec, for provisioning.
func RequestsBucketSpec() natsx.BucketSpec {
	return natsx.BucketSpec{Name: RequestsBucket, Description: "The IDs of recent /julep requests, so that a client's retry of one does it once", TTL: requestTTL}
}

// request is what the bucket holds of a request.
type request struct {
	ID   string `json:"id"`
	Body string `json:"body"` // the body's hash
}

// maxIdempotencyKey bounds an Idempotency-Key (bytes).
const maxIdempotencyKey = 255

// requestID gives a POST its ID, which the objects it creates derive theirs from. A request with an
// Idempotency-Key gets the ID its first use got (and a 422 when the key was used for another body); a retry marked
// by Julep's SDKs (x-stainless-retry-count of 1 or more) gets the ID of the last request with the same method, path
// and body from the same account; any other request a new one, remembered for its retries. retry reports that the
// request repeats an earlier one.
func (f *Face) requestID(ctx context.Context, r *http.Request, body []byte) (id string, retry bool, err error) {
	account := principal(r).AccountID
	body = canonicalJSON(body)
	sum := sha256.Sum256(body)
	rec := request{ID: events.NewID(), Body: hex.EncodeToString(sum[:])}
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		if len(key) > maxIdempotencyKey {
			return "", false, errs.E(errs.Invalid, "the Idempotency-Key header is %d bytes long; at most %d are allowed", len(key), maxIdempotencyKey)
		}
		return f.keyed(ctx, kvKey(account, "key", key), rec)
	}
	fingerprint := kvKey(account, r.Method, r.URL.Path, string(body))
	if n, _ := strconv.Atoi(r.Header.Get("x-stainless-retry-count")); n > 0 {
		if e, err := f.d.Requests.Get(ctx, fingerprint); err == nil {
			var prev request
			if json.Unmarshal(e.Value(), &prev) == nil && prev.ID != "" {
				return prev.ID, true, nil
			}
		} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
			return "", false, fmt.Errorf("look up a retried request: %w", err)
		}
	}
	raw, _ := json.Marshal(rec)
	if _, err := f.d.Requests.Put(ctx, fingerprint, raw); err != nil {
		return "", false, fmt.Errorf("remember a request: %w", err)
	}
	return rec.ID, false, nil
}

// keyed is requestID for a request with an Idempotency-Key.
func (f *Face) keyed(ctx context.Context, key string, rec request) (string, bool, error) {
	raw, _ := json.Marshal(rec)
	for attempt := 0; attempt < 3; attempt++ {
		if _, err := f.d.Requests.Create(ctx, key, raw); err == nil {
			return rec.ID, false, nil
		} else if !errors.Is(err, jetstream.ErrKeyExists) {
			return "", false, fmt.Errorf("remember an idempotency key: %w", err)
		}
		e, err := f.d.Requests.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // expired in between
		}
		if err != nil {
			return "", false, fmt.Errorf("look up an idempotency key: %w", err)
		}
		var prev request
		if err := json.Unmarshal(e.Value(), &prev); err != nil {
			return "", false, fmt.Errorf("read an idempotency key's request: %w", err)
		}
		if prev.Body != rec.Body {
			return "", false, &errs.Error{Code: errs.Invalid, Field: "Idempotency-Key",
				Message: "this Idempotency-Key was used with a different request; use a new key for a new request"}
		}
		return prev.ID, true, nil
	}
	return "", false, errors.New("remember an idempotency key: it keeps expiring")
}

// kvKey hashes a request's identity into a key (whatever the parts hold, the key is a valid token).
func kvKey(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "r" + hex.EncodeToString(sum[:20])
}

// isRetry reports whether a request (one that needs no ID: a delete) says it is a retry.
func isRetry(r *http.Request) bool {
	n, _ := strconv.Atoi(r.Header.Get("x-stainless-retry-count"))
	return n > 0 || r.Header.Get("Idempotency-Key") != ""
}

// canonicalJSON is a JSON body with its objects' keys sorted, so that a retry that encodes the same request again
// (another map order) is known as the same request; a body that is not JSON is kept as it is.
func canonicalJSON(body []byte) []byte {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}
