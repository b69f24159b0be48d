// Command contrail is the Contrail platform: `contrail serve` runs a node; the other commands are clients of a
// running node over HTTP (CONTRAIL_URL, CONTRAIL_API_KEY), except `bench`, which measures the log in-process.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time (-ldflags "-X main.version=..."; the Makefile does); without it the module version
// and VCS revision the Go toolchain stamped into the binary are shown.
var version string

func main() {
	// SIGHUP too: a closed terminal, or the end of a pipeline, stops a node as Ctrl-C does (serve then shuts down
	// cleanly instead of dying mid-write).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	root := newRoot()
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return
	}
	var ee exitError
	if errors.As(err, &ee) {
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "contrail:", err)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(os.Stderr, "Usage: %s\nRun '%s --help' for more.\n", cmd.UseLine(), cmd.CommandPath())
		os.Exit(2)
	}
	os.Exit(1)
}

// usageError is a command called the wrong way (arguments, flags): the usage line follows the message.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// checkUsage makes every wrong call of every command a usageError: argument counts, unknown flags and bad flag
// values, unknown subcommands. A command that only groups others prints its help when called alone.
func checkUsage(c *cobra.Command) {
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	switch {
	case c.Args != nil:
		args := c.Args
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError{err}
			}
			return nil
		}
	case c.HasSubCommands() && c.Run == nil && c.RunE == nil:
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())}
			}
			return cmd.Help()
		}
	}
	for _, sub := range c.Commands() {
		checkUsage(sub)
	}
}

// buildVersion is the version `contrail --version` prints.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	v := version
	if v == "" && ok {
		v = bi.Main.Version
		if v == "" || v == "(devel)" {
			v = "devel"
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v += " " + s.Value[:12]
				}
				if s.Key == "vcs.modified" && s.Value == "true" {
					v += "+dirty"
				}
			}
		}
	}
	if v == "" {
		v = "unknown"
	}
	if ok {
		v += " (" + bi.GoVersion + ")"
	}
	return v
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
		Version:       buildVersion(),
	}
	root.SetVersionTemplate("contrail {{.Version}}\n")
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
		newExecutionsCmd(),
	)
	checkUsage(root)
	return root
}

// env returns the value of an environment variable or a default: flags take their defaults from their env twins.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
