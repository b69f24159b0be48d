package openaiapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// The Open Responses compliance suite (openresponses/openresponses, scripts/compliance-test.ts) sends six requests
// to POST /v1/responses (basic-response, streaming-response, system-prompt, tool-calling, image-input, multi-turn;
// newer copies add tool-calling-streaming) and parses what comes back with zod schemas generated from the
// specification's OpenAPI document: the ResponseResource (every field required, some nullable), and each streamed
// event by its type (an unknown type fails). The suite is a bun script inside that repository, not an npm package,
// so it cannot run here; these checks are written from the specification's required fields and types, and run the
// same scenarios against a real node, plain and streamed.

// A check reports what is wrong with the value at path p (a JSON value decoded with UseNumber).
type check func(p string, v any) []string

func bad(p, want string, v any) []string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		b = append(b[:80], "..."...)
	}
	return []string{fmt.Sprintf("%s: want %s, got %s", p, want, b)}
}

func isString(p string, v any) []string {
	if _, ok := v.(string); !ok {
		return bad(p, "string", v)
	}
	return nil
}

func isNumber(p string, v any) []string {
	if _, ok := v.(json.Number); !ok {
		return bad(p, "number", v)
	}
	return nil
}

func isInteger(p string, v any) []string {
	n, ok := v.(json.Number)
	if !ok {
		return bad(p, "integer", v)
	}
	if _, err := n.Int64(); err != nil {
		return bad(p, "integer", v)
	}
	return nil
}

func isBool(p string, v any) []string {
	if _, ok := v.(bool); !ok {
		return bad(p, "boolean", v)
	}
	return nil
}

func anything(string, any) []string { return nil }

func nullable(c check) check {
	return func(p string, v any) []string {
		if v == nil {
			return nil
		}
		return c(p, v)
	}
}

func oneOf(values ...string) check {
	return func(p string, v any) []string {
		if s, ok := v.(string); !ok || !slices.Contains(values, s) {
			return bad(p, "one of "+strings.Join(values, "|"), v)
		}
		return nil
	}
}

func arrayOf(c check) check {
	return func(p string, v any) []string {
		a, ok := v.([]any)
		if !ok {
			return bad(p, "array", v)
		}
		var errs []string
		for i, e := range a {
			errs = append(errs, c(fmt.Sprintf("%s[%d]", p, i), e)...)
		}
		return errs
	}
}

// fields are an object's fields and their checks.
type fields map[string]check

// object checks that every required field is present (null only where its check allows it) and that the optional
// ones, when present, are of their type.
func object(required, optional fields) check {
	return func(p string, v any) []string {
		o, ok := v.(map[string]any)
		if !ok {
			return bad(p, "object", v)
		}
		var errs []string
		for _, k := range sortedKeys(required) {
			fv, has := o[k]
			if !has {
				errs = append(errs, fmt.Sprintf("%s.%s: required, missing", p, k))
				continue
			}
			errs = append(errs, required[k](p+"."+k, fv)...)
		}
		for _, k := range sortedKeys(optional) {
			if fv, has := o[k]; has {
				errs = append(errs, optional[k](p+"."+k, fv)...)
			}
		}
		return errs
	}
}

