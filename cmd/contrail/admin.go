package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/deadletter"
	"github.com/contrailhq/contrail/internal/limits"
	"github.com/contrailhq/contrail/projections"
)

func newProjectionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "projections", Short: "Read models: status and rebuilds"}
	status := &cobra.Command{Use: "status", Short: "Show each projection's generation, applied sequence and lag", Args: cobra.NoArgs}
	statusClient := clientFlags(status)
	asJSON := status.Flags().Bool("json", false, "print JSON")
	status.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := statusClient()
		if err != nil {
			return err
		}
		var out struct {
			Projections []projections.Status `json:"projections"`
		}
		if err := c.do(cmd.Context(), "GET", "/admin/projections", nil, &out); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(cmd.OutOrStdout(), out.Projections)
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tGENERATION\tAPPLIED\tPENDING\tCAUGHT UP\tLEADER")
		for _, p := range out.Projections {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%v\t%s\n", p.Name, p.Generation, p.Applied, p.Pending, p.CaughtUp, p.Leader)
		}
		return tw.Flush()
	}
	rebuild := &cobra.Command{Use: "rebuild NAME", Short: "Fold the whole log into a fresh bucket and swap it in", Args: cobra.ExactArgs(1)}
	rebuildClient := clientFlags(rebuild)
	rebuild.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := rebuildClient()
		if err != nil {
			return err
		}
		resp, err := c.send(cmd.Context(), "POST", "/admin/projections/"+url.PathEscape(args[0])+"/rebuild", nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var bar *progressbar.ProgressBar
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var line struct {
				Done   uint64              `json:"done"`
				Total  uint64              `json:"total"`
				Status *projections.Status `json:"status"`
				Error  string              `json:"error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				return fmt.Errorf("rebuild: unreadable progress %q", sc.Text())
			}
			switch {
			case line.Error != "":
				return fmt.Errorf("rebuild %s: %s", args[0], line.Error)
			case line.Status != nil:
				if bar != nil {
					_ = bar.Finish()
				}
				fmt.Fprintf(cmd.OutOrStdout(), "\nrebuilt %s: generation %d, applied up to sequence %d\n",
					line.Status.Name, line.Status.Generation, line.Status.Applied)
				return nil
			default:
				if bar == nil {
					bar = progressbar.NewOptions64(int64(line.Total), progressbar.OptionSetWriter(cmd.ErrOrStderr()),
						progressbar.OptionSetDescription("rebuild "+args[0]), progressbar.OptionShowCount(),
						progressbar.OptionThrottle(100*time.Millisecond))
				}
				bar.ChangeMax64(int64(line.Total))
				_ = bar.Set64(int64(line.Done))
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("rebuild %s: %w", args[0], err)
		}
		return fmt.Errorf("rebuild %s: the server ended the stream without a result", args[0])
	}
	cmd.AddCommand(status, rebuild)
	return cmd
}

func newDLQCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "dlq", Short: "Events handlers gave up on: list and re-drive"}
	list := &cobra.Command{Use: "list", Short: "List the dead-letter queue", Args: cobra.NoArgs}
	listClient := clientFlags(list)
	asJSON := list.Flags().Bool("json", false, "print JSON")
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := listClient()
		if err != nil {
			return err
		}
		var out struct {
			DeadLetters []deadletter.DeadLetter `json:"dead_letters"`
		}
		if err := c.do(cmd.Context(), "GET", "/admin/dlq", nil, &out); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(cmd.OutOrStdout(), out.DeadLetters)
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SEQ\tHANDLER\tEVENT\tTYPE\tAGGREGATE\tDELIVERIES\tREASON")
		for _, d := range out.DeadLetters {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%d\t%s\n", d.Seq, d.Handler, d.EventSeq, d.EventType, d.Aggregate, d.Deliveries, d.Reason)
		}
		return tw.Flush()
	}
	redrive := &cobra.Command{Use: "redrive SEQ...", Short: "Hand dead-lettered events back to their handler", Args: cobra.MinimumNArgs(1)}
	redriveClient := clientFlags(redrive)
	redrive.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := redriveClient()
		if err != nil {
			return err
		}
		for _, seq := range args {
			if err := c.do(cmd.Context(), "POST", "/admin/dlq/"+url.PathEscape(seq)+"/redrive", nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "re-drove %s\n", seq)
		}
		return nil
	}
	cmd.AddCommand(list, redrive)
	return cmd
}

func newAccountsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "accounts", Short: "Accounts (admin)"}
	create := &cobra.Command{Use: "create NAME", Short: "Create an account; prints its API key as the last line", Args: cobra.ExactArgs(1)}
	createClient := clientFlags(create)
	daily := create.Flags().Int("daily-queries", 0, "`N` queries a day (default: the node's, serve --daily-queries)")
	admin := create.Flags().Bool("admin", false, "make it an admin account")
	create.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := createClient()
		if err != nil {
			return err
		}
		var k commands.IssuedKey
		if err := c.do(cmd.Context(), "POST", "/admin/accounts", map[string]any{"name": args[0], "daily_query_limit": *daily, "admin": *admin}, &k); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "account %s created with key %s (shown once, stored only as a hash)\n%s\n", k.AccountID, k.KeyID, k.Key)
		return nil
	}
	list := &cobra.Command{Use: "list", Short: "List accounts with the limits that apply to them", Args: cobra.NoArgs}
	listClient := clientFlags(list)
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := listClient()
		if err != nil {
			return err
		}
		var out struct {
			Accounts []struct {
				projections.AccountView
				EffectiveDailyQueryLimit   int `json:"effective_daily_query_limit"`
				EffectiveRequestsPerMinute int `json:"effective_requests_per_minute"`
			} `json:"accounts"`
		}
		if err := c.do(cmd.Context(), "GET", "/admin/accounts", nil, &out); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tADMIN\tDAILY LIMIT\tREQUESTS/MIN\tKEYS\tCREATED")
		for _, a := range out.Accounts {
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%d\t%s\n", a.ID, a.Name, a.Admin,
				limitText(a.EffectiveDailyQueryLimit, a.DailyQueryLimit > 0), limitText(a.EffectiveRequestsPerMinute, a.RequestsPerMinute > 0),
				len(a.Keys), a.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	}
	limitsCmd := &cobra.Command{Use: "limits ACCOUNT_ID", Short: "Show an account's usage limits, or change them with --daily-queries and --rate",
		Args: cobra.ExactArgs(1)}
	limitsClient := clientFlags(limitsCmd)
	limDaily := limitsCmd.Flags().Int("daily-queries", 0, "`N` queries a day for the account")
	limRate := limitsCmd.Flags().Int("rate", 0, "`N` requests a minute for each of the account's keys")
	limRPM := limitsCmd.Flags().Int("requests-per-minute", 0, "the same as --rate")
	_ = limitsCmd.Flags().MarkHidden("requests-per-minute")
	limitsCmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := limitsClient()
		if err != nil {
			return err
		}
		rate := *limRate
		if rate == 0 {
			rate = *limRPM
		}
		path := "/admin/accounts/" + url.PathEscape(args[0]) + "/limits"
		var u limits.Usage
		if *limDaily == 0 && rate == 0 {
			// No change asked for: show what applies, rather than send a request that changes nothing.
			err = c.do(cmd.Context(), "GET", path, nil, &u)
		} else {
			err = c.do(cmd.Context(), "POST", path, map[string]int{"daily_query_limit": *limDaily, "requests_per_minute": rate}, &u)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "account %s\n  daily queries:    %s, %d used today (UTC)\n  requests/minute:  %s, per key\n",
			u.AccountID, limitText(u.DailyQueryLimit, u.OwnDailyQueryLimit), u.DailyQueriesUsed, limitText(u.RequestsPerMinute, u.OwnRequestsPerMinute))
		return nil
	}
	cmd.AddCommand(create, list, limitsCmd)
	return cmd
}

// limitText shows a limit, saying when it is the platform's default rather than the account's own.
func limitText(n int, own bool) string {
	if own {
		return strconv.Itoa(n)
	}
	return strconv.Itoa(n) + " (default)"
}

func newKeysCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "API keys of your account (or, for an admin, of --account)"}
	var account string
	query := func() string {
		if account == "" {
			return ""
		}
		return "?account=" + url.QueryEscape(account)
	}
	create := &cobra.Command{Use: "create [NAME]", Short: "Issue a key; prints it as the last line", Args: cobra.MaximumNArgs(1)}
	createClient := clientFlags(create)
	create.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := createClient()
		if err != nil {
			return err
		}
		name := ""
		if len(args) == 1 {
			name = args[0]
		}
		var k commands.IssuedKey
		if err := c.do(cmd.Context(), "POST", "/admin/keys"+query(), map[string]string{"name": name}, &k); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "key %s issued for %s (shown once, stored only as a hash)\n%s\n", k.KeyID, k.AccountID, k.Key)
		return nil
	}
	list := &cobra.Command{Use: "list", Short: "List keys (hints only: keys are stored as hashes)", Args: cobra.NoArgs}
	listClient := clientFlags(list)
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := listClient()
		if err != nil {
			return err
		}
		var out struct {
			AccountID string                `json:"account_id"`
			Keys      []projections.KeyView `json:"keys"`
		}
		if err := c.do(cmd.Context(), "GET", "/admin/keys"+query(), nil, &out); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tHINT\tCREATED\tREVOKED")
		for _, k := range out.Keys {
			revoked := ""
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Hint, k.CreatedAt.Format(time.RFC3339), revoked)
		}
		return tw.Flush()
	}
	revoke := &cobra.Command{Use: "revoke KEY_ID", Short: "Revoke a key", Args: cobra.ExactArgs(1)}
	revokeClient := clientFlags(revoke)
	revoke.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := revokeClient()
		if err != nil {
			return err
		}
		if err := c.do(cmd.Context(), "DELETE", "/admin/keys/"+url.PathEscape(args[0])+query(), nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", args[0])
		return nil
	}
	for _, c := range []*cobra.Command{create, list, revoke} {
		c.Flags().StringVar(&account, "account", "", "another account (admin only)")
	}
	rotate := &cobra.Command{Use: "rotate-signing", Short: "Rotate the key that signs agent tokens (admin); the previous key stays published until its tokens expire", Args: cobra.NoArgs}
	rotateClient := clientFlags(rotate)
	rotate.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := rotateClient()
		if err != nil {
			return err
		}
		var rot auth.Rotation
		if err := c.do(cmd.Context(), "POST", "/admin/signing-keys/rotate", nil, &rot); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "agent tokens are now signed with key %s\nkey %s is retired and stays in the JWKS until %s\nkey %s is published for the next rotation\n",
			rot.Current, rot.Retired, rot.RetiredUntil.Format(time.RFC3339), rot.Next)
		return nil
	}
	cmd.AddCommand(create, list, revoke, rotate)
	return cmd
}
