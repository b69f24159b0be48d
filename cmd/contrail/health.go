package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

// newHealthCmd checks a node's readiness: for container health checks, where no curl is at hand.
func newHealthCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "health", Short: "Exit 0 when the node at --url is ready, 1 otherwise", Args: cobra.NoArgs}
	url := cmd.Flags().String("url", env("CONTRAIL_URL", "http://127.0.0.1:8080"), "the node to check (CONTRAIL_URL)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c := &http.Client{Timeout: 3 * time.Second}
		resp, err := c.Get(*url + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("not ready: %s", resp.Status)
		}
		fmt.Fprintln(cmd.OutOrStdout(), "ready")
		return nil
	}
	return cmd
}
