package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/fixieapi"
)

func newReplayCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "replay", Short: "Replay what really happened, from the log (not the read models)"}
	cmd.AddCommand(newReplaySessionCmd(), newReplayExecutionCmd())
	return cmd
}

func newReplaySessionCmd() *cobra.Command {
	var asJSON, follow bool
	var from uint64
	cmd := &cobra.Command{
		Use:   "session HANDLE",
		Short: "Print a session's timeline: sequence, time, time since the previous event, type and a summary",
		Args:  cobra.ExactArgs(1),
	}
	connect := clientFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := connect()
		if err != nil {
			return err
		}
		q := url.Values{}
		if from > 0 {
			q.Set("from", strconv.FormatUint(from, 10))
		}
		if follow {
			q.Set("follow", "true")
		}
		path := "/api/sessions/" + url.PathEscape(args[0]) + "/events"
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		resp, err := c.send(cmd.Context(), "GET", path, nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return printTimeline(cmd.OutOrStdout(), resp.Body, asJSON, cmd.Context().Err)
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the events as JSON lines")
	cmd.Flags().Uint64Var(&from, "from", 0, "start at this stream sequence")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing events as they are appended")
	return cmd
}

// replayEvent is a line of the events endpoint: an event as /api/sessions shows it, or an error that ended the
// timeline.
type replayEvent struct {
	fixieapi.EventJSON
	Error string `json:"error,omitempty"`
}

// printTimeline reads JSON lines of events and prints them, one line each, as they come (so --follow streams).
// stopped says whether the command was interrupted, which ends a followed timeline without an error.
func printTimeline(w io.Writer, body io.Reader, asJSON bool, stopped func() error) error {
	reg := events.NewRegistry()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var prev time.Time
	if !asJSON {
		fmt.Fprintf(w, "%8s  %-23s  %9s  %-26s  %s\n", "SEQ", "TIME (UTC)", "+SINCE", "TYPE", "SUMMARY")
	}
	for sc.Scan() {
		var e replayEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("read event: %w", err)
		}
		if e.Error != "" {
			return fmt.Errorf("the server stopped the timeline: %s", e.Error)
		}
		if asJSON {
			fmt.Fprintln(w, sc.Text())
			continue
		}
		since := "-"
		if !prev.IsZero() {
			since = "+" + shortDuration(e.Time.Sub(prev))
		}
		prev = e.Time
		fmt.Fprintf(w, "%8d  %-23s  %9s  %-26s  %s\n", e.Sequence, e.Time.UTC().Format("2006-01-02 15:04:05.000"),
			since, e.Type, summary(reg, e))
	}
	if err := sc.Err(); err != nil && stopped() == nil {
		return fmt.Errorf("read timeline: %w", err)
	}
	return nil
}

func shortDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

// summary says in one line what an event did: the domain's description of it (domain/session.Describe), or its
// data for an event this build does not describe.
func summary(reg *events.Registry, e replayEvent) string {
	ev, err := reg.Decode(e.Type, e.Data)
	if err == nil {
		// The ID is part of what a summary says: a query's reply ID is derived from its event's ID.
		env := events.Envelope{ID: e.ID, Type: e.Type, Sequence: e.Sequence, Time: e.Time, Version: e.Version,
			Actor: e.Actor, CorrelationID: e.CorrelationID, CausationID: e.CausationID, Data: e.Data, Event: ev}
		if line, ok := session.Describe(env); ok {
			return line
		}
	}
	return clip(compactJSON(e.Data), 100)
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
