package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/contrailhq/contrail/internal/bench"
)

func newBenchRunsCmd() *cobra.Command {
	var o bench.RunsOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "Assistants runs: create -> completed overhead, time to the first SSE byte, runs/s with many threads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "contrail-bench-runs-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			o.Dir = dir
			rep, err := bench.Runs(cmd.Context(), o, func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "measuring", s, "...") })
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			return rep.Print(cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&o.Runs, "runs", 200, "runs one after another for the latency figures")
	cmd.Flags().IntVar(&o.Threads, "threads", 100, "threads running at once for the throughput figure")
	cmd.Flags().DurationVar(&o.Duration, "duration", 10*time.Second, "how long the throughput figure is measured")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
