package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newChatCmd() *cobra.Command {
	var agent, session string
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Chat with an agent: replies stream as the agent writes them (Ctrl-C cancels a reply, Ctrl-D quits)",
		Args:  cobra.NoArgs,
	}
	connect := clientFlags(cmd)
	cmd.Flags().StringVar(&agent, "agent", "fixie", "the agent a new session talks to")
	cmd.Flags().StringVar(&session, "session", "", "continue this session instead of opening one")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := connect()
		if err != nil {
			return err
		}
		ch := &chat{c: c, agent: agent, session: session}
		return ch.run(cmd.Context(), os.Stdin, cmd.OutOrStdout())
	}
	return cmd
}

// chat is one terminal chat: a session, the subscription that follows it, and who answers.
type chat struct {
	c       *client
	agent   string // the handle replies are labelled with until one names its sender
	session string
	sub     *subscription
}

// sessionUpdate is one result of the sessionMessages subscription.
type sessionUpdate struct {
	Kind    string       `json:"kind"`
	Message *chatMessage `json:"message"`
	Delta   *struct {
		MessageID string `json:"messageId"`
		InReplyTo string `json:"inReplyTo"`
		Text      string `json:"text"`
	} `json:"delta"`
}

const chatUpdates = `subscription($h: String!) { sessionMessages(handle: $h) { kind message { ` + messageFields + ` }
	delta { messageId inReplyTo text } } }`

func (ch *chat) run(ctx context.Context, in *os.File, out io.Writer) error {
	var history []chatMessage
	var err error
	if ch.session == "" {
		if ch.session, err = ch.c.newSession(ctx, ch.agent); err != nil {
			return err
		}
	} else if history, err = ch.resume(ctx); err != nil {
		return err
	}
	// Follow the session before the first question, so that no piece of its reply is missed.
	ch.sub, err = ch.c.subscribe(ctx, chatUpdates, map[string]any{"h": ch.session})
	if err != nil {
		return err
	}
	defer ch.sub.Close()
	if err := ch.awaitReady(ctx); err != nil {
		return err
	}

	fd := int(in.Fd())
	if !term.IsTerminal(fd) {
		ch.greet(out, history, "")
		return ch.lines(ctx, bufio.NewScanner(in), out)
	}
	state, err := term.MakeRaw(fd)
	if err != nil {
		return fmt.Errorf("put the terminal in raw mode: %w", err)
	}
	defer func() { _ = term.Restore(fd, state) }()
	k := newKeys(in)
	t := k.terminal(fd, out, nil)
	ch.greet(t, history, "Ctrl-C cancels a reply, Ctrl-D quits")
	for {
		line, err := t.ReadLine()
		if errors.Is(err, io.EOF) && k.interrupted() {
			// x/term ends the line on Ctrl-C as on Ctrl-D, and cannot read on after it: a new editor, same history.
			t = k.terminal(fd, out, t.History)
			fmt.Fprintln(t, "^C (Ctrl-D quits)")
			continue
		}
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(t)
			return nil
		}
		if err != nil && !errors.Is(err, term.ErrPasteIndicator) {
			return err
		}
		quit, err := ch.ask(ctx, t, line, k)
		if err != nil || quit {
			return err
		}
	}
}

// lines chats with what is piped in, a question a line, until its end.
func (ch *chat) lines(ctx context.Context, sc *bufio.Scanner, out io.Writer) error {
	for sc.Scan() {
		quit, err := ch.ask(ctx, out, sc.Text(), nil)
		if err != nil || quit {
			return err
		}
	}
	return sc.Err()
}

// resume reads the session given by --session: who answers in it, and its last messages.
func (ch *chat) resume(ctx context.Context) ([]chatMessage, error) {
	var out struct {
		SessionByHandle *struct {
			FrontendAgentID string
			Messages        []chatMessage
		}
	}
	if err := ch.c.graphql(ctx, `query($h: String!) { sessionByHandle(handle: $h) { frontendAgentId messages(first: 1000) { `+messageFields+` } } }`,
		map[string]any{"h": ch.session}, &out); err != nil {
		return nil, fmt.Errorf("read session %s: %w", ch.session, err)
	}
	s := out.SessionByHandle
	if s == nil {
		return nil, fmt.Errorf("no session %s in your account", ch.session)
	}
	var agent struct{ AgentByID *struct{ Handle string } }
	if err := ch.c.graphql(ctx, `query($id: String!) { agentById(agentId: $id) { handle } }`, map[string]any{"id": s.FrontendAgentID}, &agent); err == nil && agent.AgentByID != nil {
		ch.agent = agent.AgentByID.Handle
	}
	return s.Messages, nil
}

