// Command genrand runs the genrand sample agent (see cmd/agents/samples/genrand). It prints the URL it listens on as its first
// line of output.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/contrailhq/contrail/cmd/agents/internal/agentmain"
	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := agentmain.Run(ctx, "genrand", os.Args[1:], os.Stdout, os.Stderr, genrand.Agent()); err != nil {
		fmt.Fprintln(os.Stderr, "genrand:", err)
		os.Exit(1)
	}
}