func sortedKeys(f fields) []string {
	out := make([]string, 0, len(f))
	for k := range f {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// byType checks an object by its "type" field; a type not listed is wrong.
func byType(kinds map[string]check) check {
	return func(p string, v any) []string {
		o, ok := v.(map[string]any)
		if !ok {
			return bad(p, "object", v)
		}
		typ, _ := o["type"].(string)
		c, ok := kinds[typ]
		if !ok {
			return bad(p+".type", "a known type", o["type"])
		}
		return c(p, v)
	}
}

// either passes when one of its checks does.
func either(cs ...check) check {
	return func(p string, v any) []string {
		var first []string
		for _, c := range cs {
			errs := c(p, v)
			if len(errs) == 0 {
				return nil
			}
			if first == nil {
				first = errs
			}
		}
		return first
	}
}

func typed(name string) check { return oneOf(name) }

// The specification's schemas, as far as the scenarios reach them.
var (
	logProb = object(fields{"token": isString, "logprob": isNumber, "bytes": arrayOf(isInteger),
		"top_logprobs": arrayOf(object(fields{"token": isString, "logprob": isNumber, "bytes": arrayOf(isInteger)}, nil))}, nil)
	contentPart = byType(map[string]check{
		"input_text": object(fields{"type": isString, "text": isString}, nil),
		// logprobs: optional in the OpenAPI document, required by the generated zod schema the suite runs
		"output_text": object(fields{"type": isString, "text": isString, "annotations": arrayOf(anything),
			"logprobs": arrayOf(logProb)}, nil),
		"refusal":     object(fields{"type": isString, "refusal": isString}, nil),
		"input_image": object(fields{"type": isString, "image_url": nullable(isString), "detail": oneOf("low", "high", "auto")}, nil),
		"input_file":  object(fields{"type": isString}, fields{"filename": isString, "file_url": isString}),
	})
	itemStatus = oneOf("in_progress", "completed", "incomplete")
	itemField  = byType(map[string]check{
		"message": object(fields{"type": isString, "id": isString, "status": itemStatus,
			"role": oneOf("user", "assistant", "system", "developer"), "content": arrayOf(contentPart)}, nil),
		"function_call": object(fields{"type": isString, "id": isString, "call_id": isString, "name": isString,
			"arguments": isString, "status": itemStatus}, nil),
		"function_call_output": object(fields{"type": isString, "id": isString, "call_id": isString,
			"output": either(isString, arrayOf(contentPart)), "status": itemStatus}, nil),
	})
	tool = byType(map[string]check{
		"function": object(fields{"type": isString, "name": isString, "description": nullable(isString),
			"parameters": nullable(object(nil, nil)), "strict": nullable(isBool)}, nil),
	})
	toolChoice = either(oneOf("none", "auto", "required"),
		object(fields{"type": typed("function")}, fields{"name": isString}),
		object(fields{"type": typed("allowed_tools"), "mode": oneOf("none", "auto", "required"),
			"tools": arrayOf(object(fields{"type": typed("function")}, fields{"name": isString}))}, nil))
	textField = object(fields{"format": byType(map[string]check{
		"text":        object(fields{"type": isString}, nil),
		"json_object": object(fields{"type": isString}, nil),
		"json_schema": object(fields{"type": isString, "name": isString, "description": nullable(isString),
			"schema": object(nil, nil), "strict": isBool}, nil),
	})}, fields{"verbosity": oneOf("low", "medium", "high")})
	usage = object(fields{"input_tokens": isInteger, "output_tokens": isInteger, "total_tokens": isInteger,
		"input_tokens_details":  object(fields{"cached_tokens": isInteger}, nil),
		"output_tokens_details": object(fields{"reasoning_tokens": isInteger}, nil)}, nil)
	responseResource = object(fields{
		"id": isString, "object": typed("response"), "created_at": isInteger, "completed_at": nullable(isInteger),
		"status": isString, "incomplete_details": nullable(object(fields{"reason": isString}, nil)), "model": isString,
		"previous_response_id": nullable(isString), "instructions": nullable(isString), "output": arrayOf(itemField),
		"error": nullable(object(fields{"code": isString, "message": isString}, nil)), "tools": arrayOf(tool),
		"tool_choice": toolChoice, "truncation": oneOf("auto", "disabled"), "parallel_tool_calls": isBool,
		"text": textField, "top_p": isNumber, "presence_penalty": isNumber, "frequency_penalty": isNumber,
		"top_logprobs": isInteger, "temperature": isNumber,
		"reasoning": nullable(object(fields{"effort": nullable(oneOf("none", "minimal", "low", "medium", "high", "xhigh")),
			"summary": nullable(oneOf("concise", "detailed", "auto"))}, nil)),
		"usage": nullable(usage), "max_output_tokens": nullable(isInteger), "max_tool_calls": nullable(isInteger),
		"store": isBool, "background": isBool, "service_tier": isString, "metadata": anything,
		"safety_identifier": nullable(isString), "prompt_cache_key": nullable(isString),
	}, fields{"conversation": nullable(object(fields{"id": isString}, nil))})
	// openaiNode is what openai-node 7's Response type requires beyond the specification.
	openaiNode = object(fields{"access_programs": nullable(object(fields{"cyber": isString}, nil))}, nil)
)

// streamEvent is each streamed event the suite knows, by type; it fails on any other.
func streamEvent() check {
	at := func(extra fields) check {
		f := fields{"type": isString, "sequence_number": isInteger}
		for k, c := range extra {
			f[k] = c
		}
		return object(f, nil)
	}
	withOpt := func(extra, opt fields) check {
		f := fields{"type": isString, "sequence_number": isInteger}
		for k, c := range extra {
			f[k] = c
		}
		return object(f, opt)
	}
	resp := at(fields{"response": responseResource})
	item := at(fields{"output_index": isInteger, "item": nullable(itemField)})
	part := at(fields{"item_id": isString, "output_index": isInteger, "content_index": isInteger, "part": contentPart})
	return byType(map[string]check{
		"response.created": resp, "response.queued": resp, "response.in_progress": resp, "response.completed": resp,
		"response.failed": resp, "response.incomplete": resp,
		"response.output_item.added": item, "response.output_item.done": item,
		"response.content_part.added": part, "response.content_part.done": part,
		"response.output_text.delta": withOpt(fields{"item_id": isString, "output_index": isInteger, "content_index": isInteger,
			"delta": isString}, fields{"logprobs": arrayOf(logProb)}),
		"response.output_text.done": withOpt(fields{"item_id": isString, "output_index": isInteger, "content_index": isInteger,
			"text": isString}, fields{"logprobs": arrayOf(logProb)}),
		"response.output_text.annotation.added": at(fields{"item_id": isString, "output_index": isInteger,
			"content_index": isInteger, "annotation_index": isInteger, "annotation": nullable(anything)}),
		"response.refusal.delta":                 at(fields{"item_id": isString, "output_index": isInteger, "content_index": isInteger, "delta": isString}),
		"response.refusal.done":                  at(fields{"item_id": isString, "output_index": isInteger, "content_index": isInteger, "refusal": isString}),
		"response.function_call_arguments.delta": at(fields{"item_id": isString, "output_index": isInteger, "delta": isString}),
		"response.function_call_arguments.done":  at(fields{"item_id": isString, "output_index": isInteger, "arguments": isString}),
		"error": at(fields{"error": object(fields{"type": isString, "code": nullable(isString), "message": isString,
			"param": nullable(isString)}, nil)}),
	})
}

// decodeJSON decodes with numbers kept as written, so that an integer field holding 1.5 is seen.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// complianceScenario is one of the suite's requests, and what is checked beyond the schema.
type complianceScenario struct {
	name string
	body string
	// wantType is an output item type the response must have.
	wantType string
	// model checks the request the model got.
	model func(t *testing.T, req llmtest.Request)
}

const weatherTools = `"tools":[{"type":"function","name":"get_weather","description":"Get the current weather for a location",
	"parameters":{"type":"object","properties":{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"}},"required":["location"]}}]`

// A small PNG as a data URL, as the suite sends one.
const pixelPNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"

func complianceScenarios() []complianceScenario {
	return []complianceScenario{
		{name: "basic-response", body: `{"model":"gpt-4o-mini","input":[{"type":"message","role":"user","content":"Say hello in exactly 3 words."}]}`,
			wantType: "message"},
		{name: "streaming-response", body: `{"model":"gpt-4o-mini","input":[{"type":"message","role":"user","content":"Count from 1 to 5."}]}`,
			wantType: "message"},
		{name: "system-prompt", body: `{"model":"gpt-4o-mini","input":[{"type":"message","role":"system","content":"You are a pirate. Always respond in pirate speak."},
			{"type":"message","role":"user","content":"Say hello."}]}`, wantType: "message",
			model: func(t *testing.T, req llmtest.Request) {
				if got := roles(req); len(got) != 2 || got[0] != "system:You are a pirate. Always respond in pirate speak." {
					t.Errorf("model got %q", got)
				}
			}},
		{name: "tool-calling", body: `{"model":"gpt-4o-mini","input":[{"type":"message","role":"user","content":"What's the weather like in San Francisco?"}],` + weatherTools + `}`,
			wantType: "function_call",
			model: func(t *testing.T, req llmtest.Request) {
				if len(req.Tools) != 1 || req.Tools[0].Name != "get_weather" {
					t.Errorf("model got tools %+v", req.Tools)
				}
			}},
		{name: "image-input", body: `{"model":"gpt-4o-mini","input":[{"type":"message","role":"user","content":[
			{"type":"input_text","text":"What do you see in this image? Answer in one sentence."},
			{"type":"input_image","image_url":"` + pixelPNG + `"}]}]}`, wantType: "message",
			model: func(t *testing.T, req llmtest.Request) {
				m := req.LastMessage()
				if m.Content != "What do you see in this image? Answer in one sentence." || len(m.Images) != 1 || m.Images[0].URL != pixelPNG {
					t.Errorf("the model got %+v", m)
				}
			}},
		{name: "multi-turn", body: `{"model":"gpt-4o-mini","input":[{"type":"message","role":"user","content":"My name is Alice."},
			{"type":"message","role":"assistant","content":"Hello Alice! Nice to meet you. How can I help you today?"},
			{"type":"message","role":"user","content":"What is my name?"}]}`, wantType: "message",
			model: func(t *testing.T, req llmtest.Request) {
				want := []string{"user:My name is Alice.", "assistant:Hello Alice! Nice to meet you. How can I help you today?", "user:What is my name?"}
				if got := roles(req); strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("model got %q, want %q", got, want)
				}
			}},
	}
}

// TestResponsesCompliance runs the compliance suite's scenarios, each as JSON and streamed, and checks every
// field the specification requires of the response (and of each event, and of the response in
// response.completed), its type and where it may be null; then what the suite checks besides (output, status
// completed, the function call), and the same response read back with GET.
func TestResponsesCompliance(t *testing.T) {
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if req.LastMessage().Content == "fail" {
			return llmtest.Error(http.StatusBadRequest, "This model cannot answer that.")
		}
		if len(req.Tools) > 0 {
			return llmtest.ToolCalls(llm.ToolCall{Name: "get_weather", Arguments: `{"location":"San Francisco, CA"}`})
		}
		return llmtest.Text("Ahoy there, matey, five words.")
	})
	for _, sc := range complianceScenarios() {
		for _, stream := range []bool{false, true} {
			name := sc.name
			if stream {
				name += "/streamed"
			}
			t.Run(name, func(t *testing.T) {
				before := len(e.model.Requests())
				body := sc.body
				if stream {
					body = strings.TrimSuffix(body, "}") + `,"stream":true}`
				}
				var resp map[string]any
				if stream {
					var seen []string
					resp, seen = e.complianceStream(t, body)
					if sc.wantType == "function_call" {
						// tool-calling-streaming: the call's item and its arguments are streamed
						for _, want := range []string{"response.output_item.added:function_call", "response.function_call_arguments.delta",
							"response.function_call_arguments.done", "response.output_item.done:function_call"} {
							if !slices.Contains(seen, want) {
								t.Errorf("no %s in %q", want, seen)
							}
						}
					}
				} else {
					resp = e.compliancePost(t, body)
				}
				if resp == nil {
					return
				}
				if errs := append(responseResource("response", resp), openaiNode("response", resp)...); len(errs) > 0 {
					t.Errorf("response:\n%s", strings.Join(errs, "\n"))
				}
				checkSemantics(t, resp, sc.wantType)
				if sc.model != nil {
					reqs := e.model.Requests()
					if len(reqs) != before+1 {
						t.Fatalf("model asked %d times", len(reqs)-before)
					}
					sc.model(t, reqs[before])
				}
				id, _ := resp["id"].(string)
				if stream {
					// the replay of the stream, from the log, passes the same checks
					replayed, _ := e.complianceSSE(t, "GET", "/v1/responses/"+id+"?stream=true", "")
					if errs := responseResource("replayed", replayed); len(errs) > 0 {
						t.Errorf("replayed:\n%s", strings.Join(errs, "\n"))
					}
				}
				got := e.complianceGet(t, id)
				if errs := responseResource("retrieved", got); len(errs) > 0 {
					t.Errorf("retrieved:\n%s", strings.Join(errs, "\n"))
				}
				items := e.complianceJSON(t, "GET", "/v1/responses/"+id+"/input_items", "")
				if errs := arrayOf(itemField)("input_items.data", items["data"]); len(errs) > 0 {
					t.Errorf("input items:\n%s", strings.Join(errs, "\n"))
				}
			})
		}
	}

	// A response that fails, streamed: the error event is the specification's ({type, sequence_number, error:
	// {type, code, message, param}}), and the response in response.failed says why.
	t.Run("failed/streamed", func(t *testing.T) {
		resp, seen := e.complianceStream(t, `{"model":"gpt-4o-mini","input":"fail","stream":true}`)
		if errs := responseResource("response", resp); len(errs) > 0 {
			t.Errorf("response:\n%s", strings.Join(errs, "\n"))
		}
		if resp["status"] != "failed" || resp["error"] == nil || resp["completed_at"] != nil {
			t.Errorf("failed response: status %v, error %v, completed_at %v", resp["status"], resp["error"], resp["completed_at"])
		}
		if i := slices.Index(seen, "error"); i < 0 || i+1 >= len(seen) || seen[i+1] != "response.failed" {
			t.Errorf("events %q: want error, then response.failed", seen)
		}
		// openai-go ends a stream at a frame with an error object, with that error: the failure is its Err().
		stream := e.client.Responses.NewStreaming(ctxFor(t), responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("fail")})
		for stream.Next() {
		}
		if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "This model cannot answer that.") {
			t.Errorf("openai-go stream of a failed response: %v", err)
		}
	})

	// What a request set is what the response says was used, in the shape the specification gives it: reasoning
	// has both effort and summary, text both format and verbosity.
	t.Run("echoed-settings", func(t *testing.T) {
		resp := e.compliancePost(t, `{"model":"gpt-4o-mini","input":"hi","reasoning":{"effort":"low"},"text":{"verbosity":"low"}}`)
		if errs := responseResource("response", resp); len(errs) > 0 {
			t.Errorf("response:\n%s", strings.Join(errs, "\n"))
		}
		r, _ := resp["reasoning"].(map[string]any)
		if r["effort"] != "low" {
			t.Errorf("reasoning %v", resp["reasoning"])
		}
		text, _ := resp["text"].(map[string]any)
		if text["verbosity"] != "low" {
			t.Errorf("text %v", resp["text"])
		}
		resp = e.compliancePost(t, `{"model":"gpt-4o-mini","input":"hi","text":{"format":{"type":"json_schema","name":"city",
			"schema":{"type":"object","properties":{"city":{"type":"string"}}}}}}`)
		if errs := responseResource("response", resp); len(errs) > 0 {
			t.Errorf("response:\n%s", strings.Join(errs, "\n"))
		}
	})

	// The settings the specification defines and the node does not apply are still checked: a wrong type or range
	// is a 400 naming the field; a right one is accepted.
	t.Run("unapplied-settings", func(t *testing.T) {
		for body, param := range map[string]string{
			`"presence_penalty":"high"`: "presence_penalty", `"frequency_penalty":3`: "frequency_penalty",
			`"top_logprobs":1.5`: "top_logprobs", `"top_logprobs":21`: "top_logprobs",
			`"safety_identifier":7`: "safety_identifier", `"prompt_cache_key":{}`: "prompt_cache_key",
		} {
			r := e.complianceDo(t, "POST", "/v1/responses", `{"model":"gpt-4o-mini","input":"hi",`+body+`}`)
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			got := checkErrorBody(t, r.StatusCode, b)
			if r.StatusCode != http.StatusBadRequest || string(got.Error.Param) != `"`+param+`"` {
				t.Errorf("%s: HTTP %d: %s", body, r.StatusCode, b)
			}
		}
		resp := e.compliancePost(t, `{"model":"gpt-4o-mini","input":"hi","presence_penalty":0.5,"frequency_penalty":-1,
			"top_logprobs":3,"safety_identifier":"user-1","prompt_cache_key":"k"}`)
		if errs := responseResource("response", resp); len(errs) > 0 {
			t.Errorf("response:\n%s", strings.Join(errs, "\n"))
		}
	})

	// An image larger than a few kilobytes is kept whole (a clipped data URL is a broken image); one larger than an
	// event can hold is refused, naming the parameter.
	t.Run("image-kept-whole", func(t *testing.T) {
		big := "data:image/png;base64," + strings.Repeat("QUFB", 8<<10) // 32 KiB of base64
		resp := e.compliancePost(t, `{"model":"gpt-4o-mini","input":[{"type":"message","role":"user","content":[
			{"type":"input_text","text":"What is this?"},{"type":"input_image","image_url":"`+big+`","detail":"low"}]}]}`)
		id, _ := resp["id"].(string)
		items := e.complianceJSON(t, "GET", "/v1/responses/"+id+"/input_items", "")
		data, _ := items["data"].([]any)
		if len(data) != 1 {
			t.Fatalf("input items: %v", items["data"])
		}
		content, _ := data[0].(map[string]any)["content"].([]any)
		if len(content) != 2 {
			t.Fatalf("content: %v", content)
		}
		part, _ := content[1].(map[string]any)
		if part["image_url"] != big || part["detail"] != "low" {
			t.Errorf("image part: detail %v, image_url of %d bytes, sent %d", part["detail"], len(fmt.Sprint(part["image_url"])), len(big))
		}

		huge := "data:image/png;base64," + strings.Repeat("QUFB", 300<<10) // 1.2 MiB
		r := e.complianceDo(t, "POST", "/v1/responses", `{"model":"gpt-4o-mini","input":[{"type":"message","role":"user","content":[
			{"type":"input_image","image_url":"`+huge+`"}]}]}`)
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		got := checkErrorBody(t, r.StatusCode, b)
		if r.StatusCode != http.StatusBadRequest || string(got.Error.Param) != `"input[0].content[0].image_url"` {
			t.Errorf("a huge image: HTTP %d: %s", r.StatusCode, b)
		}
		r = e.complianceDo(t, "POST", "/v1/responses", `{"model":"gpt-4o-mini","input":[{"type":"message","role":"user","content":[
			{"type":"input_image","image_url":"`+pixelPNG+`","detail":"ultra"}]}]}`)
		b, _ = io.ReadAll(r.Body)
		r.Body.Close()
		got = checkErrorBody(t, r.StatusCode, b)
		if r.StatusCode != http.StatusBadRequest || string(got.Error.Param) != `"input[0].content[0].detail"` {
			t.Errorf("an unknown detail: HTTP %d: %s", r.StatusCode, b)
		}
	})
}

