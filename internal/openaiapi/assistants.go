package openaiapi

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/projections"
)

// assistantSpec reads the settings of a create or modify request into spec; on a modify only the fields sent
// change (null clears a nullable field).
func (f *Face) assistantSpec(in fields, spec *events.AssistantSpec) error {
	if in.has("model") {
		m, err := in.str("model")
		if err != nil {
			return err
		}
		if err := f.checkModel("model", m); err != nil {
			return err
		}
		spec.Model = m
	}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"name", &spec.Name}, {"description", &spec.Description}, {"instructions", &spec.Instructions}} {
		if in.has(f.name) {
			v, err := in.optStr(f.name)
			if err != nil {
				return err
			}
			*f.dst = v
		}
	}
	if in.has("tools") {
		tools, _, err := in.tools("tools")
		if err != nil {
			return err
		}
		spec.Tools = tools
	}
	if in.has("tool_resources") {
		tr, err := in.raw("tool_resources", false)
		if err != nil {
			return err
		}
		spec.ToolResources = tr
	}
	if in.has("metadata") {
		m, err := in.metadata("metadata")
		if err != nil {
			return err
		}
		spec.Metadata = m
	}
	for _, f := range []struct {
		name string
		dst  **float64
	}{{"temperature", &spec.Temperature}, {"top_p", &spec.TopP}} {
		if in.has(f.name) {
			v, err := in.optFloat(f.name)
			if err != nil {
				return err
			}
			*f.dst = v
		}
	}
	if in.has("response_format") {
		rf, err := in.raw("response_format", true)
		if err != nil {
			return err
		}
		spec.ResponseFormat = rf
	}
	if in.has("reasoning_effort") {
		re, err := in.str("reasoning_effort")
		if err != nil {
			return err
		}
		spec.ReasoningEffort = re
	}
	return nil
}

// checkModel refuses a model that names a provider this server does not have.
func (f *Face) checkModel(param, model string) error {
	if model == "" || f.d.Models == nil {
		return nil
	}
	if _, _, err := f.d.Models.Resolve(model); err != nil {
		if errors.Is(err, llm.ErrBadRequest) {
			return errs.InvalidField(param, "%s", err.Error())
		}
		return err
	}
	return nil
}

func (f *Face) createAssistant(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	var spec events.AssistantSpec
	if err := f.assistantSpec(in, &spec); err != nil {
		f.WriteError(w, r, err)
		return
	}
	id, res, err := f.d.Assistants.Create(r.Context(), principal(r), spec)
	if err := f.shownOrDone(r, res, err, projections.Assistants{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerAssistant(w, r, id)
}

// answerAssistant answers an assistant of the caller's once the assistants read model shows its last event, or else
// from the log (ownedShown).
func (f *Face) answerAssistant(w http.ResponseWriter, r *http.Request, id string) {
	a, err := ownedShown[projections.AssistantView](f, r, projections.Assistants{}, "assistant", ids.Assistant, id,
		errs.NotFoundf("assistant", id))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, assistantWire(a))
}

func (f *Face) getAssistant(w http.ResponseWriter, r *http.Request) {
	f.answerAssistant(w, r, chi.URLParam(r, "assistant_id"))
}

func (f *Face) modifyAssistant(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "assistant_id")
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	// Read the request once into a patch; the command applies it to the assistant as the log has it.
	var patch events.AssistantSpec
	if err := f.assistantSpec(in, &patch); err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Assistants.Modify(r.Context(), principal(r), id, func(s *events.AssistantSpec) {
		// Reapplying the request to the current settings changes exactly the fields it sent.
		_ = f.assistantSpec(in, s)
	})
	if err := f.shownOrDone(r, res, err, projections.Assistants{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerAssistant(w, r, id)
}

func (f *Face) deleteAssistant(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "assistant_id")
	res, err := f.d.Assistants.Delete(r.Context(), principal(r), id)
	if err := f.shownOrDone(r, res, err, projections.Assistants{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, deleted{ID: id, Object: "assistant.deleted", Deleted: true})
}

func (f *Face) listAssistants(w http.ResponseWriter, r *http.Request) {
	listOwned(f, w, r, projections.Assistants{}, func(a projections.AssistantView) string { return a.ID }, assistantWire)
}
