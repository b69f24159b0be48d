package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// SSE writes server-sent events, each flushed as it is written.
type SSE struct {
	w http.ResponseWriter
	f http.Flusher
	n int
}

// StartSSE answers 200 with an event stream, unbuffered by proxies.
func StartSSE(w http.ResponseWriter) *SSE {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	s := &SSE{w: w, f: f}
	s.flush()
	return s
}

func (s *SSE) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

// Send writes one event: its name (none when empty), a numbered id, and v as JSON data. It reports false once the
// client is gone.
func (s *SSE) Send(event string, v any) bool {
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	s.n++
	if event != "" {
		_, err = fmt.Fprintf(s.w, "id: %d\nevent: %s\ndata: %s\n\n", s.n, event, raw)
	} else {
		_, err = fmt.Fprintf(s.w, "data: %s\n\n", raw)
	}
	if err != nil {
		return false
	}
	s.flush()
	return true
}
