package httpapi

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/contrailhq/contrail/internal/metrics"
)

// accessLog logs each request: method, path (never the query, which may hold a URL signature, nor any header) and
// status; and counts it per face.
func accessLog(logger *slog.Logger, m *metrics.Metrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			level := slog.LevelDebug
			if status >= 500 {
				level = slog.LevelWarn
			}
			logger.Log(r.Context(), level, "http", "method", r.Method, "path", r.URL.Path, "status", status,
				"bytes", ww.BytesWritten(), "ms", time.Since(start).Milliseconds(),
				"request_id", middleware.GetReqID(r.Context()))
			if m != nil {
				m.HTTPRequests.WithLabelValues(face(r.URL.Path), strconv.Itoa(status/100)+"xx").Inc()
			}
		})
	}
}

func face(path string) string {
	p := strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		p = p[:i]
	}
	switch p {
	case "v1", "api", "graphql", "julep", "mcp", "admin", "healthz", "readyz", "metrics", ".well-known":
		return p
	case "", "assets":
		return "console"
	}
	return "other"
}

// recoverer turns a panic in a handler into a 500 and a logged stack, and keeps the node up.
func recoverer(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					logger.Error("panic in handler", "method", r.Method, "path", r.URL.Path, "panic", v,
						"stack", string(debug.Stack()), "request_id", middleware.GetReqID(r.Context()))
					WriteJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]string{"message": "internal error", "type": "server_error"}})
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}
