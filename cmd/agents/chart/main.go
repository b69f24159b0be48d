// Command chart runs the chart sample agent (see cmd/agents/samples/chart). It prints the URL it listens on as its first
// line of output.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/contrailhq/contrail/cmd/agents/internal/agentmain"
	"github.com/contrailhq/contrail/cmd/agents/samples/chart"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := agentmain.Run(ctx, "chart", os.Args[1:], os.Stdout, os.Stderr, chart.Agent()); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}
