package llmtest

import (
	"io"
	"net/http"

	"github.com/contrailhq/contrail/internal/llm/openaiwire"
)

// decodeRequest reads and checks a request the way OpenAI does, with its error messages.
func decodeRequest(r *http.Request) (Request, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return Request{}, &openaiwire.Rejection{Message: "could not read the body: " + err.Error()}
	}
	w, err := openaiwire.DecodeRequest(body)
	if err != nil {
		return Request{}, err
	}
	return Request{Request: w, Header: r.Header.Clone(), Body: body}, nil
}

// completion is the non-streamed answer: a chat.completion object.
func (a answer) completion() openaiwire.Completion {
	return a.wire().Completion()
}

func (a answer) wire() openaiwire.Answer {
	return openaiwire.Answer{ID: a.id, Model: a.model, Created: a.created, Fingerprint: "fp_llmtest", Text: a.text,
		ToolCalls: a.calls, Finish: a.finish, Usage: a.usage}
}
