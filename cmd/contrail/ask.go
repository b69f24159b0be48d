package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// messageFields are what chat and ask read of a session's message.
const messageFields = `id text type timestamp sentBy { handle } inReplyTo { id } embeds { key contentType uri }`

// chatMessage is a session's message as GraphQL answers it.
type chatMessage struct {
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	SentBy    struct {
		Handle string `json:"handle"`
	} `json:"sentBy"`
	InReplyTo *struct {
		ID string `json:"id"`
	} `json:"inReplyTo"`
	Embeds []struct {
		Key         string `json:"key"`
		ContentType string `json:"contentType"`
		URI         string `json:"uri"`
	} `json:"embeds"`
}

// repliesTo says whether m answers the query with that ID.
func (m chatMessage) repliesTo(id string) bool { return m.InReplyTo != nil && m.InReplyTo.ID == id }

// printEmbeds lists a message's embeds, one a line: the terminal cannot show them, so it says where they are.
func printEmbeds(w io.Writer, m chatMessage) {
	for _, e := range m.Embeds {
		fmt.Fprintf(w, "  #%s (%s): %s\n", e.Key, e.ContentType, e.URI)
	}
}

// newSession opens a session with an agent (handle or ID) and returns its handle.
func (c *client) newSession(ctx context.Context, agent string) (string, error) {
	var out struct {
		CreateSession struct {
			Session struct{ Handle string }
		}
	}
	err := c.graphql(ctx, `mutation($a: String) { createSession(sessionData: {frontendAgentId: $a}) { session { handle } } }`,
		map[string]any{"a": agent}, &out)
	if err != nil {
		return "", fmt.Errorf("open a session with %s: %w", agent, err)
	}
	return out.CreateSession.Session.Handle, nil
}

func newAskCmd() *cobra.Command {
	var agent, session string
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   `ask "QUESTION"`,
		Short: "Ask an agent one question and print its answer (a new session, or --session's)",
		Args:  cobra.ExactArgs(1),
	}
	connect := clientFlags(cmd)
	cmd.Flags().StringVar(&agent, "agent", "fixie", "the agent a new session asks")
	cmd.Flags().StringVar(&session, "session", "", "ask in this session (its agent answers, with the session's history)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole reply message as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for the answer (at most 5m)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := connect()
		if err != nil {
			return err
		}
		if timeout < time.Second || timeout > 5*time.Minute {
			return fmt.Errorf("--timeout %s: it must be between 1s and 5m", timeout)
		}
		ctx := cmd.Context()
		if session == "" {
			if session, err = c.newSession(ctx, agent); err != nil {
				return err
			}
		}
		var out struct {
			SendSessionMessage struct {
				Message  chatMessage
				Response *chatMessage
				TimedOut bool
			}
		}
		// A failed answer comes both as the reply and as an error entry: the reply says it.
		gqlErrs, err := c.graphqlPartial(ctx, `mutation($s: String!, $t: String!, $w: Int) { sendSessionMessage(messageData: {session: $s, text: $t},
			wait: true, timeoutSeconds: $w) { message { `+messageFields+` } response { `+messageFields+` } timedOut } }`,
			map[string]any{"s": session, "t": args[0], "w": int(timeout / time.Second)}, &out)
		if err != nil {
			return fmt.Errorf("ask in session %s: %w", session, err)
		}
		reply := out.SendSessionMessage.Response
		if reply == nil && len(gqlErrs) > 0 {
			return fmt.Errorf("ask in session %s: %s", session, strings.Join(gqlErrs, "; "))
		}
		if reply == nil {
			return fmt.Errorf("no answer within %s; it will still come to session %s (`contrail replay session %s` shows how far it got)",
				timeout, session, session)
		}
		failed := reply.Type == "error"
		switch {
		case asJSON:
			if err := printJSON(cmd.OutOrStdout(), struct {
				Session string `json:"session"`
				chatMessage
			}{session, *reply}); err != nil {
				return err
			}
		case failed:
			fmt.Fprintf(cmd.ErrOrStderr(), "contrail: no answer from %s (session %s): %s\n", reply.SentBy.Handle, session, reply.Text)
		default:
			fmt.Fprintln(cmd.OutOrStdout(), reply.Text)
			printEmbeds(cmd.OutOrStdout(), *reply)
		}
		if failed {
			return exitError{code: 1}
		}
		return nil
	}
	return cmd
}
