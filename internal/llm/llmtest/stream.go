package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// argChunkBytes is about how much of a tool call's arguments OpenAI sends per chunk (a token or two).
const argChunkBytes = 7

// writeStream sends the answer as server-sent events the way OpenAI does: a first chunk with the role, a chunk per
// piece of text or of tool-call arguments, a last chunk with the finish reason and an empty delta, a usage chunk
// with no choices when the request asked for it, and "data: [DONE]".
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, req Request, reply Reply, a answer) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	var nullUsage *wireUsage
	base := func() chunk {
		c := chunk{ID: a.id, Object: "chat.completion.chunk", Created: a.created, Model: a.model, SystemFingerprint: "fp_llmtest"}
		if req.IncludeUsage {
			c.Usage = &nullUsage
		}
		return c
	}
	send := func(c chunk) bool {
		b, err := json.Marshal(c)
		if err != nil {
			s.t.Errorf("llmtest: encode chunk: %v", err)
			return false
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	pieces := 0
	// piece sends one piece of the answer, then stalls or breaks the stream if the reply says so.
	piece := func(d chunkDelta) bool {
		if pieces+1 == reply.hangAt {
			select {
			case <-r.Context().Done():
			case <-s.done:
			}
			return false
		}
		if pieces+1 == reply.dropAt {
			// Abort the handler: the server cuts the connection without ending the chunked body.
			panic(http.ErrAbortHandler)
		}
		c := base()
		c.Choices = []chunkChoice{{Delta: d}}
		pieces++
		return send(c)
	}

	first := base()
	role := chunkDelta{Role: "assistant"}
	if len(a.calls) == 0 {
		empty := ""
		role.Content = &empty
	}
	first.Choices = []chunkChoice{{Delta: role}}
	if !send(first) {
		return
	}
	for _, text := range a.chunks {
		t := text
		if !piece(chunkDelta{Content: &t}) {
			return
		}
	}
	for i, call := range a.calls {
		idx := i
		args := splitRunes(call.Arguments, argChunkBytes)
		head := ""
		if len(args) > 0 {
			head, args = args[0], args[1:]
		}
		if !piece(chunkDelta{ToolCalls: []wireToolCall{{Index: &idx, ID: call.ID, Type: "function",
			Function: wireFunctionCall{Name: call.Name, Arguments: head}}}}) {
			return
		}
		for _, part := range args {
			if !piece(chunkDelta{ToolCalls: []wireToolCall{{Index: &idx, Function: wireFunctionCall{Arguments: part}}}}) {
				return
			}
		}
	}
	if pieces+1 == reply.hangAt || pieces+1 == reply.dropAt {
		// Stall or break before the finish chunk.
		piece(chunkDelta{})
		return
	}
	last := base()
	finish := a.finish
	last.Choices = []chunkChoice{{Delta: chunkDelta{}, FinishReason: &finish}}
	if !send(last) {
		return
	}
	if req.IncludeUsage && a.usage != nil {
		u := toWireUsage(a.usage)
		c := base()
		c.Choices = []chunkChoice{}
		c.Usage = &u
		if !send(c) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// splitRunes cuts s into pieces of about n bytes without splitting a character.
func splitRunes(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