func checkSemantics(t *testing.T, resp map[string]any, wantType string) {
	t.Helper()
	if resp["status"] != "completed" {
		t.Errorf("status %v, want completed", resp["status"])
	}
	if _, ok := resp["completed_at"].(json.Number); !ok {
		t.Errorf("completed_at %v on a completed response", resp["completed_at"])
	}
	if resp["usage"] == nil {
		t.Errorf("no usage on a completed response")
	}
	out, _ := resp["output"].([]any)
	if len(out) == 0 {
		t.Errorf("no output items")
	}
	found := false
	for _, it := range out {
		if m, _ := it.(map[string]any); m["type"] == wantType {
			found = true
		}
	}
	if !found {
		t.Errorf("no output item of type %s", wantType)
	}
}

func (e *env) complianceDo(t *testing.T, method, path, body string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctxFor(t), method, e.node.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (e *env) compliancePost(t *testing.T, body string) map[string]any {
	t.Helper()
	return e.complianceJSON(t, "POST", "/v1/responses", body)
}

func (e *env) complianceGet(t *testing.T, id string) map[string]any {
	t.Helper()
	return e.complianceJSON(t, "GET", "/v1/responses/"+id, "")
}

func (e *env) complianceJSON(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	resp := e.complianceDo(t, method, path, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, b)
	}
	v, err := decodeJSON(b)
	if err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	o, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s %s: not an object: %s", method, path, b)
	}
	return o
}

