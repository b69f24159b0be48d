package openaiapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/openaiwire"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// ProxyPrefix is where Fixie's OpenAI proxy is. An agent built with the Fixie SDK points the openai package at
// <api>/api/openai-proxy/v1 and sends, as its API key, the token of the request it is answering (fixieai's
// agents/openai_proxy.py), so that its model calls go through the platform, for that request's user.
const ProxyPrefix = "/api/openai-proxy"

// ProxyModels answers chat requests (the platform's model router) and says which model answers a model string.
type ProxyModels interface {
	llm.Provider
	Answering(model string) string
}

// Quota counts a user's queries (internal/limits).
type Quota interface {
	CountQuery(ctx context.Context, p auth.Principal) error
}

// ProxyDeps are what the proxy uses.
type ProxyDeps struct {
	Models   ProxyModels
	Embedder embedding.Embedder
	Quota    Quota
	Logger   *slog.Logger
	Now      func() time.Time
}

// Proxy is Fixie's OpenAI proxy: chat completions (streamed or not) through the platform's configured model, the
// offline one included, and embeddings with the platform's embedder. It is called with an agent token only, and
// each request counts as one query of the token's user.
type Proxy struct{ d ProxyDeps }

// NewProxy returns the proxy face.
func NewProxy(d ProxyDeps) *Proxy {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Proxy{d: d}
}

// Prefix implements httpapi.Face.
func (p *Proxy) Prefix() string { return ProxyPrefix }

// AcceptsAgentTokens implements httpapi.AgentFace: agents are who call the proxy.
func (p *Proxy) AcceptsAgentTokens() {}

// WriteError implements httpapi.Face: OpenAI's error object, as on /v1.
func (p *Proxy) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.LogError(p.d.Logger, r, err)
	status, obj := errorFor(err)
	httpapi.SetRetryAfter(w, err)
	httpapi.WriteJSON(w, status, map[string]errorObject{"error": obj})
}

// Routes implements httpapi.Face.
func (p *Proxy) Routes(r chi.Router) {
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		openaiwire.WriteError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "",
			"Invalid method for URL ("+req.Method+" "+req.URL.Path+").")
	})
	r.Post("/v1/chat/completions", p.chat)
	r.Post("/v1/embeddings", p.embeddings)
}

// proxyBodyLimit bounds a request: a long chat with its tools, or 2048 texts to embed.
const proxyBodyLimit = 8 << 20

// begin admits a request: an agent's token, a body within bounds, and a query of the user's quota.
func (p *Proxy) begin(w http.ResponseWriter, r *http.Request) (auth.Principal, []byte, bool) {
	pr, _ := auth.From(r.Context())
	if pr.AgentID == "" {
		p.WriteError(w, r, errs.E(errs.Forbidden, "the OpenAI proxy is for agents: call it with the token the platform "+
			"sent your agent with the request it is answering (the Fixie SDK does so when OPENAI_API_BASE and OPENAI_API_KEY are unset)"))
		return pr, nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, proxyBodyLimit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		p.WriteError(w, r, errs.E(errs.TooLarge, "the request body is larger than %d bytes", proxyBodyLimit))
		return pr, nil, false
	case err != nil:
		p.WriteError(w, r, errs.E(errs.Invalid, "read the request body: %v", err))
		return pr, nil, false
	}
	return pr, body, true
}

// refuse answers a request the wire format refuses, in OpenAI's words.
func (p *Proxy) refuse(w http.ResponseWriter, err error) {
	var rej *openaiwire.Rejection
	if errors.As(err, &rej) {
		openaiwire.WriteError(w, http.StatusBadRequest, "invalid_request_error", "", rej.Param, rej.Message)
		return
	}
	openaiwire.WriteError(w, http.StatusBadRequest, "invalid_request_error", "", "", err.Error())
}

