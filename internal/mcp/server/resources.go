package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/workflow"
)

// The resources' URIs: contrail://sessions/{session} is a session's transcript, and
// contrail://executions/{execution}/transitions an execution's transitions.
const (
	sessionURIPrefix   = "contrail://sessions/"
	executionURIPrefix = "contrail://executions/"
	transitionsSuffix  = "/transitions"
)

func (f *Face) addResources(s *mcp.Server, p auth.Principal) {
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "session", Title: "Session transcript", MIMEType: "application/json",
		URITemplate: sessionURIPrefix + "{session}",
		Description: "A session's messages in order: the queries, the agents' answers and failures. An agent's tool names its session."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return f.transcript(ctx, p, req.Params.URI)
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "execution-transitions", Title: "Execution transitions", MIMEType: "application/json",
		URITemplate: executionURIPrefix + "{execution}" + transitionsSuffix,
		Description: "A task execution's transitions in order, with the status it is in. A task's tool names its execution."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return f.transitions(ctx, p, req.Params.URI)
		})
}

type transcriptMessage struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	SentBy    string    `json:"sent_by"`
	Text      string    `json:"text"`
	InReplyTo string    `json:"in_reply_to,omitempty"`
	Time      time.Time `json:"time"`
}

// transcript reads one of the caller's sessions; another account's is not found, as a missing one is.
func (f *Face) transcript(ctx context.Context, p auth.Principal, uri string) (*mcp.ReadResourceResult, error) {
	id, ok := strings.CutPrefix(uri, sessionURIPrefix)
	if !ok || ids.Check("session", ids.Session, id) != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	s, _, err := f.d.Sessions.Get(ctx, p, id)
	if errs.CodeOf(err) == errs.NotFound {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, f.resourceError(uri, err)
	}
	out := struct {
		Session  string              `json:"session"`
		Agent    string              `json:"agent"`
		Messages []transcriptMessage `json:"messages"`
	}{Session: s.ID, Agent: s.FrontAgentHandle, Messages: []transcriptMessage{}}
	for _, m := range s.Messages {
		out.Messages = append(out.Messages, transcriptMessage{ID: m.ID, Type: m.Type, SentBy: m.SentBy, Text: m.Text,
			InReplyTo: m.InReplyTo, Time: m.Time})
	}
	return jsonResource(uri, out)
}

// transitions reads one of the caller's executions' transitions.
func (f *Face) transitions(ctx context.Context, p auth.Principal, uri string) (*mcp.ReadResourceResult, error) {
	rest, ok := strings.CutPrefix(uri, executionURIPrefix)
	id, ok2 := strings.CutSuffix(rest, transitionsSuffix)
	if !ok || !ok2 || !ids.IsUUID(id) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	x, _, err := f.d.Executions.Get(ctx, p, id)
	if errs.CodeOf(err) == errs.NotFound {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, f.resourceError(uri, err)
	}
	hist, _, err := f.d.Store.LoadLatest(ctx, events.Ref{Type: execution.Aggregate, ID: events.JulepAggregateID(p.AccountID, id)})
	if err != nil {
		return nil, f.resourceError(uri, err)
	}
	out := struct {
		Execution   string                `json:"execution"`
		Status      string                `json:"status"`
		Transitions []workflow.Transition `json:"transitions"`
	}{Execution: x.ID, Status: string(x.Status), Transitions: []workflow.Transition{}}
	for _, e := range hist {
		d, ok := e.Event.(events.ExecutionTransitioned)
		if !ok {
			continue
		}
		if tr, err := execution.DecodeTransition(d.Transition); err == nil {
			out.Transitions = append(out.Transitions, tr)
		}
	}
	return jsonResource(uri, out)
}

func (f *Face) resourceError(uri string, err error) error {
	if errs.CodeOf(err) == errs.Internal {
		f.d.Logger.Error("mcp resource failed", "uri", uri, "err", err)
		return fmt.Errorf("read %s: internal error", uri)
	}
	return fmt.Errorf("read %s: %s", uri, errs.MessageOf(err))
}

func jsonResource(uri string, v any) (*mcp.ReadResourceResult, error) {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(raw)}}}, nil
}
