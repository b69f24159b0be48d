package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newExecutionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "executions", Short: "List, read, cancel and resume task executions (Julep's /executions)"}
	cmd.AddCommand(newExecutionsListCmd(), newExecutionsGetCmd(), newExecutionsCancelCmd(), newExecutionsResumeCmd())
	return cmd
}

// executionJSON is an execution as /julep answers it.
type executionJSON struct {
	ID              string          `json:"id"`
	TaskID          string          `json:"task_id"`
	Status          string          `json:"status"`
	Input           json.RawMessage `json:"input"`
	Output          json.RawMessage `json:"output"`
	Error           *string         `json:"error"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
	TransitionCount int             `json:"transition_count"`
}

func newExecutionsListCmd() *cobra.Command {
	var limit int
	cmd := &cobra.Command{Use: "list TASK_ID", Short: "List a task's executions, newest first", Args: cobra.ExactArgs(1)}
	connect := clientFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := connect()
		if err != nil {
			return err
		}
		var page struct{ Items []executionJSON }
		q := url.Values{"direction": {"desc"}, "limit": {fmt.Sprint(limit)}}
		if err := c.do(cmd.Context(), "GET", "/julep/tasks/"+url.PathEscape(args[0])+"/executions?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tSTATUS\tTRANSITIONS\tCREATED (UTC)\tTOOK")
		for _, x := range page.Items {
			took := "-"
			if terminal(x.Status) {
				took = shortDuration(x.UpdatedAt.Sub(x.CreatedAt))
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", x.ID, x.Status, x.TransitionCount, x.CreatedAt.UTC().Format("2006-01-02 15:04:05"), took)
		}
		return w.Flush()
	}
	cmd.Flags().IntVar(&limit, "limit", 100, "how many (1-999)")
	return cmd
}

func terminal(status string) bool {
	return status == "succeeded" || status == "failed" || status == "cancelled"
}

func newExecutionsGetCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "get ID", Short: "Print an execution as JSON", Args: cobra.ExactArgs(1)}
	connect := clientFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := connect()
		if err != nil {
			return err
		}
		var x map[string]any
		if err := c.do(cmd.Context(), "GET", "/julep/executions/"+url.PathEscape(args[0]), nil, &x); err != nil {
			return err
		}
		return printJSON(cmd.OutOrStdout(), x)
	}
	return cmd
}

func newExecutionsCancelCmd() *cobra.Command {
	var reason string
	cmd := &cobra.Command{Use: "cancel ID", Short: "Cancel an execution", Args: cobra.ExactArgs(1)}
	connect := clientFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := connect()
		if err != nil {
			return err
		}
		var x executionJSON
		body := map[string]string{"status": "cancelled", "reason": reason}
		if err := c.do(cmd.Context(), "PUT", "/julep/executions/"+url.PathEscape(args[0]), body, &x); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", x.ID, x.Status)
		return nil
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (kept as the execution's error)")
	return cmd
}

func newExecutionsResumeCmd() *cobra.Command {
	var input string
	cmd := &cobra.Command{Use: "resume ID", Short: "Answer the step an execution waits on (wait_for_input, a function tool) and let it go on",
		Args: cobra.ExactArgs(1)}
	connect := clientFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if !json.Valid([]byte(input)) {
			return fmt.Errorf("--input must be JSON, e.g. --input '{\"answer\": 42}'")
		}
		c, err := connect()
		if err != nil {
			return err
		}
		var x executionJSON
		body := map[string]any{"status": "running", "input": json.RawMessage(input)}
		if err := c.do(cmd.Context(), "PUT", "/julep/executions/"+url.PathEscape(args[0]), body, &x); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", x.ID, x.Status)
		return nil
	}
	cmd.Flags().StringVar(&input, "input", "{}", "the input, as JSON")
	return cmd
}

// transitionJSON is a transition as /julep answers it.
type transitionJSON struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Output  json.RawMessage `json:"output"`
	Current struct {
		Workflow string `json:"workflow"`
		Step     int    `json:"step"`
		Scope    string `json:"scope_id"`
	} `json:"current"`
	StepLabel *string        `json:"step_label"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt time.Time      `json:"created_at"`
}

func newReplayExecutionCmd() *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "execution ID",
		Short: "Print an execution's timeline from the log: each transition with its time, the time since the previous one, where it happened and its output",
		Args:  cobra.ExactArgs(1),
	}
	connect := clientFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := connect()
		if err != nil {
			return err
		}
		path := "/julep/executions/" + url.PathEscape(args[0]) + "/transitions"
		p := &timelinePrinter{w: cmd.OutOrStdout()}
		p.header()
		if follow {
			resp, err := c.send(cmd.Context(), "GET", path+".stream", nil)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				var ev struct{ Transition transitionJSON }
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					return fmt.Errorf("read transition: %w", err)
				}
				p.print(ev.Transition)
			}
			if err := sc.Err(); err != nil && cmd.Context().Err() == nil {
				return fmt.Errorf("read timeline: %w", err)
			}
			return nil
		}
		var page struct{ Items []transitionJSON }
		if err := c.do(cmd.Context(), "GET", path+"?limit=999", nil, &page); err != nil {
			return err
		}
		for _, tr := range page.Items {
			p.print(tr)
		}
		if len(page.Items) > 0 {
			first, last := page.Items[0].CreatedAt, page.Items[len(page.Items)-1].CreatedAt
			fmt.Fprintf(p.w, "%d transitions in %s\n", len(page.Items), shortDuration(last.Sub(first)))
		}
		return nil
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing transitions until the execution ends")
	return cmd
}

// timelinePrinter prints transitions one line each.
type timelinePrinter struct {
	w    io.Writer
	n    int
	prev time.Time
}

func (p *timelinePrinter) header() {
	fmt.Fprintf(p.w, "%5s  %-23s  %9s  %-13s  %-28s  %s\n", "#", "TIME (UTC)", "+SINCE", "TYPE", "WHERE", "OUTPUT")
}

func (p *timelinePrinter) print(tr transitionJSON) {
	since := "-"
	if !p.prev.IsZero() {
		since = "+" + shortDuration(tr.CreatedAt.Sub(p.prev))
	}
	p.prev = tr.CreatedAt
	where := fmt.Sprintf("%s[%d]", tr.Current.Workflow, tr.Current.Step)
	if tr.StepLabel != nil && *tr.StepLabel != "" {
		where += " " + *tr.StepLabel
	}
	if st, ok := tr.Metadata["step_type"].(string); ok {
		where += " " + strings.TrimSuffix(st, "Step")
	}
	fmt.Fprintf(p.w, "%5d  %-23s  %9s  %-13s  %-28s  %s\n", p.n, tr.CreatedAt.UTC().Format("2006-01-02 15:04:05.000"), since,
		tr.Type, clip(where, 28), clip(compactJSON(tr.Output), 80))
	p.n++
}