func (p *Proxy) chat(w http.ResponseWriter, r *http.Request) {
	pr, body, ok := p.begin(w, r)
	if !ok {
		return
	}
	req, err := openaiwire.DecodeRequest(body)
	if err != nil {
		p.refuse(w, err)
		return
	}
	if req.N > 1 {
		openaiwire.WriteError(w, http.StatusBadRequest, "invalid_request_error", "", "n",
			"Invalid value for 'n': this server answers with one choice.")
		return
	}
	lreq, err := req.LLM()
	if err != nil {
		p.refuse(w, err)
		return
	}
	if err := p.d.Quota.CountQuery(r.Context(), pr); err != nil {
		p.WriteError(w, r, err)
		return
	}
	// The answer names the model that gives it: "offline" where the offline model answers a bare name.
	a := openaiwire.Answer{ID: events.NewPrefixedID("chatcmpl-"), Model: p.d.Models.Answering(req.Model),
		Created: p.d.Now().Unix(), Fingerprint: "fp_contrail"}
	if !req.Stream {
		resp, err := p.d.Models.Complete(r.Context(), lreq, nil)
		if err != nil {
			p.WriteError(w, r, err)
			return
		}
		openaiwire.WriteJSON(w, http.StatusOK, answered(a, resp).Completion())
		return
	}
	var st *openaiwire.Stream
	start := func(toolCalls bool) {
		st = openaiwire.NewStream(w, a, req.IncludeUsage)
		_ = st.Start(toolCalls)
	}
	resp, err := p.d.Models.Complete(r.Context(), lreq, func(d llm.Delta) {
		if st == nil {
			start(d.ToolCall != nil)
		}
		switch {
		case d.ToolCall != nil:
			_ = st.ToolCall(d.ToolCall.Index, d.ToolCall.ID, d.ToolCall.Name, d.ToolCall.Arguments)
		case d.Text != "":
			_ = st.Text(d.Text)
		}
	})
	switch {
	case err != nil && st == nil:
		p.WriteError(w, r, err)
	case err != nil:
		httpapi.LogError(p.d.Logger, r, err)
		status, obj := errorFor(err)
		_ = st.Fail(status, obj.Type, "", obj.Message)
	default:
		if st == nil {
			start(len(resp.ToolCalls) > 0)
		}
		_ = st.Finish(resp.FinishReason, &resp.Usage)
	}
}

// answered completes an answer with what the model said.
func answered(a openaiwire.Answer, resp llm.Response) openaiwire.Answer {
	if resp.Model != "" {
		a.Model = resp.Model
	}
	a.Text, a.ToolCalls, a.Finish, a.Usage = resp.Text, resp.ToolCalls, resp.FinishReason, &resp.Usage
	return a
}

func (p *Proxy) embeddings(w http.ResponseWriter, r *http.Request) {
	pr, body, ok := p.begin(w, r)
	if !ok {
		return
	}
	req, err := openaiwire.DecodeEmbeddingsRequest(body)
	if err != nil {
		p.refuse(w, err)
		return
	}
	if req.Dimensions != 0 && req.Dimensions != p.d.Embedder.Dim() {
		openaiwire.WriteError(w, http.StatusBadRequest, "invalid_request_error", "", "dimensions",
			"Invalid value for 'dimensions': this server's embedder ("+p.d.Embedder.Name()+") makes vectors of "+
				strconv.Itoa(p.d.Embedder.Dim())+" dimensions.")
		return
	}
	if err := p.d.Quota.CountQuery(r.Context(), pr); err != nil {
		p.WriteError(w, r, err)
		return
	}
	vectors, err := p.d.Embedder.Embed(r.Context(), req.Input)
	if err != nil {
		p.WriteError(w, r, &errs.Error{Code: errs.Unavailable, Message: "the embedder " + p.d.Embedder.Name() + " failed", Err: err})
		return
	}
	n := 0
	for _, s := range req.Input {
		n += tokens.Count(req.Model, s)
	}
	// The list names the embedder that made the vectors, whatever model was asked for.
	openaiwire.WriteJSON(w, http.StatusOK, openaiwire.NewEmbeddingsList(p.d.Embedder.Name(), vectors, req.Base64, n))
}
