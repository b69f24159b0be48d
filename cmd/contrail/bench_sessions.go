package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/contrailhq/contrail/internal/bench"
)

func newBenchSessionsCmd() *cobra.Command {
	var o bench.SessionsOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "Sessions: post → reply visible on the subscription, p50/p99 at 1, 10 and 100 concurrent sessions, and events per query",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "contrail-bench-sessions-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			o.Dir = dir
			rep, err := bench.Sessions(cmd.Context(), o, func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "measuring", s, "...") })
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			return rep.Print(cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntSliceVar(&o.Concurrency, "sessions", []int{1, 10, 100}, "numbers of concurrent sessions to measure")
	cmd.Flags().IntVar(&o.Messages, "messages", 20, "queries each session posts, one after the other's reply")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
