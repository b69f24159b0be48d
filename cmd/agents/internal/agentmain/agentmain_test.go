package agentmain

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
	"github.com/contrailhq/contrail/internal/agentproto"
)

func TestRunPrintsItsURLAndServes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, "genrand", []string{"-addr", "127.0.0.1:0"}, w, io.Discard, genrand.Agent()) }()

	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read the first line: %v", err)
	}
	agentURL := strings.TrimSpace(line)
	if !strings.HasPrefix(agentURL, "http://127.0.0.1:") {
		t.Fatalf("first line = %q, want the agent's URL", line)
	}
	md, err := agentproto.NewClient().Metadata(ctx, agentURL, agentproto.Claims{})
	if err != nil || md.BasePrompt != genrand.BasePrompt {
		t.Errorf("Metadata(%s) = %+v, %v", agentURL, md, err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after its context ended = %v, want nil (a clean shutdown)", err)
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"-jwks", "http://127.0.0.1:8080/.well-known/jwks.json"}, "needs both the JWKS URL and the audience"},
		{[]string{"-audience", "http://127.0.0.1:8080"}, "needs both the JWKS URL and the audience"},
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"-addr", "256.0.0.1:1"}, "listen"},
	}
	for _, tt := range tests {
		err := Run(context.Background(), "genrand", tt.args, io.Discard, io.Discard, genrand.Agent())
		if err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Run(%q) = %v, want an error saying %q", tt.args, err, tt.says)
		}
		if errors.Is(err, context.Canceled) {
			t.Errorf("Run(%q) ran instead of refusing", tt.args)
		}
	}
}
