// Command calc runs the calc sample agent (see cmd/agents/samples/calc). It prints the URL it listens on as its first
// line of output.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/contrailhq/contrail/cmd/agents/internal/agentmain"
	"github.com/contrailhq/contrail/cmd/agents/samples/calc"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := agentmain.Run(ctx, "calc", os.Args[1:], os.Stdout, os.Stderr, calc.Agent()); err != nil {
		fmt.Fprintln(os.Stderr, "calc:", err)
		os.Exit(1)
	}
}