// awaitReady waits for the subscription to follow the log: a question posted after it is answered in it.
func (ch *chat) awaitReady(ctx context.Context) error {
	timeout := time.After(30 * time.Second)
	for {
		select {
		case raw, ok := <-ch.sub.Next:
			if !ok {
				return fmt.Errorf("follow session %s: %w", ch.session, ch.subErr())
			}
			if u, err := decodeUpdate(raw); err != nil || u.Kind == "ready" {
				return err
			}
		case <-timeout:
			return fmt.Errorf("follow session %s: the node did not start the subscription within 30s", ch.session)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (ch *chat) subErr() error {
	if err := ch.sub.Err(); err != nil {
		return err
	}
	return errors.New("the node ended the session's updates")
}

func decodeUpdate(raw json.RawMessage) (sessionUpdate, error) {
	var d struct {
		SessionMessages sessionUpdate `json:"sessionMessages"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return sessionUpdate{}, fmt.Errorf("read a session update: %w", err)
	}
	return d.SessionMessages, nil
}

// greet says which session this is and shows the end of its history.
func (ch *chat) greet(w io.Writer, history []chatMessage, keys string) {
	fmt.Fprintf(w, "Session %s with %s. `contrail replay session %s` shows its log.", ch.session, ch.agent, ch.session)
	if keys != "" {
		fmt.Fprintf(w, " %s.", keys)
	}
	fmt.Fprintln(w)
	if len(history) > 10 {
		fmt.Fprintf(w, "(%d earlier messages)\n", len(history)-10)
		history = history[len(history)-10:]
	}
	for _, m := range history {
		who := m.SentBy.Handle
		if m.Type == "query" {
			who = "you"
		}
		fmt.Fprintf(w, "%s> %s\n", who, m.Text)
		printEmbeds(w, m)
	}
}

// ask posts a question and shows its reply as it streams. It reports whether the user quit (Ctrl-D during the
// reply, or the end of the program's context).
func (ch *chat) ask(ctx context.Context, w io.Writer, text string, k *keys) (quit bool, err error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return false, nil
	}
	ch.drain()
	var out struct {
		SendSessionMessage struct{ Message struct{ ID string } }
	}
	if err := ch.c.graphql(ctx, `mutation($s: String!, $t: String!) { sendSessionMessage(messageData: {session: $s, text: $t}) { message { id } } }`,
		map[string]any{"s": ch.session, "t": text}, &out); err != nil {
		if ctx.Err() != nil {
			return true, nil
		}
		fmt.Fprintf(w, "(not sent: %v)\n", err)
		return false, nil
	}
	return ch.reply(ctx, w, out.SendSessionMessage.Message.ID, k)
}

// drain drops what the subscription holds about earlier questions (the rest of a reply that was cancelled).
func (ch *chat) drain() {
	for {
		select {
		case _, ok := <-ch.sub.Next:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// reply shows the answer to the query as it streams, until it is whole, the user cancels it (Ctrl-C) or quits
// (Ctrl-D), or the live connection ends.
func (ch *chat) reply(ctx context.Context, w io.Writer, query string, k *keys) (quit bool, err error) {
	var streamed strings.Builder
	started := false
	var typed <-chan []byte
	if k != nil {
		typed = k.ch
	}
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case raw, ok := <-ch.sub.Next:
			if !ok {
				return true, ch.subErr()
			}
			u, err := decodeUpdate(raw)
			if err != nil {
				return true, err
			}
			switch {
			case u.Kind == "delta" && u.Delta != nil && u.Delta.InReplyTo == query:
				if !started {
					fmt.Fprintf(w, "%s> ", ch.agent)
					started = true
				}
				fmt.Fprint(w, u.Delta.Text)
				streamed.WriteString(u.Delta.Text)
			case u.Kind == "message" && u.Message != nil && u.Message.repliesTo(query):
				m := *u.Message
				ch.agent = m.SentBy.Handle
				switch {
				case m.Type == "error":
					if started {
						fmt.Fprintln(w)
					}
					fmt.Fprintf(w, "(no answer from %s: %s)\n", m.SentBy.Handle, m.Text)
				case !started:
					fmt.Fprintf(w, "%s> %s\n", m.SentBy.Handle, m.Text)
				case strings.HasPrefix(m.Text, streamed.String()):
					fmt.Fprintln(w, m.Text[streamed.Len():])
				default: // the reply as recorded is not what streamed: show it whole
					fmt.Fprintf(w, "\n%s> %s\n", m.SentBy.Handle, m.Text)
				}
				printEmbeds(w, m)
				return false, nil
			}
		case b, ok := <-typed:
			if !ok {
				return true, nil
			}
			i := bytes.IndexAny(b, "\x03\x04")
			if i < 0 {
				k.pending = append(k.pending, b...) // typed ahead: the next prompt gets it
				continue
			}
			if started {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "^C reply cancelled. %s may still finish it: `contrail replay session %s` will show it.\n", ch.agent, ch.session)
			return b[i] == 4, nil
		}
	}
}

// keys reads the terminal in one goroutine and hands what is typed to the line editor at the prompt, and to the
// reply loop (which watches for Ctrl-C and Ctrl-D) while a reply streams.
type keys struct {
	ch      chan []byte
	pending []byte // typed but not yet read by the line editor
	last    []byte // what the line editor read last
}

func newKeys(r io.Reader) *keys {
	k := &keys{ch: make(chan []byte, 64)}
	go func() {
		defer close(k.ch)
		for {
			buf := make([]byte, 256)
			n, err := r.Read(buf)
			if n > 0 {
				k.ch <- buf[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	return k
}

// Read is the line editor's input.
func (k *keys) Read(p []byte) (int, error) {
	if len(k.pending) == 0 {
		b, ok := <-k.ch
		if !ok {
			return 0, io.EOF
		}
		k.pending = b
	}
	n := copy(p, k.pending)
	k.last, k.pending = k.pending[:n], k.pending[n:]
	return n, nil
}

// interrupted says whether the line editor's last read held Ctrl-C: x/term reports Ctrl-C and Ctrl-D alike.
func (k *keys) interrupted() bool { return bytes.IndexByte(k.last, 3) >= 0 }

// terminal is a line editor (arrows, history, Ctrl-A/E/K/U/W) over the keys, writing to out.
func (k *keys) terminal(fd int, out io.Writer, history term.History) *term.Terminal {
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{k, out}, "you> ")
	if history != nil {
		t.History = history
	}
	if w, h, err := term.GetSize(fd); err == nil {
		_ = t.SetSize(w, h)
	}
	return t
}
