// Package agentmain runs a sample agent as a process: it reads the flags every sample agent shares, listens, prints
// the agent's URL as its first line of output (so that a Makefile or a launcher can read where it is), and serves
// until its context ends.
package agentmain

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
)

// Run parses args, serves agent and returns when ctx ends (after a graceful shutdown) or serving fails.
func Run(ctx context.Context, name string, args []string, stdout, stderr io.Writer, agent agentkit.Agent) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free port)")
	jwksURL := fs.String("jwks", "", "verify the platform's tokens against the JWKS at this URL (e.g. http://127.0.0.1:8080/.well-known/jwks.json)")
	audience := fs.String("audience", "", "the audience the platform's tokens must carry (its API URL); required with -jwks")
	agentID := fs.String("agent-id", "", "refuse tokens issued for another agent than this one: its <username>/<handle> or its agt_ ID")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("agent", name)

	var opts []agentkit.Option
	if *jwksURL != "" || *audience != "" {
		v, err := agentkit.NewVerifier(*jwksURL, *audience, agentkit.WithAgentID(*agentID))
		if err != nil {
			return err
		}
		opts = append(opts, agentkit.WithVerifier(v))
	} else {
		log.Warn("not verifying tokens: any caller is accepted (pass -jwks and -audience to verify)")
	}
	opts = append(opts, agentkit.WithLogger(log))
	handler, err := agentkit.New(agent, opts...)
	if err != nil {
		return fmt.Errorf("agent %s: %w", name, err)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "http://%s\n", ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("serving", "url", "http://"+ln.Addr().String())

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
