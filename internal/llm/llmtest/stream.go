package llmtest

import (
	"net/http"
	"unicode/utf8"

	"github.com/contrailhq/contrail/internal/llm/openaiwire"
)

// argChunkBytes is about how much of a tool call's arguments OpenAI sends per chunk (a token or two).
const argChunkBytes = 7

// writeStream sends the answer as server-sent events the way OpenAI does (see openaiwire.Stream), stalling or
// breaking the stream where the reply says so.
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, req Request, reply Reply, a answer) {
	st := openaiwire.NewStream(w, a.wire(), req.IncludeUsage)
	pieces := 0
	// fault stalls or breaks the stream before the next piece if the reply says so, and reports whether it did.
	fault := func() bool {
		if pieces+1 == reply.hangAt {
			select {
			case <-r.Context().Done():
			case <-s.done:
			}
			return true
		}
		if pieces+1 == reply.dropAt {
			// Abort the handler: the server cuts the connection without ending the chunked body.
			panic(http.ErrAbortHandler)
		}
		pieces++
		return false
	}
	if st.Start(len(a.calls) > 0) != nil {
		return
	}
	for _, text := range a.chunks {
		if fault() || st.Text(text) != nil {
			return
		}
	}
	for i, call := range a.calls {
		args := splitRunes(call.Arguments, argChunkBytes)
		head := ""
		if len(args) > 0 {
			head, args = args[0], args[1:]
		}
		if fault() || st.ToolCall(i, call.ID, call.Name, head) != nil {
			return
		}
		for _, part := range args {
			if fault() || st.ToolCall(i, "", "", part) != nil {
				return
			}
		}
	}
	if fault() { // stall or break before the finish chunk
		return
	}
	if err := st.Finish(a.finish, a.usage); err != nil {
		s.t.Logf("llmtest: stream: %v", err)
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
