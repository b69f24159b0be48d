package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/contrailhq/contrail/cmd/agents/samples/calc"
	"github.com/contrailhq/contrail/cmd/agents/samples/chart"
	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/platform"
	"github.com/contrailhq/contrail/projections"
)

// sampleAgents are the agents `contrail serve --sample-agents` runs beside the platform, so that a new user can
// chat at once and see routing between them.
var sampleAgents = []struct {
	handle, name, description string
	handler                   func(...agentkit.Option) (http.Handler, error)
}{
	{"genrand", "Random numbers", "Generates random numbers between two bounds.", genrand.Handler},
	{"calc", "Calculator", "Does arithmetic: + - * / ^, parentheses, square roots.", calc.Handler},
	{"chart", "Bar charts", "Draws a bar chart of the numbers in a query, as a PNG image.", chart.Handler},
}

// startSampleAgents serves the sample agents on loopback ports (they speak the agent protocol over real HTTP, and
// verify the platform's tokens against its JWKS like any external agent) and registers them as the admin account's
// published agents, refreshing them when they exist from an earlier run. It returns a function that stops them.
func startSampleAgents(ctx context.Context, p *platform.Platform, logger *slog.Logger) (func(), error) {
	public := p.Config.Public()
	admin := auth.Principal{AccountID: commands.AdminAccountID, Username: "admin"}
	var servers []*http.Server
	stop := func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}
	for _, a := range sampleAgents {
		verifier, err := agentkit.NewVerifier(public+"/.well-known/jwks.json", public)
		if err != nil {
			stop()
			return nil, err
		}
		h, err := a.handler(agentkit.WithVerifier(verifier), agentkit.WithLogger(logger.With("agent", a.handle)))
		if err != nil {
			stop()
			return nil, fmt.Errorf("sample agent %s: %w", a.handle, err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			stop()
			return nil, fmt.Errorf("sample agent %s: %w", a.handle, err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go func() { _ = srv.Serve(ln) }()
		url := "http://" + ln.Addr().String() + "/"
		if err := registerSample(ctx, p, admin, a.handle, a.name, a.description, url); err != nil {
			stop()
			return nil, err
		}
		logger.Info("sample agent ready", "agent", a.handle, "url", url)
	}
	return stop, nil
}

func registerSample(ctx context.Context, p *platform.Platform, admin auth.Principal, handle, name, description, url string) error {
	published := true
	in := commands.AgentInput{Handle: handle, Name: &name, Description: &description, FuncURL: &url, Published: &published}
	_, err := p.RegisterAgent(ctx, admin, in)
	if errs.CodeOf(err) == errs.Conflict {
		// Registered by an earlier run, at another port: point it at this one and read its description again.
		if _, err := p.Commands.Agents.Update(ctx, admin, commands.AgentInput{Handle: handle, FuncURL: &url}); err != nil {
			return fmt.Errorf("sample agent %s: %w", handle, err)
		}
		refreshed, rerr := p.Commands.Agents.Refresh(ctx, admin, handle)
		err = p.Views.ShowsWrite(ctx, refreshed.Appended, rerr, projections.Agents{})
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("sample agent %s: %w", handle, err)
	}
	return err
}
