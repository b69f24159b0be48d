// Command contrail is the Contrail platform: `contrail serve` runs a node; the other commands are clients of a
// running node over HTTP (CONTRAIL_URL, CONTRAIL_API_KEY), except `bench`, which measures the log in-process.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot()
	if err := root.ExecuteContext(ctx); err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "contrail:", err)
		os.Exit(1)
	}
}

// exitError ends the process with a code after the message was already printed.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "contrail",
		Short:         "Contrail: a self-hosted agent platform on NATS JetStream",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newServeCmd(),
		newProjectionsCmd(),
		newDLQCmd(),
		newAccountsCmd(),
		newKeysCmd(),
		newBenchCmd(),
		newHealthCmd(),
		newReplayCmd(),
		newAgentsCmd(),
		newChatCmd(),
		newAskCmd(),
	)
	return root
}

// env returns the value of an environment variable or a default: flags take their defaults from their env twins.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
