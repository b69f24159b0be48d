package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/contrailhq/contrail/internal/bench"
)

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure the platform against raw JetStream in the same run"}
	cmd.AddCommand(newBenchEventsCmd(), newBenchStartupCmd(), newBenchRunsCmd(), newBenchSessionsCmd(), newBenchCodeShotCmd())
	return cmd
}

func newBenchEventsCmd() *cobra.Command {
	var o bench.EventsOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "events",
		Short: "The log: appends, batched appends, projection apply and loads, each beside raw JetStream",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "contrail-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			o.Dir = dir
			rep, err := bench.Events(cmd.Context(), o, func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "measuring", s, "...") })
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			return rep.Print(cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&o.N, "n", 20000, "events per measurement")
	cmd.Flags().IntVar(&o.Payload, "payload", 200, "bytes of text in each event")
	cmd.Flags().IntVar(&o.Loads, "loads", 2000, "aggregates loaded for the latency figures")
	cmd.Flags().BoolVar(&o.SyncAlways, "sync-always", false, "fsync every write, as --nats-sync-always does")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newBenchCodeShotCmd() *cobra.Command {
	var o bench.CodeShotOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "codeshot",
		Short: "What the platform adds to a Code Shot query beyond the model and the func",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "contrail-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			o.Dir = dir
			rep, err := bench.CodeShot(cmd.Context(), o, func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "measuring", s, "...") })
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			return rep.Print(cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&o.Queries, "queries", 200, "queries each way")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
