package julepapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/ids"
)

// maxBody bounds a request body (a doc's content and a chat's messages are the big ones).
const maxBody = 4 << 20

// readBody reads a request's body, bounded.
func readBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errs.E(errs.TooLarge, "the request body is larger than %d bytes", maxBody)
		}
		return nil, errs.E(errs.Invalid, "could not read the request body: %v", err)
	}
	return raw, nil
}

// decode reads a JSON object into v, naming the field at fault in a 422 (Julep's validation error). An empty body
// is an empty object.
func decode(raw []byte, v any) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		t = []byte("{}")
	}
	if t[0] != '{' {
		return errs.InvalidField("body", "the body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return errs.InvalidField(te.Field, "%s must be %s, not %s", te.Field, kind(te.Type.Kind().String()), te.Value)
		}
		return errs.InvalidField("body", "the body is not valid JSON: %v", err)
	}
	return nil
}

// kind names a Go kind as JSON names types.
func kind(k string) string {
	switch {
	case k == "string":
		return "a string"
	case k == "bool":
		return "a boolean"
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "an integer"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "slice" || k == "array":
		return "a list"
	case k == "map" || k == "struct":
		return "an object"
	}
	return "another type"
}

// location splits a field path ("messages[0].content") into the parts of a validation error's loc.
func location(field string) []any {
	var out []any
	for _, part := range strings.Split(field, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			if n, err := strconv.Atoi(idx); err == nil {
				out = append(out, n)
			}
			_, rest, _ = strings.Cut(after, "[")
		}
	}
	return out
}

// checkUUID refuses what is not a UUID, naming the parameter (a 400 for a path's, a 422 for a body's).
func checkUUID(param, s string) error {
	if ids.IsUUID(s) {
		return nil
	}
	return errs.InvalidField(param, "invalid '%s': expected a UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)", param)
}

func canonical(s string) string { return ids.CanonicalUUID(s) }

// present is a JSON field that may be absent, null or a value: PATCH tells the three apart.
type present[T any] struct {
	Set   bool
	Null  bool
	Value T
}

func (p *present[T]) UnmarshalJSON(b []byte) error {
	p.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		p.Null = true
		return nil
	}
	return json.Unmarshal(b, &p.Value)
}

// ptr is the value when it was sent and is not null.
func (p present[T]) ptr() *T {
	if !p.Set || p.Null {
		return nil
	}
	v := p.Value
	return &v
}

// jsonTime is how Julep writes times.
func jsonTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// orObject is a stored JSON object as the API shows it: {} when none was given.
func orObject(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return json.RawMessage("{}")
	}
	return raw
}

// created answers 201 with v.
func created(w http.ResponseWriter, v any) { httpapi.WriteJSON(w, http.StatusCreated, v) }

// ok answers 200 with v.
func ok(w http.ResponseWriter, v any) { httpapi.WriteJSON(w, http.StatusOK, v) }

// deleted is Julep's answer to a delete (202).
func deleted(w http.ResponseWriter, id string, at time.Time) {
	httpapi.WriteJSON(w, http.StatusAccepted, map[string]any{"id": id, "deleted_at": jsonTime(at), "jobs": []string{}})
}