// complianceStream reads a streamed response as the suite's SSE parser does (event: and data: lines, a blank line
// ending each, data: [DONE] skipped), checks each event, the numbering and the order, and returns the response of
// the terminal event and the events' types (an output item's with its item's type: "response.output_item.added:message").
func (e *env) complianceStream(t *testing.T, body string) (map[string]any, []string) {
	t.Helper()
	return e.complianceSSE(t, "POST", "/v1/responses", body)
}

func (e *env) complianceSSE(t *testing.T, method, path, body string) (map[string]any, []string) {
	t.Helper()
	resp := e.complianceDo(t, method, path, body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q", ct)
	}
	check := streamEvent()
	var final map[string]any
	var types, seen []string
	var id string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			data = strings.TrimSpace(line[len("data:"):])
		case line == "" && data != "":
			if data == "[DONE]" {
				event, data = "", ""
				continue
			}
			v, err := decodeJSON([]byte(data))
			if err != nil {
				t.Fatalf("event %d: %v: %s", len(types), err, data)
			}
			ev, _ := v.(map[string]any)
			typ, _ := ev["type"].(string)
			if errs := check(fmt.Sprintf("event[%d](%s)", len(types), typ), v); len(errs) > 0 {
				t.Errorf("%s", strings.Join(errs, "\n"))
			}
			if event != "" && event != typ {
				t.Errorf("event %d: event: %s, type %s", len(types), event, typ)
			}
			if n, _ := ev["sequence_number"].(json.Number); n.String() != fmt.Sprint(len(types)) {
				t.Errorf("event %d (%s): sequence_number %v", len(types), typ, ev["sequence_number"])
			}
			if r, ok := ev["response"].(map[string]any); ok {
				if id == "" {
					id, _ = r["id"].(string)
				} else if r["id"] != id {
					t.Errorf("event %d (%s): response id %v, first %s", len(types), typ, r["id"], id)
				}
			}
			switch typ {
			case "response.completed", "response.failed", "response.incomplete":
				final, _ = ev["response"].(map[string]any)
			}
			types = append(types, typ)
			if it, ok := ev["item"].(map[string]any); ok {
				typ += ":" + fmt.Sprint(it["type"])
			}
			seen = append(seen, typ)
			event, data = "", ""
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if len(types) == 0 || types[0] != "response.created" {
		t.Errorf("stream starts %q, want response.created", types)
	}
	if final == nil {
		t.Fatalf("no terminal event in %q", types)
	}
	return final, seen
}
