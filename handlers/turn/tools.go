package turn

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/llm"
)

// The function names the server tools are offered to the model by (and the tool types of both APIs).
const (
	FileSearch      = "file_search"
	CodeInterpreter = "code_interpreter"
)

// FileSearchTool is how file_search is offered to the model: a function the caller answers. example is a marker as
// the caller writes them (see SearchReport); the description tells the model to cite by copying markers, which the
// final answer's citations are made from.
func FileSearchTool(example string) llm.Tool {
	return llm.Tool{
		Name: FileSearch,
		Description: "Search the files provided for this conversation. Each result starts with a marker such as " + example +
			"; when you use a result, cite it by copying its marker into your answer. If nothing relevant is found, " +
			"say so rather than answer from memory.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"queries":{"type":"array","items":{"type":"string"},` +
			`"description":"One or more search queries, each a complete question or phrase."}},"required":["queries"]}`),
	}
}

// CodeTool is how code_interpreter is offered to the model.
var CodeTool = llm.Tool{
	Name: CodeInterpreter,
	Description: "Run Python 3 code in a sandbox without network access, like a notebook cell: variables stay " +
		"between calls of this conversation. The user's files are in /mnt/data; save files you make there (charts " +
		"as PNG with matplotlib). What the code prints is returned.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"The Python code to run."}},"required":["code"]}`),
}

// FunctionTool is a client's function as the model gets it. strict is passed on only with parameters: a strict
// function needs a schema, and a model refuses one without.
func FunctionTool(name, description string, parameters json.RawMessage, strict *bool) llm.Tool {
	return llm.Tool{Name: name, Description: description, Parameters: parameters,
		Strict: strict != nil && *strict && len(parameters) > 0}
}

// SearchQueries reads a file_search call's arguments: {"queries": [...]}, or {"query": "..."} as some models write.
func SearchQueries(args string) ([]string, error) {
	var a struct {
		Queries []string `json:"queries"`
		Query   string   `json:"query"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return nil, fmt.Errorf("the call's arguments are not the JSON object {\"queries\": [...]}: %v", err)
	}
	if a.Query != "" {
		a.Queries = append(a.Queries, a.Query)
	}
	if len(a.Queries) == 0 {
		return nil, errors.New("the call gives no queries")
	}
	return a.Queries, nil
}

// CodeOf reads a code_interpreter call's arguments: {"code": "..."}; a model that sends bare code is taken at its
// word.
func CodeOf(args string) (string, error) {
	var a struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		if strings.TrimSpace(args) != "" && !strings.HasPrefix(strings.TrimSpace(args), "{") {
			return args, nil
		}
		return "", fmt.Errorf("the call's arguments are not the JSON object {\"code\": \"...\"}: %v", err)
	}
	if strings.TrimSpace(a.Code) == "" {
		return "", errors.New("the call gives no code")
	}
	return a.Code, nil
}

// FailureCode names a failed model call as both APIs report it: rate_limit_exceeded, invalid_prompt (the model
// refused the request) or server_error.
func FailureCode(err error) string {
	switch {
	case errors.Is(err, llm.ErrRateLimited):
		return "rate_limit_exceeded"
	case errors.Is(err, llm.ErrBadRequest):
		return "invalid_prompt"
	}
	return "server_error"
}

// CallID is the ID a tool call is known by: the model's, or one derived from base and name (the turn and the
// call's place in it) when the model gave none, so that a turn done again names it alike.
func CallID(modelID, base, name string) string {
	if modelID != "" {
		return modelID
	}
	return "call_" + events.DeriveID(base, name)
}

// AfterCalls is a turn's tool_choice once the model has called a tool earlier in the same run or response (called):
// a choice that forces a call ("required", or one tool by name) holds until the model has called, as OpenAI's
// does ("the model must call one or more tools before responding"), and then the model may answer: "auto". Left
// forced, a model that obeys would call the tool on every turn and never answer. "auto", "none" and the model's
// default ("") stay as they are.
func AfterCalls(choice string, called bool) string {
	switch {
	case !called, choice == "", choice == "auto", choice == "none":
		return choice
	}
	return "auto"
}
