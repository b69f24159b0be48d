package openaiapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// Model is a model this node can run, as GET /v1/models lists it: an ID to give as an assistant's or run's
// `model`, and who provides it (the built-in offline model, or the configured OpenAI-compatible server).
type Model struct {
	ID      string
	OwnedBy string
}

// modelObject is OpenAI's model object.
type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (f *Face) modelObject(m Model) modelObject {
	return modelObject{ID: m.ID, Object: "model", Created: f.created, OwnedBy: m.OwnedBy}
}

// listModels answers OpenAI's list of models: what the node was configured with, not every model an upstream
// server may have.
func (f *Face) listModels(w http.ResponseWriter, _ *http.Request) {
	out := struct {
		Object string        `json:"object"`
		Data   []modelObject `json:"data"`
	}{Object: "list", Data: []modelObject{}}
	for _, m := range f.d.ListedModels {
		out.Data = append(out.Data, f.modelObject(m))
	}
	writeJSON(w, out)
}

// getModel answers one model of the list. IDs may hold a '/' (provider/name), hence the catch-all route.
func (f *Face) getModel(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "*")
	for _, m := range f.d.ListedModels {
		if m.ID == id {
			writeJSON(w, f.modelObject(m))
			return
		}
	}
	// OpenAI's words for a model that is not there; the ID is not echoed (it may be anything, of any length).
	f.writeError(w, r, http.StatusNotFound, errorObject{Message: "The model does not exist or you do not have access to it; " +
		"GET /v1/models lists the models this server runs.", Type: "invalid_request_error", Param: strp("model"), Code: strp("model_not_found")})
}
