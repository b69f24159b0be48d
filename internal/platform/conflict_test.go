package platform_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/graph"
	"github.com/contrailhq/contrail/internal/adminapi"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/openaiapi"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/userstorage"
)

type noteAdded struct {
	N int `json:"n"`
}

func (noteAdded) EventType() string { return "contended.note_added" }

type notes struct{ count uint64 }

func (s *notes) Apply(events.Envelope) { s.count++ }

// TestContentionPastTheRetriesIsAConflictInEveryFace: an update that loses to other writers on every attempt ends
// with the store's conflict (issue 10 item 15: it was a 500), which every face answers as a 409 in its own shape.
func TestContentionPastTheRetriesIsAConflictInEveryFace(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	n.Store.Registry().Register(noteAdded{})
	ctx := t.Context()
	ref := events.Ref{Type: "contended", ID: "c1"}
	_, err := eventstore.Update(ctx, n.Store, ref, events.Meta{}, func(s *notes) ([]events.Event, error) {
		// Another writer gets in between every load and append.
		_, v, lerr := n.Store.Load(ctx, ref)
		if lerr != nil {
			t.Fatal(lerr)
		}
		if _, aerr := n.Store.Append(ctx, ref, v, events.Meta{}, noteAdded{N: 1}); aerr != nil {
			t.Fatal(aerr)
		}
		return []events.Event{noteAdded{N: 2}}, nil
	})
	if !errors.Is(err, eventstore.ErrConflict) {
		t.Fatalf("the contended update: %v; want a conflict", err)
	}
	faces := map[string]httpapi.Face{
		"/v1":              openaiapi.New(openaiapi.Deps{}),
		"/graphql":         graph.New(graph.Deps{}),
		"/admin":           adminapi.New(adminapi.Deps{}),
		"/api/userstorage": userstorage.NewFace(nil, nil, nil),
	}
	for prefix, f := range faces {
		rec := httptest.NewRecorder()
		f.WriteError(rec, httptest.NewRequest("POST", prefix, nil), err)
		var body struct {
			Error struct {
				Code *string `json:"code"`
			} `json:"error"`
			Errors []struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		code := ""
		switch {
		case body.Error.Code != nil:
			code = *body.Error.Code
		case len(body.Errors) > 0:
			code, _ = body.Errors[0].Extensions["code"].(string)
		}
		if rec.Code != http.StatusConflict || (code != "conflict" && code != "CONFLICT") {
			t.Errorf("%s: %d %s; want 409 with the code conflict", prefix, rec.Code, rec.Body)
		}
	}
}
